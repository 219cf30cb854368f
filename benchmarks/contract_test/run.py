"""Time `mcpgen test` over the 10-tool contract in process at the default budget
(--examples 100): `.venv/bin/python benchmarks/contract_test/run.py [--seed N]`.

Prints the report's last line, the wall and CPU seconds of the child process and the
load average (the machine may be shared: CPU seconds are the figure to compare)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent


def main() -> None:
    seed = sys.argv[sys.argv.index("--seed") + 1] if "--seed" in sys.argv else "1"
    command = [
        sys.executable,
        "-c",
        "from mcpgen.cli import main; main()",
        "test",
        "contract10.yaml",
        "--impl",
        "contract10_impl:Impl",
        "--seed",
        seed,
    ]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=HERE, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr)
    print(
        f"exit {done.returncode}; {wall:.1f} s wall, {usage.ru_utime + usage.ru_stime:.1f} s CPU; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )


if __name__ == "__main__":
    main()
