"""The learning curve of a training run: dev F1 per language (and no-answer recall) against windows seen.

    python -m citeqa.fitting.reader.curve --log out/reader-train/log.jsonl [--batch 16] [--png docs/reader-curve.png]

Reads the ``log.jsonl`` that :mod:`citeqa.fitting.reader.train` writes, prints one line per evaluation and,
with ``--png``, draws the curve (one line per language).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def evaluations(log: Path) -> list[dict[str, Any]]:
    """The evaluation records of a log, in step order (the last one per step when a step repeats)."""
    found: dict[int, dict[str, Any]] = {}
    for line in log.read_text().splitlines():
        record = json.loads(line)
        if any(k.startswith("dev_") for k in record):
            found[int(record["step"])] = record
    return [found[s] for s in sorted(found)]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m citeqa.fitting.reader.curve", description=__doc__.split("\n\n")[0])
    p.add_argument("--log", type=Path, required=True)
    p.add_argument("--batch", type=int, default=16, help="windows per step")
    p.add_argument("--png", type=Path, default=None)
    args = p.parse_args(argv)
    rows = evaluations(args.log)
    langs = sorted({k.split("_")[1] for r in rows for k in r if k.endswith("_f1")})
    print(f"{'step':>6} {'windows':>8}  " + "  ".join(f"{lang} F1" for lang in langs) + "  no-answer recall")
    for r in rows:
        f1 = "  ".join(f"{r.get(f'dev_{lang}_f1', float('nan')):5.3f}" for lang in langs)
        nulls = " ".join(f"{k[4:6]} {v:.2f}" for k, v in r.items() if k.endswith("_null_recall"))
        print(f"{r['step']:>6} {r['step'] * args.batch:>8}  {f1}  {nulls}")
    if args.png is not None and rows:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4))
        for lang in langs:
            points = [(r["step"] * args.batch, r[f"dev_{lang}_f1"]) for r in rows if f"dev_{lang}_f1" in r]
            ax.plot(*zip(*points), marker="o", label=lang)
        ax.set_xlabel("training windows seen")
        ax.set_ylabel("dev F1 (held-out articles)")
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.png, dpi=110)
        print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
