"""``mcpgen docs`` pages in a real browser: headless Chromium opens each page from
``file://`` with the network blocked by the page's own policy.

How the browser is driven: one ``chromium --headless --dump-dom`` run per page, with
``--enable-logging=stderr --v=0``, which prints every console message of the page to
stderr as ``INFO:CONSOLE…] "text", source: URL``; a second run takes a screenshot.
The page's one script (its own, allowed by hash) logs nothing, so any console message
at all (an error, a blocked fetch or script reported by the Content-Security-Policy)
fails the test; a control page that logs and
tries to fetch proves the harness sees such messages. This needs nothing but the
Debian ``chromium`` package (no driver, no websocket client). Skipped, with the
reason, when ``chromium`` is not installed (``.ci/run`` installs it).

Measurements (layout at a phone's width, axe-core's accessibility rules) run a probe
script in a copy of the page without its policy, inside an iframe of the wanted width
(headless Chromium's window is never narrower than 500 px); the probe reports one
console line ``PROBE {json}``. axe-core comes from ``node_modules/axe-core`` (or the
file ``MCPGEN_AXE_CORE`` names); those checks skip, with the reason, without it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from test_injection import NASTY, _hostile_spec, spec_text

from mcpgen.cli import main

ROOT = Path(__file__).resolve().parents[3]
WEATHER = ROOT / "examples" / "weather" / "tools.yaml"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (Debian package `chromium`; .ci/run "
    "installs it): the browser checks of mcpgen docs cannot run",
)

_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-default-apps",
    "--mute-audio",
)
_CONSOLE = re.compile(r":CONSOLE[^\]]*\] (.*)")
_PROBE = re.compile(r'"PROBE (.*)", source:')
AXE = next(
    (
        path
        for path in (
            Path(os.environ.get("MCPGEN_AXE_CORE", "/nonexistent")),
            ROOT / "node_modules" / "axe-core" / "axe.min.js",
        )
        if path.is_file()
    ),
    None,
)
# What the probe measures: the page's width against the viewport's, every name that
# wraps (a name in a field table, the contents or a heading), and axe-core's verdict.
PROBE_JS = """(function () {
  var r = {width: window.innerWidth, scrollWidth: document.documentElement.scrollWidth,
           broken: [], mainTop: 0};
  document.querySelectorAll("td.name code, .toc code, h3 code").forEach(function (c) {
    if (c.getClientRects().length > 1) r.broken.push(c.textContent);
  });
  var main = document.querySelector("main");
  r.mainTop = Math.round(main.getBoundingClientRect().top + window.scrollY);
  function done() { console.log("PROBE " + JSON.stringify(r)); }
  if (!window.axe) return done();
  axe.run(document, {resultTypes: ["violations"]}).then(function (res) {
    r.axe = res.violations.map(function (v) {
      return {id: v.id, impact: v.impact, nodes: v.nodes.map(function (n) { return n.html; })};
    });
    done();
  });
})();"""

HOSTILE = """Find things. <script>console.error('pwned-script')</script>

