"""The in-process task table at scale: one ``tasks/get`` lookup and one
``tasks/list`` page among N live tasks (expiry included, as every access runs it).

    .venv/bin/python benchmarks/task_table.py [--tasks 200000] [--baseline OTHER/runtime/mcpgen_runtime/tasks/table.py]

``--baseline`` times another copy of the task table (``tasks/table.py``,
or ``_tasks.py`` before the runtime's re-layout) the same way (for example
main's, to compare with a change); a table without ``page`` gets no page row.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from types import ModuleType

RUNTIME_TASKS = (
    Path(__file__).resolve().parent.parent / "runtime" / "mcpgen_runtime" / "tasks" / "table.py"
)


def load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def measure(module: ModuleType, count: int, rounds: int = 200) -> dict[str, float]:
    try:
        table = module.TaskTable(max_tasks=None)
    except TypeError:  # a table without caps
        table = module.TaskTable()
    ids = [table.create("t", "legacy", 3_600_000).task_id for _ in range(count)]
    start = time.perf_counter()
    for task_id in ids[:rounds]:
        table.get(task_id)
    timings = {"get_us": (time.perf_counter() - start) / rounds * 1e6}
    if hasattr(table, "page"):
        start = time.perf_counter()
        for _ in range(rounds):
            table.page("legacy", None)
        timings["page_us"] = (time.perf_counter() - start) / rounds * 1e6
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200_000)
    parser.add_argument("--baseline", type=Path)
    args = parser.parse_args()
    runs = [("this checkout", RUNTIME_TASKS)] + (
        [("baseline", args.baseline)] if args.baseline else []
    )
    for index, (label, path) in enumerate(runs):
        figures = measure(load(path, f"_bench_tasks_{index}"), args.tasks)
        shown = ", ".join(f"{key[:-3]} {value:,.1f} µs" for key, value in figures.items())
        print(f"{label}: {args.tasks:,} live tasks: {shown}")


if __name__ == "__main__":
    main()
