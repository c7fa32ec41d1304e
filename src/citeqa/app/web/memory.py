"""What ``citeqa serve`` gives back to the system after a burst of requests.

glibc's malloc keeps what a thread frees in that thread's arena for the arena's next allocation.
The CLI caps the arenas at two (``app/cli/commands.py::limit_malloc_arenas``), yet after three runs
of 32 clients the server held 1,026 MB, and an 18.6 MB gold file added 360 MB that stayed after
the file was read (issue [3/6], item 6): free memory inside the arenas. So ``citeqa serve``
(:func:`citeqa.app.web.lifecycle.serve`) runs a :class:`Trimmer`: a thread that, once the models
are idle and the memory has grown since it last looked, calls ``malloc_trim(0)``, which hands
every arena's free pages back. Where the C library is not glibc (musl, macOS) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path


@dataclass(frozen=True, slots=True)
class TrimPolicy:
    """When the server trims the C heap."""

    #: Seconds between two looks at the memory.
    every_s: float = 2.0
    #: MB the resident memory must have grown since the last trim before the next one.
    grown_mb: float = 16.0

    def __post_init__(self) -> None:
        if self.every_s <= 0 or self.grown_mb < 0:
            raise ValueError("a trim policy needs a positive period and grown_mb >= 0")


@cache
def _glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc (it has ``malloc_trim``), else None."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    if not hasattr(libc, "malloc_trim"):
        return None
    libc.malloc_trim.argtypes, libc.malloc_trim.restype = [ctypes.c_size_t], ctypes.c_int
    return libc


def trim() -> bool:
    """Hand the free pages of every arena back to the system; whether any memory was released."""
    libc = _glibc()
    return bool(libc is not None and libc.malloc_trim(0) == 1)


def resident_mb() -> float:
    """This process's resident memory (``VmRSS``) in MB; 0.0 where ``/proc`` does not tell."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Trimmer:
    """Trims the C heap (``release``, :func:`trim`) when ``idle()`` says no request is using the
    models and the resident memory (``resident()``) has grown by :attr:`TrimPolicy.grown_mb` since
    the last trim, or the last trim released memory (what a burst frees after a trim in its midst
    is handed back at the next looks, until a trim finds nothing); :meth:`step` looks once,
    :meth:`start` looks every :attr:`TrimPolicy.every_s` in a daemon thread."""

    def __init__(
        self,
        idle: Callable[[], bool],
        policy: TrimPolicy | None = None,
        resident: Callable[[], float] = resident_mb,
        release: Callable[[], bool] = trim,
    ) -> None:
        self.policy = policy if policy is not None else TrimPolicy()
        self._idle, self._resident, self._release = idle, resident, release
        self._floor = resident()  # the memory after the last trim (or at start)
        self._again = False  # the last trim released memory: look again at the next step
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.trims = 0  #: trims done so far

    def step(self) -> bool:
        """Trim now if the models are idle and the memory has grown enough; whether it trimmed."""
        now = self._resident()
        if now < self._floor:  # memory given back otherwise: measure growth from here
            self._floor = now
        if (now - self._floor < self.policy.grown_mb and not self._again) or not self._idle():
            return False
        self._again = self._release()
        self._floor = self._resident()
        self.trims += 1
        return True

    def start(self) -> Trimmer:
        """Look every :attr:`TrimPolicy.every_s` seconds until :meth:`stop`."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="citeqa-trim", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(self.policy.every_s):
            self.step()
