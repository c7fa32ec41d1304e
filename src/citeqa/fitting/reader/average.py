"""Average the weights of several points of one training run (checkpoint averaging), and score them.

    python -m citeqa.fitting.reader.average out/ms/4400/checkpoint.pt out/ms/4800/checkpoint.pt \
        [src/citeqa/reader/weights/e5-small-reader.safetensors] --out out/avg/checkpoint.pt \
        [--dev out/reader-data2]

Each input is a checkpoint of :mod:`citeqa.fitting.reader.train` or an exported delta. The trained tensors
(encoder layers and span head) are averaged element by element, with equal weights, into a file
``python -m citeqa.fitting.reader.export --checkpoint`` takes. Points of one run share a basin, and their mean is
usually at least as good as the best of them (Vaswani et al. 2017; Izmailov et al. 2018, "SWA").
``--dev`` scores the result (and with ``--each``, every input) on the training run's fixed dev
sample, as :mod:`~citeqa.fitting.reader.train` logs it: held-out articles, never the held-out evaluation sets.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from citeqa.fitting.reader.squad import load_examples
from citeqa.fitting.reader.train import _dev_sample, _evaluate, _parser, trained_tensors
from citeqa.reader.e5_file import read_e5
from citeqa.reader.tokenizer import E5Tokenizer
from citeqa.reader.torch_model import base_state, build_reader


def average(states: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The element-wise mean of tensors under the same names; every state must have the same names."""
    names = set(states[0])
    for state in states[1:]:
        if set(state) != names:
            raise SystemExit(f"the inputs hold different tensors: {sorted(names ^ set(state))[:4]}")
    return {
        name: np.asarray(np.mean([s[name] for s in states], axis=0, dtype=np.float64), np.float32) for name in names
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m citeqa.fitting.reader.average", description=__doc__.split("\n\n")[0])
    p.add_argument("inputs", nargs="+", type=Path, help="checkpoints (.pt) or exported deltas")
    p.add_argument("--out", type=Path, required=True, help="where to write the averaged checkpoint")
    p.add_argument("--dev", type=Path, default=None, help="prepared data folder: score on its dev sample")
    p.add_argument("--each", action="store_true", help="with --dev, score every input too")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    weights = read_e5()
    base = base_state(weights)
    states = [trained_tensors(path, base, weights.sha256) for path in args.inputs]
    mean = average(states)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    sources = [str(path) for path in args.inputs]
    torch.save({"model": {k: torch.from_numpy(v) for k, v in mean.items()}, "averaged": sources}, args.out)
    print(f"wrote {args.out}: the mean of {len(states)} ({', '.join(sources)})")
    if args.dev is None:
        return
    tok = E5Tokenizer(weights.vocab)
    run = _parser().parse_args(["--data", str(args.dev), "--out", "-"])  # the training run's own dev sample settings
    dev = _dev_sample(load_examples(args.dev / "dev.jsonl"), run.dev_questions, run.dev_unanswerable, run.seed)
    scored = list(zip(sources, states)) if args.each else []
    for name, state in [*scored, ("mean", mean)]:
        scores = _evaluate(build_reader(weights, state), tok, dev)
        f1 = [v for k, v in scores.items() if k.endswith("_f1")]
        print(json.dumps({"weights": name, "mean_f1": round(float(np.mean(f1)), 4), **scores}), flush=True)


if __name__ == "__main__":
    main()
