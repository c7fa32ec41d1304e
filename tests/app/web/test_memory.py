"""What citeqa serve gives back after a burst of requests (app/web/memory.py): the C heap trimmed
once the models are idle and the memory has grown, or the last trim released some."""

from __future__ import annotations

import ctypes
import time

import pytest

from citeqa.app.web import memory
from citeqa.app.web.memory import Trimmer, TrimPolicy


class _Process:
    """A process's resident memory, ``used`` MB and ``free`` MB that a trim gives back."""

    def __init__(self, used: float, free: float = 0.0) -> None:
        self.used, self.free, self.trims = used, free, 0

    def resident(self) -> float:
        return self.used + self.free

    def release(self) -> bool:
        self.trims += 1
        released, self.free = self.free > 0, 0.0
        return released


def test_memory_is_trimmed_once_grown_and_only_when_the_models_are_idle() -> None:
    process, busy = _Process(500.0), [True]
    trimmer = Trimmer(lambda: not busy[0], TrimPolicy(grown_mb=16), process.resident, process.release)
    process.free = 10.0
    assert not trimmer.step()  # grown less than the policy's bound
    process.used, process.free = 550.0, 350.0
    assert not trimmer.step() and process.trims == 0  # a burst still runs: nothing is trimmed under it
    busy[0] = False
    assert trimmer.step() and process.trims == 1 and process.resident() == 550.0
    assert trimmer.step() and process.trims == 2  # the last trim released memory: once more
    assert not trimmer.step() and process.trims == 2  # nothing released, nothing grown since
    process.free = 10.0
    assert not trimmer.step() and trimmer.trims == 2


def test_what_a_burst_frees_after_a_trim_in_its_midst_is_trimmed_too() -> None:
    """A gold file read between two model calls: the trim in its midst finds little; the items it
    frees when done stay under the growth bound, yet are handed back at the next look."""
    process = _Process(600.0)
    trimmer = Trimmer(lambda: True, TrimPolicy(grown_mb=16), process.resident, process.release)
    process.used, process.free = 900.0, 20.0  # reading: its items held
    assert trimmer.step() and process.resident() == 900.0
    process.used, process.free = 600.0, 300.0  # read: the items freed, the memory not given back
    assert trimmer.step() and process.resident() == 600.0
    assert trimmer.step() and not trimmer.step() and process.trims == 3  # the last found nothing


def test_growth_is_counted_from_the_lowest_memory_seen() -> None:
    process = _Process(800.0)
    trimmer = Trimmer(lambda: True, TrimPolicy(grown_mb=16), process.resident, process.release)
    process.used = 600.0  # given back otherwise (a reload, Python's own arenas)
    assert not trimmer.step()
    process.free = 20.0
    assert trimmer.step() and process.trims == 1


def test_the_trimmer_thread_looks_until_stopped() -> None:
    process = _Process(100.0)
    trimmer = Trimmer(lambda: True, TrimPolicy(every_s=0.01, grown_mb=0), process.resident, process.release)
    trimmer.start()
    try:
        deadline = time.monotonic() + 30  # only a bound on a broken thread: two looks take 20 ms
        while process.trims < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        trimmer.stop()
    assert process.trims >= 2
    seen = process.trims
    time.sleep(0.05)
    assert process.trims == seen  # stopped


@pytest.mark.skipif(memory._glibc() is None, reason="not glibc")
def test_glibc_hands_free_memory_back() -> None:
    blocks = [ctypes.create_string_buffer(200_000) for _ in range(200)]  # 40 MB of malloc'd memory
    del blocks
    memory.trim()  # whether anything was released depends on what else is free: only that it runs
    assert memory.resident_mb() > 0


def test_a_policy_needs_a_period() -> None:
    with pytest.raises(ValueError, match="positive period"):
        TrimPolicy(every_s=0)
