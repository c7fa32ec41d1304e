"""What ``citeqa serve`` gives back to the system after a burst of requests.

glibc's malloc gives each thread that allocates at once an arena of its own (up to eight per
core), and keeps what is freed in it for that arena's next allocation: after three runs of 32
clients (16 answering threads, the Evaluate tab's run, the uploads' workers) the server held
1,026 MB, most of it free inside the arenas, and an 18.6 MB gold file added 360 MB that stayed
after the file was read (issue [3/6], item 6). So ``citeqa serve``
(:func:`citeqa.app.web.lifecycle.serve`) caps the arenas (:func:`limit_arenas`, before its threads
start: fewer arenas hold fewer free pieces) and runs a :class:`Trimmer`: a thread that, once the models are idle and the memory has grown since
it last looked, calls ``malloc_trim(0)``, which hands every arena's free pages back.
Where the C library is not glibc (musl, macOS) nothing is changed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

#: glibc's ``mallopt`` parameter for the most arenas (malloc.h's ``M_ARENA_MAX``).
M_ARENA_MAX = -8


@dataclass(frozen=True, slots=True)
class TrimPolicy:
    """When the server caps and trims the C heap."""

    #: Arenas of the C heap: two, so that the reader's and the embedder's calls (one at a time, the
    #: work queue's lane) and Gradio's threads share their free memory instead of keeping it apart.
    arenas: int = 2
    #: Seconds between two looks at the memory.
    every_s: float = 2.0
    #: MB the resident memory must have grown since the last trim before the next one.
    grown_mb: float = 16.0

    def __post_init__(self) -> None:
        if self.arenas < 1 or self.every_s <= 0 or self.grown_mb < 0:
            raise ValueError("a trim policy needs at least one arena, a positive period and grown_mb >= 0")


@cache
def _glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc (it has ``malloc_trim`` and ``mallopt``), else None."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None


def limit_arenas(arenas: int) -> bool:
    """Cap the C heap's arenas at ``arenas`` (threads that start later share them); whether it did."""
    libc = _glibc()
    return bool(libc is not None and libc.mallopt(M_ARENA_MAX, int(arenas)) == 1)


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
