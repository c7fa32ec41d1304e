"""Readers for :func:`citeqa.ingest.budget.load_bounded`'s ``reader=`` in tests: each makes one
limit the only one that can end the worker, whatever the machine's load.

They run in the worker process, so this module is imported there by name
(``budget_readers:never_ends``; the tests put tests/ on the worker's ``PYTHONPATH``).
"""

from __future__ import annotations

import json
import resource
import signal
import threading
import time
from pathlib import Path

from citeqa.records import Document


def never_ends(path: Path, doc_id: str, default_lang: str) -> Document:
    """Waits for ever without using CPU or memory: only the wall-clock timer can stop it."""
    threading.Event().wait()
    raise AssertionError("unreachable")


def spins(path: Path, doc_id: str, default_lang: str) -> Document:
    """Uses CPU for ever without allocating: only the timer or the CPU limit can stop it."""
    n = 0
    while True:
        n += 1


def allocates(path: Path, doc_id: str, default_lang: str) -> Document:
    """Allocates 1 MiB after 1 MiB, in well under a second per 100 MiB: only the memory limit can stop
    it (given a generous time). Past 1 GiB it gives up and returns, so a broken limit fails a test
    instead of filling the machine."""
    held = [bytearray(1 << 20) for _ in range(1024)]
    return Document(doc_id, doc_id, f"allocated {len(held)} MiB", default_lang, "0" * 64)


def reports_limits(path: Path, doc_id: str, default_lang: str) -> Document:
    """Reads nothing; its text is the limits the parse runs under, as JSON."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    limits = {
        "cpu_used_s": usage.ru_utime + usage.ru_stime,
        "cpu_limit_s": resource.getrlimit(resource.RLIMIT_CPU)[0],
        "timer_s": signal.getitimer(signal.ITIMER_REAL)[0],
        "address_space_limit": resource.getrlimit(resource.RLIMIT_AS)[0],
        "address_space": _vmsize(),
    }
    return Document(doc_id, doc_id, json.dumps(limits), default_lang, "0" * 64)


def _vmsize() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))


def burn_cpu(seconds: float) -> None:
    """Use ``seconds`` of this process's CPU (its own clock: the same on a busy machine, only slower)."""
    until = time.process_time() + seconds
    while time.process_time() < until:
        pass
