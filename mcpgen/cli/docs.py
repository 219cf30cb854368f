"""``mcpgen docs``: the contract as one self-contained HTML page (``mcpgen.docs``)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .common import (
    ALLOW_OUTSIDE_REFS,
    echo,
    echo_error,
    project_config,
    setting,
    specs_or_config,
    unreadable,
)

if TYPE_CHECKING:
    from ..docs import LandingEntry

__all__ = ["docs"]


@click.command()
@click.argument("specs", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder of the page: DIR/index.html (default: [tool.mcpgen] docs-output). "
    "With several specs each page goes to DIR/<package>/index.html and DIR/index.html "
    "links them.",
)
@click.option(
    "--against",
    metavar="OLD",
    help="Add 'Changes since OLD': OLD is an older spec file, or else a git ref the spec "
    "is read at (as mcpgen diff reads them). Default: [tool.mcpgen] docs-against.",
)
@click.option(
    "--check", is_flag=True, help="Write nothing; exit 1 when a page is missing or differs."
)
@ALLOW_OUTSIDE_REFS
def docs(
    specs: tuple[Path, ...],
    output: Path | None,
    against: str | None,
    check: bool,
    allow_outside_refs: bool | None,
) -> None:
    """Write the contract of each SPEC (default: [tool.mcpgen] specs, else ./tools.yaml)
    as one HTML page that loads nothing from elsewhere: every tool with its parameters,
    result, hints and a checked example, every shared type, and with --against the
    changes since OLD, classified as mcpgen diff does.

    Exit 0 when every page is written or up to date, 1 on an invalid spec or (--check)
    a stale page, 2 on a usage or I/O error (an unreadable OLD, a failing git)."""
    config = project_config()
    specs = specs_or_config(specs, config)
    refs = setting(allow_outside_refs, config, "allow_outside_refs")
    if output is None:
        if config is None or config.docs_output is None:
            raise click.UsageError("no -o DIR given and no [tool.mcpgen] docs-output")
        output = config.docs_output
    label = against
    if against is None and config is not None and config.docs_against is not None:
        against = label = config.docs_against
        if (config.root / against).is_file():  # a file named in pyproject: relative to it
            against = str(config.root / against)
    if against is not None and len(specs) > 1 and Path(against).is_file():
        raise click.UsageError(
            "--against a spec file compares one SPEC; with several, "
            "give a git ref (each spec is read at it)"
        )
    failed = False
    entries: list[LandingEntry] = []
    for spec in specs:
        target = output if len(specs) == 1 else None
        entry = _one(spec, target, output, (against, label), check=check, refs=refs)
        failed = failed or entry is None
        entries.extend([entry] if entry is not None else [])
    if len(specs) > 1:
        failed = _landing(output, entries, check=check) or failed
    sys.exit(1 if failed else 0)


def _landing(output: Path, entries: list[LandingEntry], *, check: bool) -> bool:
    """Write DIR/index.html, linking each spec's page; True when it is stale (--check)."""
    from ..docs import INDEX, render_landing, write_page

    try:
        status = write_page(output, render_landing(entries), check=check)
    except OSError as exc:
        echo_error(f"mcpgen docs: cannot write {output / INDEX}: {exc}")
        sys.exit(2)
    if status == "stale":
        echo_error(f"{output / INDEX} is stale ({len(entries)} contract(s))")
        return True
    echo(f"{status} {output / INDEX} ({len(entries)} contract(s))")
    return False


def _one(
    spec: Path,
    target: Path | None,
    output: Path,
    old: tuple[str | None, str | None],
    *,
    check: bool,
    refs: bool,
) -> LandingEntry | None:
    """Render and write one spec's page; its landing entry, None when it failed (exits
    2 on I/O errors).
    ``old``: what to compare with, and its name as the user gave it."""
    from ..diff import DiffFailed
    from ..docs import INDEX, landing_entry, render_docs, write_page
    from ..spec.load import load_contract

    against, label = old

    started = time.perf_counter()
    loaded = load_contract(spec, allow_outside_refs=refs, allow_outside_output=True)
    if loaded.contract is None:
        for diagnostic in loaded.diagnostics:
            echo_error(str(diagnostic))
        if unreadable(spec):
            sys.exit(2)
        echo_error(f"{spec}: invalid, no page written")
        return None
    contract = loaded.contract
    folder = target if target is not None else output / contract.package
    try:
        html = render_docs(contract, spec, against, allow_outside_refs=refs, label=label)
    except DiffFailed as exc:
        for diagnostic in exc.diagnostics:
            echo_error(str(diagnostic))
        echo_error(f"mcpgen docs: --against {against}: {exc}")
        sys.exit(2)
    try:
        status = write_page(folder, html, check=check)
    except OSError as exc:
        echo_error(f"mcpgen docs: cannot write {folder / INDEX}: {exc}")
        sys.exit(2)
    seconds = time.perf_counter() - started
    size = len(html.encode("utf-8")) / 1000
    detail = f"{len(contract.tools)} tool(s), {size:.1f} kB, {seconds:.2f}s"
    if status == "stale":
        echo_error(
            f"{spec}: {folder / INDEX} is stale ({detail}); fix: mcpgen docs {spec} -o {folder}"
        )
        return None
    echo(f"{spec}: {status} {folder / INDEX} ({detail})")
    return landing_entry(contract)
