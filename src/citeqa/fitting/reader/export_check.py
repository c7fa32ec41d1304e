"""Which ONNX export keeps what training learned: each recipe against the torch model, on dev questions.

    python -m citeqa.fitting.reader.export_check --data out/reader-data/dev.jsonl \
        [--checkpoint out/reader-train/checkpoint.pt | --delta FILE] [--per-lang 60] [--out out/export-check]

The torch model is the trained one (a checkpoint, or the base plus a delta); every recipe is
exported from it and scored on the same answerable dev questions (each read with its whole
paragraph, as :mod:`citeqa.fitting.reader.evaluate`): token F1, how often its best span equals the torch
model's, and ms per question (depends on the machine's load: compare recipes of one run). The
recipes: float32; int8 MatMuls per channel with and without the 7-bit range; int8 with the
MatMuls of the last layers or of every feed-forward output kept in float32. Prints a table
and writes ``results.json``. On a CPU without VNNI the 8-bit recipes run on kernels that saturate
(int16 sums): their rows there are not what a VNNI CPU computes.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from citeqa.fitting.reader.squad import Example, load_examples, squad_scores
from citeqa.reader.decode import best_spans, window_spans
from citeqa.reader.e5_file import E5Weights, WordEmbeddings, e5_path, read_e5, read_header
from citeqa.reader.onnx_build import export_fp32, is_feed_forward_output
from citeqa.reader.tokenizer import E5Tokenizer
from citeqa.reader.windows import batch_arrays, make_windows

#: A model's start and end logits of a batch of windows.
Logits = tuple[np.ndarray, np.ndarray]
#: Runs a model on a batch: token ids and attention mask in, logits out.
Runner = Callable[[np.ndarray, np.ndarray], Logits]
#: A question's best span (character offsets in its paragraph), None when there is none.
Found = tuple[int, int] | None


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    weights = read_e5()
    tok = E5Tokenizer(weights.vocab)
    model = _torch_model(weights, args)
    dev = _sample([e for e in load_examples(Path(args.data)) if e.answers], args.per_lang, args.seed)
    embed = WordEmbeddings(e5_path(), read_header(memoryview(e5_path().read_bytes())))
    reference = _read_all(dev, tok, lambda ids, mask: _torch_logits(model, embed, ids, mask))
    fp32 = out / "reader-fp32.onnx"
    export_fp32(model, weights.config.hidden, fp32)  # leaves the model in training mode: read it before
    rows = {"torch float32": _score(dev, reference, reference, 0.0)}
    for name, path in _recipes(fp32, out, weights.config.layers).items():
        run = _ort_runner(path, embed, args.threads)
        started = time.perf_counter()
        found = _read_all(dev, tok, run)
        ms = (time.perf_counter() - started) * 1000 / len(dev)
        rows[name] = {**_score(dev, found, reference, ms), "mb": round(path.stat().st_size / 1e6, 1)}
        print(f"{name:34s} {json.dumps(rows[name])}", flush=True)
    (out / "results.json").write_text(json.dumps({"questions": len(dev), "recipes": rows}, indent=2) + "\n")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m citeqa.fitting.reader.export_check", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--data", required=True)
    p.add_argument("--checkpoint", default=None)
    p.add_argument("--delta", default=None, help="default: the shipped reader weights")
    p.add_argument("--per-lang", type=int, default=60)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--out", default="out/export-check")
    return p


def _torch_model(weights: E5Weights, args: argparse.Namespace) -> Any:
    import torch

    from citeqa.reader.delta import read_delta
    from citeqa.reader.onnx_build import shipped_path
    from citeqa.reader.torch_model import base_state, build_reader

    if args.checkpoint:
        state = torch.load(args.checkpoint, weights_only=True)["model"]
        trained = {k: v.float().numpy() for k, v in state.items() if not k.startswith("bert.embeddings.")}
    else:
        delta = Path(args.delta) if args.delta else shipped_path()
        trained = read_delta(delta, base_state(weights), weights.sha256)
    model: Any = build_reader(weights, trained)
    return model.eval()


def _sample(dev: list[Example], per_lang: int, seed: int) -> list[Example]:
    random.Random(seed).shuffle(dev)
    out: list[Example] = []
    for lang in sorted({e.lang for e in dev}):
        out += [e for e in dev if e.lang == lang][:per_lang]
    return out


def _recipes(fp32: Path, out: Path, layers: int) -> dict[str, Path]:
    """Every recipe's file, built from ``fp32``."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    matmuls = [n.name for n in onnx.load(str(fp32)).graph.node if n.op_type == "MatMul"]

    def layer_of(name: str) -> int | None:
        for part in name.split("/"):
            if part.startswith("layer."):
                return int(part.removeprefix("layer."))
        return None

    plans: dict[str, tuple[bool, list[str]]] = {
        "int8 per-channel, 7-bit (recipe 2 without VNNI)": (True, []),
        "int8 per-channel, 8-bit (recipe 2 with VNNI)": (False, []),
        "int8 8-bit, last 2 layers fp32": (False, [m for m in matmuls if (layer_of(m) or 0) >= layers - 2]),
        "int8 8-bit, FFN outputs fp32 (recipe 3 with VNNI)": (False, [m for m in matmuls if is_feed_forward_output(m)]),
        "int8 7-bit, FFN outputs fp32 (recipe 4, every CPU)": (True, [m for m in matmuls if is_feed_forward_output(m)]),
        "int8 8-bit, head + last layer fp32": (
            False,
            [m for m in matmuls if (layer_of(m) or 0) >= layers - 1 or "qa_outputs" in m],
        ),
    }
    paths = {"float32": fp32}
    for i, (name, (reduce, exclude)) in enumerate(plans.items()):
        target = out / f"reader-{i}.onnx"
        quantize_dynamic(
            str(fp32),
            str(target),
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=reduce,
            op_types_to_quantize=["MatMul"],
            nodes_to_exclude=exclude,
        )
        paths[name] = target
    return paths


