"""mcpgen benchmarks: one run, every server, one raw-pipe driver.

    .venv/bin/python benchmarks/run.py [--quick] [--rounds R] [--calls N] [--sizes 10,100,1000]

Serves the same ``add(a, b) -> {sum}`` tool (and the mid-size ``profile`` tool)
from (a) the mcpgen-generated server, built from benchmarks/specs/bench.yaml into
a temporary directory, (b) the official SDK's low-level ``Server``, (c) the SDK's
``MCPServer``, (d) FastMCP, (e) a stdlib JSON-RPC loop (the floor), and measures:

- start-up: spawn → ``initialize`` response (2025-11-25 handshake);
- ``tools/call`` round trips, one at a time (median, p99) and 16 in flight
  (throughput), for ``add`` and ``profile``;
- client side: the generated sync/async clients and the SDK ``ClientSession``
  calling the floor server;
- generator: ``mcpgen build`` (subprocess) of specs with 10, 100 and 1000 tools,
  in a fresh directory, then a no-op rebuild, then a rebuild after editing one tool
  (compared byte for byte with a full build); the realistic 300-tool spec;
- HTTP: benchmarks/http_calls.py, the generated server's Streamable HTTP against the
  SDK's and FastMCP's (one call at a time), and benchmarks/http_load.py (h2load, 1 and
  16 in flight, p50/p99, RSS, against a bare ASGI floor) when h2load is installed;
  benchmarks/http_client.py, the generated client's ``.http()`` against the SDK's
  client on the same generated server (1 and 16 in flight, client CPU per call).

Measurements are interleaved: start-ups go round-robin over the servers, and
for calls every server (every client) is live at once and they take turns in
blocks of 100 calls, in a rotated order, so a burst of load from other
processes on a shared machine hits all of them alike; samples are pooled.
Prints tables with ratios to the SDK
low-level server and to the floor, and writes every figure to
benchmarks/results/<UTC timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SERVERS_DIR = HERE / "servers"
sys.path[:0] = [str(HERE), str(SERVERS_DIR)]

# found through the sys.path entries above
import clients
from _profile import ADD_ARGS, PROFILE_ARGS
from driver import RawServer
from genspec import realistic_spec_text, write_spec

PY = sys.executable
PEERS = {"mcp": "2.3.0", "fastmcp": "4.2.3"}
WINDOW = 16  # requests in flight for the throughput figure
TOOL_ARGS = {"add": ADD_ARGS, "profile": PROFILE_ARGS}


# --------------------------------------------------------------------------- statistics


def summary(samples_ns: Sequence[int]) -> dict[str, float]:
    """Median, p90, p99, mean and min in microseconds."""
    ordered = sorted(samples_ns)
    n = len(ordered)

    def pct(q: float) -> float:
        return ordered[min(n - 1, max(0, math.ceil(q * n) - 1))] / 1000

    return {
        "n": n,
        "median_us": statistics.median(ordered) / 1000,
        "p90_us": pct(0.90),
        "p99_us": pct(0.99),
        "mean_us": statistics.fmean(ordered) / 1000,
        "min_us": ordered[0] / 1000,
    }


def seconds_summary(samples: Sequence[float]) -> dict[str, float]:
    return {
        "n": len(samples),
        "median_s": statistics.median(samples),
        "min_s": min(samples),
        "max_s": max(samples),
    }


# --------------------------------------------------------------------------- servers


@dataclass
class ServerSpec:
    key: str
    label: str
    argv: list[str]
    tools: tuple[str, ...] = ("add", "profile")
    note: str = ""
    startup_only: bool = False
    startup_ms: list[float] = field(default_factory=list)
    shutdown_ms: list[float] = field(default_factory=list)
    calls: dict[str, list[int]] = field(default_factory=dict)
    pipelined: list[tuple[int, float]] = field(default_factory=list)  # (calls, seconds)


def server_specs(build_dir: Path, tools_json: Path) -> list[ServerSpec]:
    s = SERVERS_DIR
    return [
        ServerSpec(
            "mcpgen",
            "mcpgen (generated)",
            [PY, "-m", "bench_mcp"],
            note="validates arguments and output (compiled JSON Schema)",
        ),
        ServerSpec(
            "mcpgen_models",
            "mcpgen, impl imports models",
            [PY, "-m", "bench_mcp", "--impl", "mcpgen_impl_models:BenchImpl"],
            note="start-up only: the implementation module imports the generated "
            "pydantic models at run time",
            startup_only=True,
        ),
        ServerSpec(
            "sdk_lowlevel",
            "SDK low-level Server",
            [PY, str(s / "sdk_lowlevel.py"), "--tools", str(tools_json)],
            note="no argument validation (the low-level API does none)",
        ),
        ServerSpec(
            "sdk_mcpserver",
            "SDK MCPServer",
            [PY, str(s / "sdk_mcpserver.py")],
            note="pydantic validation from the function signature",
        ),
        ServerSpec(
            "fastmcp",
            "FastMCP 4.2.3",
            [PY, str(s / "fastmcp_server.py")],
            note="pydantic validation from the function signature",
        ),
        ServerSpec(
            "floor",
            "floor (stdlib loop)",
            [PY, str(s / "floor.py"), "--tools", str(tools_json)],
            note="no validation at all",
        ),
    ]


def measure_startup(spec: ServerSpec, env: dict[str, str], stderr: Path) -> None:
    started = time.perf_counter()
    server = RawServer(spec.argv, env=env, stderr_path=str(stderr))
    server.initialize()
    spec.startup_ms.append((time.perf_counter() - started) * 1000)
    spec.shutdown_ms.append(server.close() * 1000)


def run_servers(
    args: argparse.Namespace, specs: list[ServerSpec], env: dict[str, str], logs: Path
) -> None:
    """Start-ups one at a time, round-robin over the servers; then every server
    live at once, measured in alternating blocks of calls (rotated order)."""
    for spec in specs:  # compile bytecode, fill the page cache; not measured
        measure_startup(spec, env, logs / f"{spec.key}.stderr")
        spec.startup_ms.clear()
        spec.shutdown_ms.clear()
    for i in range(args.startups):
        for spec in _rotated(specs, i):
            measure_startup(spec, env, logs / f"{spec.key}.stderr")
    _progress(f"servers: {args.startups} start-ups each")

    live = [spec for spec in specs if not spec.startup_only]
    conns = {
        spec.key: RawServer(spec.argv, env=env, stderr_path=str(logs / f"{spec.key}.stderr"))
        for spec in live
    }
    next_id = dict.fromkeys(conns, 1)

    def ids(key: str, n: int) -> int:
        first = next_id[key]
        next_id[key] += n
        return first

    try:
        for spec in live:
            server = conns[spec.key]
            server.initialize()
            for tool in spec.tools:
                server.sequential(tool, TOOL_ARGS[tool], args.warmup, ids(spec.key, args.warmup))
            server.pipelined("add", ADD_ARGS, args.warmup, ids(spec.key, args.warmup), WINDOW)
        rounds = max(1, args.calls // args.block)
        for round_no in range(rounds):
            for spec in _rotated(live, round_no):
                server = conns[spec.key]
                for tool in spec.tools:
                    spec.calls.setdefault(tool, []).extend(
                        server.sequential(
                            tool, TOOL_ARGS[tool], args.block, ids(spec.key, args.block)
                        )
                    )
        _progress(f"servers: {rounds} x {args.block} sequential calls per tool each")
        pipe_block = max(WINDOW, args.block * 2)
        for round_no in range(max(1, args.pipelined // pipe_block)):
            for spec in _rotated(live, round_no):
                seconds = conns[spec.key].pipelined(
                    "add", ADD_ARGS, pipe_block, ids(spec.key, pipe_block), WINDOW
                )
                spec.pipelined.append((pipe_block, seconds))
        _progress("servers: pipelined calls done")
    finally:
        for server in conns.values():
            server.close()


def _rotated(items: list[Any], shift: int) -> list[Any]:
    shift %= len(items)
    return items[shift:] + items[:shift]


# --------------------------------------------------------------------------- clients


def run_clients(args: argparse.Namespace, floor_argv: list[str]) -> dict[str, dict[str, list[int]]]:
    samples = clients.run(
        "bench_mcp", floor_argv, calls=args.calls, block=args.block, warmup=args.warmup
    )
    _progress("clients: done")
    return samples


# --------------------------------------------------------------------------- generator


def run_generator(
    args: argparse.Namespace, mcpgen: str, work: Path, env: dict[str, str]
) -> list[dict[str, Any]]:
    rows = []
    for size in args.sizes:
        full_reps = 1 if size >= 1000 else (3 if size >= 100 else 5)
        if args.quick:
            full_reps = 1
        full: list[float] = []
        full_cpu: list[float] = []
        noop: list[float] = []
        noop_cpu: list[float] = []
        incremental: list[float] = []
        identical = False
        out_bytes = 0
        for rep in range(full_reps):
            directory = work / f"gen{size}-{rep}"
            spec = write_spec(directory, size)
            wall, cpu = _timed_build(mcpgen, spec, env)
            full.append(wall)
            full_cpu.append(cpu)
            for _ in range(3 if args.quick else 5):
                wall, cpu = _timed_build(mcpgen, spec, env)
                noop.append(wall)
                noop_cpu.append(cpu)
            out = directory / "build" / f"gen{size}_mcp"
            out_bytes = sum(p.stat().st_size for p in out.rglob("*.py"))
            if rep == 0:  # an edit of one tool, rebuilt over the previous output
                spec.write_text(spec.read_text().replace("(tool 0)", "(tool 0, edited)"))
                wall, cpu = _timed_build(mcpgen, spec, env)
                incremental.append(cpu)
                full_dir = work / f"gen{size}-full"
                edited = write_spec(full_dir, size)
                edited.write_text(spec.read_text())
                _timed_build(mcpgen, edited, env)
                identical = _py_tree(out) == _py_tree(full_dir / "build" / f"gen{size}_mcp")
                shutil.rmtree(full_dir)
            shutil.rmtree(directory)
        rows.append(
            {
                "tools": size,
                "full_build": seconds_summary(full),
                "full_build_cpu": seconds_summary(full_cpu),
                "noop_rebuild": seconds_summary(noop),
                "noop_rebuild_cpu": seconds_summary(noop_cpu),
                "incremental_cpu": seconds_summary(incremental),
                "incremental_identical": identical,
                "generated_bytes": out_bytes,
            }
        )
        _progress(
            f"generator: {size} tools: full {statistics.median(full):.2f} s "
            f"(CPU {statistics.median(full_cpu):.2f} s), no-op {statistics.median(noop):.3f} s"
        )
    return rows


def run_http(args: argparse.Namespace, env: dict[str, str]) -> dict[str, dict[str, float]]:
    """benchmarks/http_calls.py (Streamable HTTP, one call at a time, the generated
    server against the SDK's low-level server and FastMCP), parsed: name → median, p99 ms."""
    import re

    calls = 300 if args.quick else 2000
    done = subprocess.run(
        [PY, str(HERE / "http_calls.py"), "--calls", str(calls)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"http_calls.py failed:\n{done.stdout}{done.stderr}")
    found = re.findall(
        r"^\s+(.+?)\s+median\s+([\d.]+)\s+p99\s+([\d.]+)$", done.stdout, re.MULTILINE
    )
    stats = {name: {"median_ms": float(m), "p99_ms": float(p)} for name, m, p in found}
    _progress(f"http: {stats}")
    return stats


def run_http_load(
    args: argparse.Namespace, env: dict[str, str]
) -> tuple[list[str], list[dict[str, Any]]]:
    """benchmarks/http_load.py (h2load, 1 and 16 in flight, RSS) when h2load is installed;
    without it, a note (the one-client table above is the fallback)."""
    if shutil.which("h2load") is None:
        note = (
            "HTTP under load: h2load is not installed (apt-get install nghttp2-client); "
            "the one-client table above stands in for it"
        )
        return ["", note], []
    requests, rounds = ("2000", "1") if args.quick else ("10000", "3")
    stdout, figures = _script_figures(
        "http_load.py", ["--requests", requests, "--rounds", rounds], env
    )
    results = figures["results"]
    floor, sdk, ours = results["floor"], results["sdk lowlevel"], results["mcpgen"]
    checks = [
        {
            "target": "HTTP 16 in flight ≥ 3× SDK low-level req/s",
            "limit": 3.0,
            "unit": "×",
            "value": ours["c16"]["rps"] / sdk["c16"]["rps"],
        },
        {
            "target": "HTTP 16 in flight ≥ 0.5× the floor's req/s",
            "limit": 0.5,
            "unit": "×",
            "value": ours["c16"]["rps"] / floor["c16"]["rps"],
        },
        {
            "target": "HTTP one at a time ≤ 1.5× the floor's time per call",
            "limit": 1.5,
            "unit": "×",
            "value": floor["c1"]["rps"] / ours["c1"]["rps"],
        },
    ]
    _judge(checks)  # the first two are floors, the last a ceiling
    return [
        "",
        "HTTP under load (benchmarks/http_load.py, h2load)",
        "",
        "```",
        *stdout.splitlines(),
        "```",
    ], checks


def _script_figures(script: str, extra: list[str], env: dict[str, str]) -> tuple[str, Any]:
    """Run ``benchmarks/<script> … --json FILE``: what it printed (shown as it runs) and
    the figures it wrote."""
    figures = Path(tempfile.mkdtemp()) / f"{Path(script).stem}.json"
    done = subprocess.run(
        [PY, str(HERE / script), *extra, "--json", str(figures)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{script} failed:\n{done.stdout}{done.stderr}")
    _progress(done.stdout)
    return done.stdout, json.loads(figures.read_text())


def _judge(checks: list[dict[str, Any]]) -> None:
    """Set each check's ``met``: a target with ≥ is a floor, any other a ceiling."""
    for check in checks:
        higher = "≥" in check["target"]
        check["met"] = (
            check["value"] >= check["limit"] if higher else check["value"] <= check["limit"]
        )


def run_http_client(
    args: argparse.Namespace, env: dict[str, str]
) -> tuple[dict[str, Any], list[str], list[dict[str, Any]]]:
    """benchmarks/http_client.py (the generated HTTP client against the SDK's client on
    the same mcpgen server, 1 and 16 in flight): figures, table lines, targets."""
    calls, rounds = ("400", "1") if args.quick else ("2000", "3")
    stdout, results = _script_figures("http_client.py", ["--calls", calls, "--rounds", rounds], env)
    ours, sdk = results["mcpgen async"], results["sdk Client"]
    checks = [
        {
            "target": f"HTTP client {window} in flight ≥ the SDK client's calls/s",
            "limit": 1.0,
            "unit": "×",
            "value": ours[window]["calls_per_s"] / sdk[window]["calls_per_s"],
        }
        for window in ("1", "16")
    ] + [
        {
            "target": "HTTP client CPU per call ≤ the SDK client's (16 in flight)",
            "limit": 1.0,
            "unit": "×",
            "value": ours["16"]["cpu_us_per_call"] / sdk["16"]["cpu_us_per_call"],
        }
    ]
    _judge(checks)
    lines = ["", "Streamable HTTP clients (benchmarks/http_client.py)", "", "```"]
    return results, [*lines, *stdout.splitlines(), "```"], checks


def print_http_table(stats: dict[str, dict[str, float]]) -> list[str]:
    sdk = stats["sdk lowlevel"]["median_ms"]
    out = [
        "",
        "Streamable HTTP — `add`, one keep-alive client, one call at a time (stateless; ms)",
        "",
        "| server | median ms | p99 ms | × SDK low-level |",
        "|---|---|---|---|",
    ]
    for name, row in stats.items():
        out.append(
            f"| {name} | {row['median_ms']:.2f} | {row['p99_ms']:.2f} "
            f"| {row['median_ms'] / sdk:.2f} |"
        )
    return out


def _py_tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.py"))}


def run_realistic(mcpgen: str, work: Path, env: dict[str, str]) -> dict[str, Any]:
    """The 300-tool spec of ten shapes, 30 of its tools taking and returning a 200-value
    enum written out inline; and the same spec with a plain string there. The
    difference in generated lines is what the enum costs (ideally: once)."""
    row: dict[str, Any] = {"tools": 300}
    for key, enum in (("with_enum", True), ("without_enum", False)):
        directory = work / f"real-{key}"
        directory.mkdir()
        spec = directory / "real.yaml"
        spec.write_text(realistic_spec_text(300, enum=enum), encoding="utf-8")
        wall, cpu = _timed_build(mcpgen, spec, env)
        out = directory / "build" / "real300_mcp"
        files = _py_tree(out)
        row[key] = {
            "full_build_s": wall,
            "full_build_cpu_s": cpu,
            "lines": sum(data.count(b"\n") for data in files.values()),
            "bytes": sum(len(data) for data in files.values()),
        }
        shutil.rmtree(directory)
    _progress(
        f"generator: realistic 300 tools: CPU {row['with_enum']['full_build_cpu_s']:.2f} s, "
        f"{row['with_enum']['lines']:,} lines ({row['without_enum']['lines']:,} without the enum)"
    )
    return row


def _timed_build(mcpgen: str, spec: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one ``mcpgen build`` process. CPU
    time hardly moves with other load on the machine, so growth is judged on it."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [mcpgen, "build", str(spec)], capture_output=True, text=True, env=env, check=False
    )
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"mcpgen build {spec} failed:\n{done.stdout}{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


# --------------------------------------------------------------------------- report


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "versions": {
            name: _version(name) for name in ("mcp", "fastmcp", "pydantic", "mcpgen", "black")
        },
    }


def _git_head() -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True, text=True, check=False
        )
    except OSError:
        return None
    return done.stdout.strip() or None


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _ratio(value: float | None, base: float | None) -> str:
    if value is None or not base:
        return "—"
    return f"{value / base:.2f}×"


def _fmt(value: float | None, digits: int = 0) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def server_rows(specs: list[ServerSpec]) -> list[dict[str, Any]]:
    rows = []
    for spec in specs:
        calls, seconds = map(sum, zip(*spec.pipelined, strict=True)) if spec.pipelined else (0, 0.0)
        rows.append(
            {
                "key": spec.key,
                "label": spec.label,
                "note": spec.note,
                "startup_ms": statistics.median(spec.startup_ms),
                "startup_ms_all": [round(v, 2) for v in spec.startup_ms],
                "shutdown_ms": statistics.median(spec.shutdown_ms),
                "startup_only": spec.startup_only,
                "calls": {tool: summary(samples) for tool, samples in spec.calls.items()},
                "pipelined": {
                    "window": WINDOW,
                    "calls": calls,
                    "seconds": seconds,
                    "calls_per_s": calls / seconds if seconds else None,
                    "us_per_call": seconds / calls * 1e6 if calls else None,
                },
            }
        )
    return rows


def print_server_tables(rows: list[dict[str, Any]]) -> list[str]:
    by_key = {row["key"]: row for row in rows}
    ll, floor = by_key["sdk_lowlevel"], by_key["floor"]
    out = [
        "",
        ("Servers — stdio, one raw-pipe driver, 2025-11-25 handshake (times: lower is better)"),
        "",
    ]
    head = (
        "| server | start-up ms | add p50 µs | add p99 µs | add, 16 in flight, calls/s "
        "| profile p50 µs | profile p99 µs |"
    )
    out += [head, "|" + "---|" * 7]
    for row in rows:
        add, prof = row["calls"].get("add"), row["calls"].get("profile")
        out.append(
            f"| {row['label']} | {_fmt(row['startup_ms'], 1)} "
            f"| {_fmt(add and add['median_us'], 1)} "
            f"| {_fmt(add and add['p99_us'], 1)} | {_fmt(row['pipelined']['calls_per_s'])} "
            f"| {_fmt(prof and prof['median_us'], 1)} | {_fmt(prof and prof['p99_us'], 1)} |"
        )
    out += [
        "",
        (
            "Ratios — each figure ÷ the SDK low-level server's (LL) and ÷ the floor's "
            "(throughput as time per call, so lower is better everywhere)"
        ),
        "",
    ]
    out += [
        (
            "| server | start-up ×LL | start-up ×floor | add p50 ×LL | add p50 ×floor "
            "| add p99 ×LL | pipelined ×LL | pipelined ×floor | profile p50 ×LL "
            "| profile p50 ×floor |"
        ),
        "|" + "---|" * 10,
    ]

    def med(row: dict[str, Any], tool: str, key: str = "median_us") -> float | None:
        stats = row["calls"].get(tool)
        return stats[key] if stats else None

    for row in rows:
        pipe = row["pipelined"]["us_per_call"]
        out.append(
            f"| {row['label']} | {_ratio(row['startup_ms'], ll['startup_ms'])} "
            f"| {_ratio(row['startup_ms'], floor['startup_ms'])} "
            f"| {_ratio(med(row, 'add'), med(ll, 'add'))} "
            f"| {_ratio(med(row, 'add'), med(floor, 'add'))} "
            f"| {_ratio(med(row, 'add', 'p99_us'), med(ll, 'add', 'p99_us'))} "
            f"| {_ratio(pipe, ll['pipelined']['us_per_call'])} "
            f"| {_ratio(pipe, floor['pipelined']['us_per_call'])} "
            f"| {_ratio(med(row, 'profile'), med(ll, 'profile'))} "
            f"| {_ratio(med(row, 'profile'), med(floor, 'profile'))} |"
        )
    out += ["", "Notes: " + "; ".join(f"{row['label']}: {row['note']}" for row in rows) + "."]
    return out


CLIENT_LABELS = {
    "mcpgen_sync": "mcpgen BenchClient (sync)",
    "mcpgen_async": "mcpgen AsyncBenchClient",
    "sdk_client_session": "SDK ClientSession (stdio_client)",
}


def print_client_table(stats: dict[str, dict[str, dict[str, float]]]) -> list[str]:
    sdk = stats["sdk_client_session"]
    out = [
        "",
        "Clients — per call, against the floor server (typed result included)",
        "",
        "| client | add p50 µs | add p99 µs | add p50 ×SDK | profile p50 µs | profile p50 ×SDK |",
        "|" + "---|" * 6,
    ]
    for kind, label in CLIENT_LABELS.items():
        add, prof = stats[kind]["add"], stats[kind]["profile"]
        out.append(
            f"| {label} | {add['median_us']:,.1f} | {add['p99_us']:,.1f} "
            f"| {_ratio(add['median_us'], sdk['add']['median_us'])} | {prof['median_us']:,.1f} "
            f"| {_ratio(prof['median_us'], sdk['profile']['median_us'])} |"
        )
    return out


def growth(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Between consecutive sizes: the log-log slope of full-build CPU time (1 = linear;
    below 1 while the fixed start-up cost still dominates) and the CPU cost per added
    tool; the wall-clock slope rides along for reference."""
    steps = []
    for small, big in itertools.pairwise(rows):
        t1, t2 = small["full_build_cpu"]["median_s"], big["full_build_cpu"]["median_s"]
        w1, w2 = small["full_build"]["median_s"], big["full_build"]["median_s"]
        n1, n2 = small["tools"], big["tools"]
        steps.append(
            {
                "from": n1,
                "to": n2,
                "slope": math.log(t2 / t1) / math.log(n2 / n1),
                "wall_slope": math.log(w2 / w1) / math.log(n2 / n1),
                "ms_per_added_tool": (t2 - t1) / (n2 - n1) * 1000,
            }
        )
    return steps


def print_realistic(row: dict[str, Any]) -> list[str]:
    w, wo = row["with_enum"], row["without_enum"]
    return [
        "",
        (
            "Generator — realistic 300-tool spec (ten shapes; 30 tools take and return a "
            "200-value enum written out inline)"
        ),
        "",
        "| spec | full build s | CPU s | generated lines | generated KB |",
        "|---|---|---|---|---|",
        (
            f"| as is | {w['full_build_s']:.2f} | {w['full_build_cpu_s']:.2f} | {w['lines']:,} "
            f"| {w['bytes'] / 1024:,.0f} |"
        ),
        (
            f"| enum → string | {wo['full_build_s']:.2f} | {wo['full_build_cpu_s']:.2f} "
            f"| {wo['lines']:,} | {wo['bytes'] / 1024:,.0f} |"
        ),
    ]


def print_generator_table(rows: list[dict[str, Any]], steps: list[dict[str, Any]]) -> list[str]:
    out = [
        "",
        "Generator — `mcpgen build` as a subprocess, fresh directory; then a no-op rebuild",
        "",
        (
            "| tools | full build s | CPU s | runs | no-op rebuild s | CPU s "
            "| one tool edited: CPU s | = full build | generated .py KB |"
        ),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        out.append(
            f"| {row['tools']:,} | {row['full_build']['median_s']:.2f} "
            f"| {row['full_build_cpu']['median_s']:.2f} | {row['full_build']['n']} "
            f"| {row['noop_rebuild']['median_s']:.3f} | {row['noop_rebuild_cpu']['median_s']:.3f} "
            f"| {row['incremental_cpu']['median_s']:.2f} "
            f"| {'yes' if row['incremental_identical'] else 'NO'} "
            f"| {row['generated_bytes'] / 1024:,.0f} |"
        )
    for step in steps:
        out.append(
            f"\n{step['from']} → {step['to']} tools: CPU time grows as n^{step['slope']:.2f} "
            f"(1.00 = linear; wall n^{step['wall_slope']:.2f}), "
            f"{step['ms_per_added_tool']:.1f} ms CPU per added tool"
        )
    return out


def targets(
    rows: list[dict[str, Any]],
    client_stats: dict[str, Any] | None,
    gen_rows: list[dict[str, Any]],
    steps: list[dict[str, Any]],
    realistic: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    checks: list[dict[str, Any]] = []

    def check(name: str, value: float, limit: float, unit: str = "×") -> None:
        checks.append(
            {"target": name, "value": value, "limit": limit, "met": value <= limit, "unit": unit}
        )

    if rows:
        by_key = {row["key"]: row for row in rows}
        me, ll, floor = by_key["mcpgen"], by_key["sdk_lowlevel"], by_key["floor"]
        add = me["calls"]["add"]["median_us"]
        check("server add p50 ≤ 0.25× SDK low-level", add / ll["calls"]["add"]["median_us"], 0.25)
        check("server add p50 ≤ 1.5× floor", add / floor["calls"]["add"]["median_us"], 1.5)
        check("server start-up ≤ 0.15× SDK low-level", me["startup_ms"] / ll["startup_ms"], 0.15)
    if client_stats:
        check(
            "sync client add p50 ≤ 0.3× SDK ClientSession",
            client_stats["mcpgen_sync"]["add"]["median_us"]
            / client_stats["sdk_client_session"]["add"]["median_us"],
            0.3,
        )
    for step in steps:
        check(
            f"build CPU time {step['from']}→{step['to']} tools grows ≤ linearly (slope)",
            step["slope"],
            1.0,
            "",
        )
    for row in gen_rows:
        check(
            f"no-op rebuild of {row['tools']} tools well under 0.5 s",
            row["noop_rebuild"]["median_s"],
            0.5,
            " s",
        )
        limit = {100: 1.5, 1000: 12.0}.get(row["tools"])
        if limit is not None:
            check(
                f"full build of {row['tools']:,} tools within {limit} CPU s",
                row["full_build_cpu"]["median_s"],
                limit,
                " s",
            )
        if row["tools"] == 1000:
            check(
                "one tool of 1,000 edited: rebuild CPU ≤ 5% of a full build's",
                row["incremental_cpu"]["median_s"] / row["full_build_cpu"]["median_s"],
                0.05,
            )
        check(
            f"rebuild after an edit ({row['tools']:,} tools) byte-identical to a full build",
            0.0 if row["incremental_identical"] else 1.0,
            0.0,
            "",
        )
    if realistic:
        # the enum once (~200 lines in models.py and in contract.py) and a few lines per use
        cost = realistic["with_enum"]["lines"] - realistic["without_enum"]["lines"]
        check(
            "realistic 300 tools: lines the repeated enum adds (once ≈ 2×200 + 4 per use)",
            cost,
            2 * 200 + 4 * 30 * 2,
            " lines",
        )
    return checks


def print_targets(checks: list[dict[str, Any]]) -> list[str]:
    out = ["", "Targets", ""]
    for c in checks:
        mark = "MET " if c["met"] else "MISS"
        out.append(
            f"- {mark} {c['target']}: {c['value']:.3f}{c['unit']} (limit {c['limit']}{c['unit']})"
        )
    return out


def _progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--calls",
        type=int,
        default=4000,
        help="timed sequential calls per tool and server/client (default 4000)",
    )
    parser.add_argument(
        "--block",
        type=int,
        default=100,
        help="calls per turn when alternating between connections (default 100)",
    )
    parser.add_argument(
        "--pipelined",
        type=int,
        default=8000,
        help="calls per server with 16 in flight (default 8000)",
    )
    parser.add_argument(
        "--startups", type=int, default=20, help="start-ups per server (default 20)"
    )
    parser.add_argument("--warmup", type=int, default=300, help="unmeasured calls per connection")
    parser.add_argument("--sizes", default="10,100,1000", help="tool counts for the generator")
    parser.add_argument(
        "--skip", default="", help="comma list of parts to skip: servers,clients,generator,http"
    )
    parser.add_argument(
        "--pin",
        choices=["same", "none"],
        default="same",
        help="same (default): the driver and every server/client process share one CPU, so a "
        "round trip measures CPU work, not how fast this machine wakes an idle CPU; none: "
        "leave placement to the scheduler",
    )
    parser.add_argument("--quick", action="store_true", help="a fast smoke run (small counts)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary build directory")
    parser.add_argument("--out", type=Path, default=None, help="JSON output path")
    args = parser.parse_args(argv)
    args.sizes = [int(s) for s in args.sizes.split(",") if s]
    args.skip = {s for s in args.skip.split(",") if s}
    if args.quick:
        args.calls, args.pipelined, args.startups, args.warmup = 400, 800, 3, 50
        args.sizes = [s for s in args.sizes if s <= 100]
    return args


def check_peers() -> None:
    wrong = {name: _version(name) for name, want in PEERS.items() if _version(name) != want}
    if wrong:
        raise SystemExit(
            f"peers must be pinned ({', '.join(f'{k}=={v}' for k, v in PEERS.items())}); found "
            f"{wrong}. Run: .venv/bin/pip install -e '.[bench]'"
        )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    check_peers()
    mcpgen = str(Path(PY).with_name("mcpgen"))
    if not os.path.exists(mcpgen):
        mcpgen = shutil.which("mcpgen") or "mcpgen"
    work = Path(tempfile.mkdtemp(prefix="mcpgen-bench-"))
    started = time.time()
    load_before = os.getloadavg()
    result: dict[str, Any] = {
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "machine": machine(),
        "settings": {
            k: (sorted(v) if isinstance(v, set) else v) for k, v in vars(args).items() if k != "out"
        },
        "protocol_version": "2025-11-25",
        "commit": _git_head(),
    }
    lines: list[str] = []
    try:
        # Children run in a plain environment: no PYTHONDONTWRITEBYTECODE (a deployed
        # server has its bytecode cached), no PYTHONUNBUFFERED, no inherited PYTHONPATH.
        clean_env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        # (a) build the generated server from the spec, as a user would
        spec = work / "bench.yaml"
        shutil.copy(HERE / "specs" / "bench.yaml", spec)
        result["bench_build_s"] = _timed_build(mcpgen, spec, clean_env)[0]
        build_dir = work / "build"
        sys.path.insert(0, str(build_dir))
        from bench_mcp import contract  # the descriptors every peer publishes

        tools_json = work / "tools.json"
        tools_json.write_text(json.dumps(contract.TOOLS))
        env = dict(clean_env, PYTHONPATH=os.pathsep.join([str(build_dir), str(SERVERS_DIR)]))
        logs = work / "logs"
        logs.mkdir()
        specs = server_specs(build_dir, tools_json)

        all_cpus = os.sched_getaffinity(0)
        if args.pin == "same":  # children inherit the affinity
            os.sched_setaffinity(0, {max(all_cpus)})
        rows: list[dict[str, Any]] = []
        if "servers" not in args.skip:
            run_servers(args, specs, env, logs)
            rows = server_rows(specs)
            result["servers"] = rows
            lines += print_server_tables(rows)
        client_stats = None
        if "clients" not in args.skip:
            floor_argv = [PY, str(SERVERS_DIR / "floor.py"), "--tools", str(tools_json)]
            samples = run_clients(args, floor_argv)
            client_stats = {
                kind: {tool: summary(s) for tool, s in per.items()} for kind, per in samples.items()
            }
            result["clients"] = client_stats
            lines += print_client_table(client_stats)
        os.sched_setaffinity(0, all_cpus)  # builds run as they would anywhere
        gen_rows: list[dict[str, Any]] = []
        steps: list[dict[str, Any]] = []
        realistic: dict[str, Any] | None = None
        if "generator" not in args.skip:
            gen_rows = run_generator(args, mcpgen, work, clean_env)
            steps = growth(gen_rows)
            realistic = run_realistic(mcpgen, work, clean_env)
            result["generator"] = {"sizes": gen_rows, "growth": steps, "realistic": realistic}
            lines += print_generator_table(gen_rows, steps)
            lines += print_realistic(realistic)
        http: dict[str, dict[str, float]] | None = None
        if "http" not in args.skip:
            http = run_http(args, env)
            result["http"] = http
            lines += print_http_table(http)
            load_lines, load_checks = run_http_load(args, env)
            lines += load_lines
            result["http_client"], client_lines, client_checks = run_http_client(args, env)
            lines += client_lines
            load_checks += client_checks
        checks = targets(rows, client_stats, gen_rows, steps, realistic)
        if "http" not in args.skip:
            checks += load_checks
        if http:
            checks.append(
                {
                    "target": "HTTP add p50 ≤ 0.3× SDK low-level",
                    "value": http["mcpgen"]["median_ms"] / http["sdk lowlevel"]["median_ms"],
                    "limit": 0.3,
                    "met": http["mcpgen"]["median_ms"] / http["sdk lowlevel"]["median_ms"] <= 0.3,
                    "unit": "×",
                }
            )
        result["targets"] = checks
        lines += print_targets(checks)
    finally:
        if args.keep:
            _progress(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    result["duration_s"] = time.time() - started
    result["loadavg"] = {"before": load_before, "after": os.getloadavg()}
    m = result["machine"]
    header = (
        f"mcpgen benchmarks — {m['nproc']} cores, {m['cpu']}, Python {m['python']}, "
        f"mcp {m['versions']['mcp']}, fastmcp {m['versions']['fastmcp']}; "
        f"load average {load_before[0]:.1f} → {result['loadavg']['after'][0]:.1f}; "
        f"pin={args.pin}; "
        f"{result['duration_s']:.0f} s"
    )
    print("\n".join([header, *lines]))
    out = args.out or HERE / "results" / time.strftime("%Y%m%dT%H%M%SZ.json", time.gmtime(started))
    out.parent.mkdir(parents=True, exist_ok=True)
    result["table"] = [header, *lines]
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
