"""Why a user's JSON is parsed by ``citeqa.evaluation.user_json.loads`` (orjson plus a 64-level walk), measured.

    PYTHONPATH=src .venv/bin/python bench/user_json.py [--articles 450]

Prints one JSON line per measurement:

- ``deep``: what the standard library's ``json`` and ``orjson`` do with 100,000 nested arrays, called at
  the top of the stack and 900 frames down, and (in a child process) with the recursion limit raised to
  1,000,000; the child's exit status is printed (-11 is a segmentation fault);
- ``repr``: whether ``repr`` and ``==`` of a 1,024-deep list (which orjson accepts) raise RecursionError;
- ``squad``: seconds to parse a SQuAD-shaped file (``--articles`` articles of 45 paragraphs of 6 questions;
  450 gives about 43 MB, SQuAD 2.0's training set is 40 MiB) with ``json``, ``orjson``, the depth walk
  alone, and ``user_json.loads`` (median of 3), with the machine's load average. Figures, not assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import orjson

from citeqa.evaluation.user_json import depth, loads

NESTED = "[" * 100_000 + "]" * 100_000


def _outcome(parse: Callable[[str], Any], text: str, frames: int = 0) -> str:
    def at(n: int) -> Any:
        return at(n - 1) if n else parse(text)

    try:
        at(frames)
    except RecursionError:
        return "RecursionError"
    except ValueError as exc:
        return f"{type(exc).__name__}: {str(exc)[:60]}"
    return "parsed"


def deep() -> None:
    for name, parse in (("json", json.loads), ("orjson", orjson.loads)):
        for frames in (0, 900):
            print(json.dumps({"deep": name, "frames": frames, "outcome": _outcome(parse, NESTED, frames)}))
        child = (
            f"import sys, {name}; sys.setrecursionlimit(1_000_000)\n"
            f"try:\n    {name}.loads('[' * 100_000 + ']' * 100_000)\nexcept ValueError:\n    sys.exit(3)"
        )
        code = subprocess.run([sys.executable, "-c", child], capture_output=True, check=False).returncode
        print(json.dumps({"deep": name, "recursion_limit": 1_000_000, "exit_status": code}))


def deep_values() -> None:
    value = orjson.loads("[" * 1024 + "]" * 1024)
    for name, use in (("repr", lambda: repr(value)), ("==", lambda: value == orjson.loads("[" * 1024 + "]" * 1024))):
        try:
            use()
            outcome = "ok"
        except RecursionError:
            outcome = "RecursionError"
        print(json.dumps({"repr": name, "levels": 1024, "outcome": outcome}))


def squad(articles: int) -> None:
    context = "The windmill of Greyhill was built in 1760 by the miller Thomas Hale. Its sails span 26 metres. " * 7
    qas = [
        {"id": f"q{q}", "question": "Who built the windmill of Greyhill?", "is_impossible": False,
         "answers": [{"text": "Thomas Hale", "answer_start": 60}] * 3}
        for q in range(6)
    ]  # fmt: skip
    article = {"title": "Greyhill", "paragraphs": [{"context": context, "qas": qas}] * 45}
    text = json.dumps({"version": "v2.0", "data": [article] * articles})
    value = orjson.loads(text)
    for name, run in (
        ("json.loads", lambda: json.loads(text)),
        ("orjson.loads", lambda: orjson.loads(text)),
        ("depth walk", lambda: depth(value)),
        ("user_json.loads", lambda: loads(text)),
    ):
        seconds = []
        for _ in range(3):
            start = time.perf_counter()
            run()
            seconds.append(time.perf_counter() - start)
        print(
            json.dumps(
                {
                    "squad": name,
                    "mib": round(len(text.encode()) / 2**20, 1),
                    "median_s": round(statistics.median(seconds), 3),
                    "load": os.getloadavg()[0],
                }
            )
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=450)
    args = parser.parse_args()
    deep()
    deep_values()
    squad(args.articles)


if __name__ == "__main__":
    main()
