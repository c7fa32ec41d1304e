"""What citeqa serve gives back after a burst of requests (app/web/memory.py): the C heap's arenas
capped, and trimmed once the models are idle and the memory has grown."""

from __future__ import annotations

import ctypes
import time

import pytest

from citeqa.app.web import memory
from citeqa.app.web.memory import Trimmer, TrimPolicy


class _Process:
    """A process's resident memory and a trim that gives ``freed`` MB of it back."""

    def __init__(self, mb: float, freed: float) -> None:
        self.mb, self.freed, self.trims = mb, freed, 0

    def resident(self) -> float:
        return self.mb

    def release(self) -> bool:
        self.trims += 1
        self.mb -= self.freed
        return True


def test_memory_is_trimmed_once_grown_and_only_when_the_models_are_idle() -> None:
    process, busy = _Process(500.0, 0.0), [True]
    trimmer = Trimmer(lambda: not busy[0], TrimPolicy(grown_mb=16), process.resident, process.release)
    process.mb = 510.0
    assert not trimmer.step()  # grown less than the policy's bound
    process.mb, process.freed = 900.0, 350.0
    assert not trimmer.step() and process.trims == 0  # a burst still runs: nothing is trimmed under it
    busy[0] = False
    assert trimmer.step() and process.trims == 1 and process.mb == 550.0
    assert not trimmer.step()  # nothing has grown since
    process.mb = 560.0
    assert not trimmer.step() and trimmer.trims == 1


def test_growth_is_counted_from_the_lowest_memory_seen() -> None:
    process = _Process(800.0, 0.0)
    trimmer = Trimmer(lambda: True, TrimPolicy(grown_mb=16), process.resident, process.release)
    process.mb = 600.0  # given back otherwise (a reload, Python's own arenas)
    assert not trimmer.step()
    process.mb = 620.0
    assert trimmer.step() and process.trims == 1


def test_the_trimmer_thread_looks_until_stopped() -> None:
    process = _Process(100.0, 0.0)
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
def test_glibc_trims_and_caps_its_arenas() -> None:
    blocks = [ctypes.create_string_buffer(200_000) for _ in range(200)]  # 40 MB of malloc'd memory
    del blocks
    memory.trim()  # returns whether memory was released: it depends on what was free
    assert memory.limit_arenas(64)  # a cap above the default leaves this process as it was


def test_a_policy_needs_an_arena_and_a_period() -> None:
    with pytest.raises(ValueError, match="at least one arena"):
        TrimPolicy(arenas=0)
    with pytest.raises(ValueError, match="positive period"):
        TrimPolicy(every_s=0)
