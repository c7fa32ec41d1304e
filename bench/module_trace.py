"""Which citeqa modules one warm question enters, and between how many distinct pairs of them it moves.

    HF_HUB_OFFLINE=1 PYTHONPATH=src .venv/bin/python bench/module_trace.py [--index index] [--question Q]

The engine is opened and warmed with one question; then ``sys.setprofile`` records, for every
Python call of a second question, the module of the function called; a pair is (caller's citeqa
module, callee's) where they differ, the caller being the nearest citeqa frame up the stack. Prints
the count of each module's calls, the number of modules and of pairs (issue [4/6]'s targets: at
most 22 modules and 50 pairs). Counts, not times: the machine's load does not move them.
"""

from __future__ import annotations

import argparse
import collections
import sys
from types import FrameType
from typing import Any

from citeqa import Engine

WARM = "What is the price of the 960DT?"
QUESTION = "When does the 960PR arrive?"


def trace(engine: Engine, question: str) -> tuple[collections.Counter[str], set[tuple[str, str]]]:
    """Calls per citeqa module and the distinct (caller module, callee module) pairs of one answer."""
    calls: collections.Counter[str] = collections.Counter()
    pairs: set[tuple[str, str]] = set()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        module = str(frame.f_globals.get("__name__", ""))
        if not module.startswith("citeqa"):
            return
        calls[module] += 1
        up = frame.f_back
        while up is not None and not str(up.f_globals.get("__name__", "")).startswith("citeqa"):
            up = up.f_back
        if up is not None and up.f_globals["__name__"] != module:
            pairs.add((str(up.f_globals["__name__"]), module))

    sys.setprofile(profile)
    try:
        engine.ask(question)
    finally:
        sys.setprofile(None)
    return calls, pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default="index")
    parser.add_argument("--question", default=QUESTION)
    args = parser.parse_args()
    engine = Engine.open(args.index)
    engine.ask(WARM)
    calls, pairs = trace(engine, args.question)
    for module, n in sorted(calls.items()):
        print(f"{n:8d}  {module}")
    print(f"{len(calls)} modules, {len(pairs)} distinct module pairs")


if __name__ == "__main__":
    main()