def _torch_logits(model: Any, embed: WordEmbeddings, ids: np.ndarray, mask: np.ndarray) -> Logits:
    import torch

    with torch.no_grad():
        out = model(inputs_embeds=torch.from_numpy(embed(ids)), attention_mask=torch.from_numpy(mask))
    return out.start_logits.numpy(), out.end_logits.numpy()


def _ort_runner(path: Path, embed: WordEmbeddings, threads: int) -> Runner:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return lambda ids, mask: session.run(None, {"inputs_embeds": embed(ids), "attention_mask": mask})


def _read_all(dev: list[Example], tok: E5Tokenizer, run: Runner) -> list[Found]:
    """The best span of each question over its paragraph, as the reader reads it (8 windows a batch)."""
    found: list[Found] = []
    for e in dev:
        windows = make_windows(tok, e.question, [e.context])
        spans = []
        for lo in range(0, len(windows), 8):
            part = windows[lo : lo + 8]
            ids, mask = batch_arrays(part, tok.pad)
            starts, ends = run(ids, mask)
            for w, s, en in zip(part, starts, ends):
                spans.extend(window_spans(w, s, en))
        best = best_spans(spans, 1)
        found.append((best[0].start, best[0].end) if best else None)
    return found


def _score(dev: list[Example], found: list[Found], reference: list[Found], ms: float) -> dict[str, Any]:
    texts = [e.context[s[0] : s[1]] if s else "" for e, s in zip(dev, found)]
    em, f1 = squad_scores(dev, texts)
    same = sum(a == b for a, b in zip(found, reference))
    return {"em": em, "f1": f1, "same_best_span": f"{same}/{len(dev)}", "ms_per_question": round(ms, 1)}


if __name__ == "__main__":
    main()
