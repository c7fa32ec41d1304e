"""The engine's trace of every question of some QA files, kept on disk: what the verifier is fitted on.

    python -m citeqa.fitting.traces --set qa=eval/qa.jsonl=index --set es-neg=out/verifier-data/es/qa.jsonl=out/verifier-data/es/index --out out/verifier/traces

Each ``--set NAME=QA=INDEX`` is a QA file (``citeqa eval``'s format; the generated files of
:mod:`citeqa.fitting.negatives` add ``kind`` and ``split``) and the index of its corpus. Every
question is answered as ``citeqa ask`` would (the shipped reader and scorer) and its
:class:`~citeqa.qa.pipeline.Trace` written to ``OUT/NAME.pkl`` with the row; a set already
written is read back, not answered again (delete its file to redo it).
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citeqa.engine import Engine
from citeqa.qa.pipeline import Trace


@dataclass(frozen=True)
class Traced:
    """One question of a set, the row it came from and the engine's trace of it."""

    set_name: str
    row: dict[str, Any]
    trace: Trace
    lang_of_doc: dict[str, str] = field(default_factory=dict)

    @property
    def answers(self) -> tuple[str, ...]:
        return tuple(self.row.get("answers") or ())

    @property
    def answerable(self) -> bool:
        return bool(self.answers)

    @property
    def kind(self) -> str:
        return str(self.row.get("kind") or ("answerable" if self.answerable else "unanswerable"))

    @property
    def split(self) -> str:
        return str(self.row.get("split") or "fit")


class _Unpickler(pickle.Unpickler):
    """Reads traces written when this module ran as ``__main__``."""

    def find_class(self, module: str, name: str) -> Any:
        return Traced if name == "Traced" else super().find_class(module, name)


def load_traces(path: Path) -> list[Traced]:
    """The traces :func:`trace_set` wrote to ``path``."""
    with path.open("rb") as f:
        loaded: list[Traced] = _Unpickler(f).load()
    return loaded


def read_rows(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def trace_set(name: str, qa: Path, index: Path, out: Path) -> list[Traced]:
    """The traces of every question of ``qa`` over ``index``, from ``out`` when already written."""
    path = out / f"{name}.pkl"
    if path.is_file():
        return load_traces(path)
    engine = Engine.open(index, reader="on")
    langs = {doc_id: d.lang for doc_id, d in engine.documents.items()}
    rows, traced, t0 = read_rows(qa), [], time.perf_counter()
    for i, row in enumerate(rows, 1):
        trace = engine.trace(row["question"], tuple(row.get("history") or ()), k=engine.settings.pool)
        traced.append(Traced(name, row, trace, langs))
        if i % 100 == 0:
            print(f"{name}: {i}/{len(rows)} in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    out.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(traced))
    return traced


def parse_set(spec: str) -> tuple[str, Path, Path]:
    name, qa, index = spec.split("=", 2)
    return name, Path(qa), Path(index)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="python -m citeqa.fitting.traces", description=__doc__.split("\n")[0] if __doc__ else None
    )
    p.add_argument("--set", action="append", required=True, help="NAME=QA=INDEX")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    for spec in args.set:
        name, qa, index = parse_set(spec)
        print(f"{name}: {len(trace_set(name, qa, index, args.out))} traces", file=sys.stderr)


if __name__ == "__main__":
    main()