<img src=x onerror="console.error('pwned-onerror')">
[click me](javascript:console.error('pwned-link'))
[data link](data:text/html,<script>console.error('pwned-data')</script>)
<a href="javascript:alert(1)" onclick="alert(2)">raw link</a>
<iframe src="https://example.com/"></iframe><style>body{display:none}</style>
![tracker](https://tracker.example/pixel.png)
<svg onload="console.error('pwned-svg')"></svg>
"""


def _browser(tmp_path: Path, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    assert CHROMIUM is not None
    return subprocess.run(
        [
            CHROMIUM,
            *_FLAGS,
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            *extra,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def _load(tmp_path: Path, page: Path) -> tuple[str, list[str]]:
    """The rendered DOM of ``page`` and every console message it produced."""
    done = _browser(tmp_path, page.resolve().as_uri(), "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, _CONSOLE.findall(done.stderr)


def _probe(
    tmp_path: Path, page: Path, width: int, *, axe: bool = False, dark: bool = False
) -> dict[str, Any]:
    """Run ``PROBE_JS`` (after axe-core, with ``axe``) on a copy of ``page`` shown in
    an iframe ``width`` px wide; what it measured."""
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page.read_text())
    scripts = ""
    if axe:
        assert AXE is not None
        scripts += "<script>" + AXE.read_text(encoding="utf-8") + "</script>"
    scripts += "<script>" + PROBE_JS + "</script>"
    copy = tmp_path / f"probe-{width}-{page.parent.name}.html"
    copy.write_text(text.replace("</body>", scripts + "</body>"), encoding="utf-8")
    frame = tmp_path / f"frame-{width}-{page.parent.name}-{dark}.html"
    frame.write_text(
        f'<!DOCTYPE html><body style="margin:0"><iframe src="{copy.name}" width="{width}" '
        'height="900" style="border:0"></iframe></body>',
        encoding="utf-8",
    )
    extra = ["--blink-settings=preferredColorScheme=0"] if dark else []  # 0: dark
    done = _browser(
        tmp_path, frame.resolve().as_uri(), "--dump-dom", "--virtual-time-budget=60000", *extra
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = _PROBE.search(done.stderr)
    assert found is not None, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(found.group(1))
    return result


def _screenshot(tmp_path: Path, page: Path, name: str) -> Path:
    shot = tmp_path / name
    done = _browser(
        tmp_path,
        page.resolve().as_uri(),
        f"--screenshot={shot}",
        "--window-size=1280,2000",
        "--hide-scrollbars",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000  # a rendered page, not a blank one
    return shot


class _Dom(HTMLParser):
    """What the checks need of a rendered DOM."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.tags: list[str] = []
        self.handlers: list[tuple[str, str]] = []
        self.urls: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name == "id" and value is not None:
                self.ids.append(value)
            if name.startswith("on"):
                self.handlers.append((tag, name))
            if name in ("href", "src", "action", "formaction", "xlink:href") and value:
                self.urls.append((tag, name, value))


def _parse(dom: str) -> _Dom:
    parser = _Dom()
    parser.feed(dom)
    return parser


def _docs(spec: Path, out: Path, *args: str) -> Path:
    result = CliRunner().invoke(main, ["docs", str(spec), "-o", str(out), *args])
    assert result.exit_code == 0, result.output
    return out / "index.html"


def test_harness_sees_console_messages_and_blocked_fetches(tmp_path: Path) -> None:
    control = tmp_path / "control.html"
    control.write_text(
        '<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="default-src '
        "'none'; script-src 'unsafe-inline'\"><p>control</p>"
        "<script>console.error('control-error')</script><img src=\"https://example.invalid/a.png\">",
        encoding="utf-8",
    )
    dom, console = _load(tmp_path, control)
    assert "control" in dom
    assert any("control-error" in line for line in console), console
    assert any("Content Security Policy" in line for line in console), console


def test_weather_page_in_the_browser(tmp_path: Path) -> None:
    page = _docs(WEATHER, tmp_path / "site")
    dom, console = _load(tmp_path, page)
    assert console == []
    parsed = _parse(dom)
    spec = yaml.safe_load(WEATHER.read_text(encoding="utf-8"))
    for tool in spec["tools"]:
        assert tool["name"] in parsed.ids  # a section per tool, deep-linkable by its name
    assert "type:Day" in parsed.ids and "type:Region" in parsed.ids
    assert parsed.tags.count("script") == 1 and parsed.handlers == []  # the page's own
    assert '<input type="search" class="filter"' in dom  # it ran: the policy allows it
    # nothing that a browser would fetch: the only URLs are links and this page's anchors
    assert [u for u in parsed.urls if u[1] == "src"] == []
    assert "get_forecast" in dom and "Forecast for a city, one entry per day." in dom
    _screenshot(tmp_path, page, "weather.png")


def test_hostile_description_is_inert(tmp_path: Path) -> None:
    spec = yaml.safe_load(WEATHER.read_text(encoding="utf-8"))
    spec["tools"][0]["description"] = HOSTILE
    spec["tools"][0]["parameters"][0]["description"] = HOSTILE
    spec["server"]["instructions"] = HOSTILE
    spec["types"]["Day"]["description"] = HOSTILE
    # every other string of the spec the page shows, not only descriptions
    evil = "<script>console.error('pwned-name')</script><img src=x onerror=alert(1)>"
    spec["server"]["title"] = evil
    spec["tools"][0]["title"] = evil
    spec["tools"][0]["parameters"][2]["enum"] = [evil, "ok"]
    spec["tools"][0]["parameters"][0]["pattern"] = "^(?:<script>|[a-z]+)$"
    spec["tools"][0]["parameters"].append({"name": "x", "type": "string", "default": evil})
    spec["tools"][0]["meta"] = {evil: evil}
    spec["tools"][0]["icons"] = [
        {"src": "javascript:console.error('pwned-icon')"},
        {"src": "data:image/svg+xml,<svg onload=alert(1)>"},
    ]
    path = tmp_path / "spec" / "tools.yaml"
    path.parent.mkdir()
    shutil.copytree(WEATHER.parent / "schemas", path.parent / "schemas")
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    page = _docs(path, tmp_path / "site")
    dom, console = _load(tmp_path, page)
    assert console == []  # nothing ran, nothing tried to load
    parsed = _parse(dom)
    assert not {"iframe", "svg", "object", "embed"} & set(parsed.tags)
    assert parsed.tags.count("style") == 1  # the page's own stylesheet only
    assert parsed.tags.count("script") == 1  # and its own script only
    assert parsed.handlers == []
    for tag, attribute, url in parsed.urls:
        assert not url.strip().lower().startswith(("javascript:", "data:", "vbscript:")), (tag, url)
        assert attribute == "href", (tag, attribute, url)
    assert "pwned" in dom  # the text is shown, as text
    assert "https://tracker.example/pixel.png" in dom  # the image is a link, not a fetch
    _screenshot(tmp_path, page, "hostile.png")


def test_diff_page_in_the_browser(tmp_path: Path) -> None:
    spec = yaml.safe_load(WEATHER.read_text(encoding="utf-8"))
    spec["tools"][0]["parameters"][1]["maximum"] = 7  # breaking (call)
    del spec["tools"][3]  # report_observation removed: breaking (source)
    spec["tools"].append(
        {"name": "air_quality", "parameters": [{"name": "city", "type": "string"}]}
    )
    path = tmp_path / "new" / "tools.yaml"
    path.parent.mkdir()
    shutil.copytree(WEATHER.parent / "schemas", path.parent / "schemas")
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    page = _docs(path, tmp_path / "site", "--against", str(WEATHER))
    dom, console = _load(tmp_path, page)
    assert console == []
    assert "mcpgen:changes" in _parse(dom).ids
    rows = re.findall(r'<tr class="sev-(\w+)">.*?</tr>', dom, re.DOTALL)
    assert rows[:2] == ["breaking", "breaking"] and "compatible" in rows
    assert "TOOL_REMOVED" in dom and "PARAM_CONSTRAINT_TIGHTENED" in dom and "TOOL_ADDED" in dom
    _screenshot(tmp_path, page, "diff.png")


def test_inline_data_icon_is_shown_and_nothing_else_loads(tmp_path: Path) -> None:
    png = (
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4"
        "nGNgYGD4DwABBAEAcCBlCwAAAABJRU5ErkJggg=="
    )
    spec = {
        "mcpgen": 1,
        "package": "p_mcp",
        "server": {"name": "p", "version": "1"},
        "tools": [
            {
                "name": "ping",
                "parameters": [],
                "icons": [{"src": png}, {"src": "https://example.com/i.png"}],
            }
        ],
    }
    path = tmp_path / "spec" / "tools.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    dom, console = _load(tmp_path, _docs(path, tmp_path / "site"))
    assert console == []  # the data: image is allowed by the page's policy, nothing else loads
    assert [url for _, attribute, url in _parse(dom).urls if attribute == "src"] == [png]


def test_injection_corpus_spec_renders_inert_and_exact(tmp_path: Path) -> None:
    """The generator's injection spec (quotes, template syntax, control and bidi
    characters, astral Unicode) plus HTML in every string: rendered as text, byte for byte."""
    text = NASTY + " <script>console.error('pwned')</script><b onmouseover=alert(1)>x</b>"
    path = tmp_path / "spec" / "tools.yaml"
    path.parent.mkdir()
    path.write_text(spec_text(_hostile_spec("inj_docs", text)), encoding="utf-8")
    dom, console = _load(tmp_path, _docs(path, tmp_path / "site"))
    assert console == []
    parsed = _parse(dom)
    assert parsed.tags.count("script") == 1 and parsed.handlers == []
    assert "emoji 😀🧪👩‍👩‍👧 ñandú Ωμέγα 中文 עברית" in dom
    assert "&lt;script&gt;console.error('pwned')&lt;/script&gt;" in dom


LONG_NAMES = {
    "mcpgen": 1,
    "package": "long_mcp",
    "server": {"name": "long", "version": "1.0.0"},
    "tools": [
        {
            "name": f"issues.update_{index}",
            "description": "Update an issue. " * 12,
            "parameters": [
                {
                    "name": "continue_on_error",
                    "type": "boolean",
                    "default": False,
                    "description": "Keep going after a failure, " * 6,
                },
                {
                    "name": "reason",
                    "type": "string",
                    "maxLength": 200,
                    "pattern": "^[A-Za-z0-9 ,.;:!?()-]{0,200}$",
                    "description": "Why.",
                },
                {"name": "description", "type": "string", "required": False},
                {"name": "labels", "type": "array", "items": {"type": "string"}, "required": False},
            ],
        }
        for index in range(30)
    ],
}


@pytest.mark.parametrize("width", [1400, 390])
def test_names_never_break_and_a_phone_never_scrolls_sideways(tmp_path: Path, width: int) -> None:
    path = tmp_path / "spec" / "tools.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(LONG_NAMES, sort_keys=False), encoding="utf-8")
    measured = _probe(tmp_path, _docs(path, tmp_path / "site"), width)
    assert measured["width"] == width
    assert measured["broken"] == []  # continue_on_error, reason, description: whole
    assert measured["scrollWidth"] <= width  # no sideways scrolling, the rows stack
    if width < 600:  # on a phone the contents fold: the contract starts near the top
        assert measured["mainTop"] < 400, measured["mainTop"]


def _changed_weather(tmp_path: Path) -> Path:
    """The weather page with changes since the example spec (the diff page's spec)."""
    spec = yaml.safe_load(WEATHER.read_text(encoding="utf-8"))
    spec["tools"][0]["parameters"][1]["maximum"] = 7
    del spec["tools"][3]
    path = tmp_path / "new" / "tools.yaml"
    path.parent.mkdir()
    shutil.copytree(WEATHER.parent / "schemas", path.parent / "schemas")
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return _docs(path, tmp_path / "changed", "--against", str(WEATHER))


@pytest.mark.skipif(
    AXE is None,
    reason="axe-core is not in node_modules (npm package axe-core; or set MCPGEN_AXE_CORE "
    "to its axe.min.js): the accessibility checks of mcpgen docs cannot run",
)
@pytest.mark.parametrize(("width", "dark"), [(1280, False), (390, True)])
def test_axe_finds_no_serious_or_critical_violation(tmp_path: Path, width: int, dark: bool) -> None:
    path = tmp_path / "long" / "tools.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(LONG_NAMES, sort_keys=False), encoding="utf-8")
    for page in (
        _docs(WEATHER, tmp_path / "weather"),
        _changed_weather(tmp_path),
        _docs(path, tmp_path / "long-site"),
    ):
        measured = _probe(tmp_path, page, width, axe=True, dark=dark)
        serious = [v for v in measured["axe"] if v["impact"] in ("serious", "critical")]
        assert serious == [], (page, serious)


def test_a_skip_link_comes_first_and_every_anchor_link_has_a_name(tmp_path: Path) -> None:
    dom, console = _load(tmp_path, _docs(WEATHER, tmp_path / "site"))
    assert console == []
    first = re.search(r"<body>\s*(<a [^>]*>[^<]*</a>)", dom)
    assert first is not None
    assert 'href="#mcpgen:main"' in first.group(1) and "Skip to the contract" in first.group(1)
    assert 'id="mcpgen:main"' in dom
    anchors = re.findall(r'<a class="anchor" href="#([^"]+)" aria-label="([^"]+)">#</a>', dom)
    assert len(anchors) >= 6
    labels = [label for _, label in anchors]
    assert len(set(labels)) == len(labels)  # each names what it links to
    assert ("get_forecast", "Link to the tool get_forecast") in anchors
