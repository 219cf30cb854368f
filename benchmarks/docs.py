"""Time ``mcpgen docs`` (the whole command, a fresh process) on the weather example and
on synthetic contracts of 10/100/1,000 tools (``genspec.realistic_spec_text``: ten
tool shapes, nested objects, arrays of objects, unions, a 200-value enum), and report
the page's size. Run: ``.venv/bin/python benchmarks/docs.py [N ...]``.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from genspec import realistic_spec_text

ROOT = Path(__file__).resolve().parent.parent
WEATHER = ROOT / "examples" / "weather" / "tools.yaml"
MCPGEN = [sys.executable, "-c", "from mcpgen.cli import main; main()"]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(spec: Path, out: Path, *extra: str) -> tuple[float, float, int]:
    """Best of three runs of ``mcpgen docs``: wall seconds, CPU seconds (less sensitive
    to other load on the machine), and the page's bytes."""
    best = cpu = float("inf")
    for _ in range(3):
        started, cpu_started = time.perf_counter(), _cpu()
        subprocess.run(
            [*MCPGEN, "docs", str(spec), "-o", str(out), *extra], check=True, capture_output=True
        )
        best = min(best, time.perf_counter() - started)
        cpu = min(cpu, _cpu() - cpu_started)
    return best, cpu, (out / "index.html").stat().st_size


def main(sizes: list[int]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        rows = [("weather (4 tools)", *run(WEATHER, folder / "weather"))]
        for n in sizes:
            spec = folder / f"real{n}.yaml"
            spec.write_text(realistic_spec_text(n), encoding="utf-8")
            rows.append((f"{n:,} tools", *run(spec, folder / f"site{n}")))
    print("| contract | mcpgen docs wall s | CPU s | index.html |")
    print("|---|---|---|---|")
    for label, seconds, cpu, size in rows:
        print(f"| {label} | {seconds:.2f} | {cpu:.2f} | {size / 1000:,.1f} kB |")
    print("(best of 3, each a fresh process: imports, spec loading and checking included)")


if __name__ == "__main__":
    main([int(arg) for arg in sys.argv[1:]] or [10, 100, 1000])
