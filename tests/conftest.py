"""Suite-wide guards: no test may leave a child process (running or zombie) or a
thread behind; both would leak into every later test. And Hypothesis draws the same
examples on every run, as the fuzzers' ``ci`` profile does (tests/fuzz/fuzz_settings.py):
a red suite means a change broke something, never that the dice found an old bug
that day. Any other ``HYPOTHESIS_PROFILE`` (``random``; ``long``, what ``make fuzz``
sets) draws afresh, to look for new bugs."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import settings

settings.register_profile("derandomized", derandomize=True, database=None)
if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci":
    settings.load_profile("derandomized")

_GRACE = 3.0  # seconds a test's children and threads get to wind down


def _children() -> list[tuple[int, str, str]]:
    """(pid, state, name) of every process whose parent is this one (Linux /proc)."""
    me = os.getpid()
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                text = stat.read().decode(errors="replace")
        except OSError:
            continue
        # "pid (comm) state ppid …": comm may hold spaces and parentheses.
        name = text[text.find("(") + 1 : text.rfind(")")]
        fields = text[text.rfind(")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == me:
            found.append((int(entry), fields[0], name))
    return found


def _reap(children: list[tuple[int, str, str]]) -> None:
    """Kill and reap leftovers so one leaky test does not fail all the next ones."""
    for pid, _, _ in children:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for pid, _, _ in children:
        try:
            os.waitpid(pid, 0)
        except OSError:
            pass


@pytest.fixture(autouse=True)
def no_leftover_processes_or_threads() -> Iterator[None]:
    # Only what the test itself started counts: a module-scoped fixture's server
    # outlives single tests on purpose.
    threads_before = set(threading.enumerate())
    children_before = {pid for pid, state, _ in _children() if state != "Z"}
    yield
    deadline = time.monotonic() + _GRACE
    while True:
        children = [c for c in _children() if c[0] not in children_before or c[1] == "Z"]
        threads = [t for t in threading.enumerate() if t not in threads_before and t.is_alive()]
        if (not children and not threads) or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    problems = []
    if children:
        _reap(children)
        problems.append(
            "child processes left behind: "
            + ", ".join(f"{pid} {name!r} state={state}" for pid, state, name in children)
        )
    if threads:
        problems.append("threads left running: " + ", ".join(repr(t.name) for t in threads))
    if problems:
        pytest.fail("; ".join(problems), pytrace=False)


@pytest.fixture
def authorization_server() -> Iterator[Any]:
    """A real OAuth 2.1 authorization server on 127.0.0.1 (tests/oauth_server.py)."""
    from oauth_server import running_authorization_server

    with running_authorization_server() as server:
        yield server
