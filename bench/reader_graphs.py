"""The reader's graph built other ways: how fast each reads the bench windows, and how often its best
span is the float32 model's.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/reader_graphs.py [--index index] [--rounds 7] [--out out/bench-graphs]

Every variant starts from the float32 export of the shipped weights that the build makes
(``reader.onnx_build.export_fp32``):

* ``shipped``: build recipe 5 (int8 MatMuls, 7-bit per-channel weights, each layer's feed-forward
  output float32), built as the cache builds it (``quantize_matmuls``);
* ``fused``: each layer's self-attention (Q, K, V MatMuls, the reshapes, transposes, scores,
  softmax and context) replaced by ONNX Runtime's ``com.microsoft.Attention`` with packed QKV
  weights and the 2-D mask, then quantised like recipe 5 (``QAttention``);
* ``ffn-int8``: recipe 5 with the feed-forward outputs quantised too;
* ``fused+ffn-int8``: both;
* ``fp32``: the export itself, the reference for the best spans.

The windows are those the engine's reader reads for bench/questions.json (``reader_batch.record``),
run in its batches. Per variant: ms per question (median over ``--rounds``, the variants
interleaved within each round), questions whose best span equals the float32 graph's, and the
largest start-logit difference from it. Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
from reader_batch import record

from citeqa.embedding.onnx_export import quantize_matmuls
from citeqa.reader.decode import best_spans, window_spans
from citeqa.reader.e5_file import WordEmbeddings, e5_path, read_header_file
from citeqa.reader.onnx_build import export_fp32, feed_forward_outputs
from citeqa.reader.reader import BATCH, RUN_CONFIG, session_options
from citeqa.reader.tokenizer import E5Tokenizer
from citeqa.reader.windows import batch_arrays

HEADS = 12


def fuse_attention(src: Path, dst: Path) -> int:
    """``src`` with each layer's self-attention as one ``Attention`` node; the number of layers fused."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(src))
    graph = model.graph
    weights = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    nodes = {n.name: n for n in graph.node}
    fused: dict[str, Any] = {}
    layer = 0
    while (prefix := f"/inner/bert/encoder/layer.{layer}/attention/") + "self/query/MatMul" in nodes:
        w, b = [], []
        for part in ("query", "key", "value"):
            matmul, add = nodes[f"{prefix}self/{part}/MatMul"], nodes[f"{prefix}self/{part}/Add"]
            w.append(weights[matmul.input[1]])
            b.append(next(weights[i] for i in add.input if i in weights))
        context = nodes[f"{prefix}output/dense/MatMul"].input[0]
        names = f"layer.{layer}.qkv.weight", f"layer.{layer}.qkv.bias"
        graph.initializer.extend(
            [
                numpy_helper.from_array(np.concatenate(w, axis=1), names[0]),
                numpy_helper.from_array(np.concatenate(b), names[1]),
            ]
        )
        fused[context] = helper.make_node(
            "Attention",
            [matmul.input[0], *names, "mask_i32"],
            [context],
            name=f"Attention_{layer}",
            domain="com.microsoft",
            num_heads=HEADS,
        )
        layer += 1
    order = [helper.make_node("Cast", ["attention_mask"], ["mask_i32"], to=TensorProto.INT32)]
    order += [fused.get(n.output[0], n) for n in graph.node]
    needed, kept = {o.name for o in graph.output}, []
    for node in reversed(order):  # drop what no output needs any more
        if any(o in needed for o in node.output):
            kept.append(node)
            needed.update(i for i in node.input if i)
    del graph.node[:]
    graph.node.extend(reversed(kept))
    live = [i for i in graph.initializer if i.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(live)
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, str(dst))
    return layer


def quantised(src: Path, dst: Path, keep_float: list[str]) -> Path:
    """Recipe 5's quantisation (``quantize_matmuls``) extended to the fused ``Attention`` nodes' weights,
    ``keep_float`` left float32."""
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(src), str(dst), weight_type=QuantType.QInt8, per_channel=True, reduce_range=True,
        op_types_to_quantize=["MatMul", "Attention"], nodes_to_exclude=keep_float,
        extra_options={"DefaultTensorType": TensorProto.FLOAT},
    )  # fmt: skip
    return dst


def variants(out: Path) -> dict[str, Path]:
    """The graphs compared, built under ``out`` from the shipped weights."""
    from citeqa.reader.delta import read_delta
    from citeqa.reader.e5_file import read_e5
    from citeqa.reader.onnx_build import shipped_path
    from citeqa.reader.torch_model import base_state, build_reader

    out.mkdir(parents=True, exist_ok=True)
    weights = read_e5()
    fp32, fused = out / "fp32.onnx", out / "fused-fp32.onnx"
    export_fp32(
        build_reader(weights, read_delta(shipped_path(), base_state(weights), weights.sha256)).eval(),
        weights.config.hidden,
        fp32,
    )
    fuse_attention(fp32, fused)
    recipe5, ffn_int8 = out / "recipe5.onnx", out / "ffn-int8.onnx"
    quantize_matmuls(fp32, recipe5, keep_float=feed_forward_outputs(fp32))
    quantize_matmuls(fp32, ffn_int8)
    return {
        "fp32": fp32,
        "shipped": recipe5,
        "fused": quantised(fused, out / "fused.onnx", feed_forward_outputs(fused)),
        "ffn-int8": ffn_int8,
        "fused+ffn-int8": quantised(fused, out / "fused-ffn-int8.onnx", []),
    }


def main(argv: list[str] | None = None) -> int:
    import onnxruntime as ort

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--index", default="index")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--out", type=Path, default=Path("out/bench-graphs"))
    args = p.parse_args(argv)
    _, groups = record(args.index)
    head = read_header_file(e5_path())
    pad, embed = E5Tokenizer(head.vocab).pad, WordEmbeddings(e5_path(), head)
    sessions: dict[str, Any] = {}
    for name, path in variants(args.out).items():
        sessions[name] = ort.InferenceSession(str(path), session_options(ort), providers=["CPUExecutionProvider"])
    run_options = ort.RunOptions()
    for key, value in RUN_CONFIG.items():
        run_options.add_run_config_entry(key, value)
    feeds = []
    for windows in groups:
        batches = [windows[i : i + BATCH] for i in range(0, len(windows), BATCH)]
        arrays = [batch_arrays(b, pad) for b in batches]
        feeds.append(
            [(b, {"inputs_embeds": embed(ids), "attention_mask": mask}) for b, (ids, mask) in zip(batches, arrays)]
        )

    def read(session: Any) -> tuple[list[Any], list[np.ndarray]]:
        best, starts = [], []
        for question in feeds:
            spans = []
            for batch, feed in question:
                s, e = session.run(None, feed, run_options)
                starts.append(np.where(feed["attention_mask"] > 0, s, 0.0))
                for w, ws, we in zip(batch, s, e):
                    spans.extend(window_spans(w, ws, we, 10))
            top = best_spans(spans, 1)
            best.append((top[0].passage, top[0].start, top[0].end) if top else None)
        return best, starts

    outputs = {name: read(s) for name, s in sessions.items()}
    times: dict[str, list[float]] = {name: [] for name in sessions}
    for _ in range(args.rounds):
        for name, session in sessions.items():
            t0 = time.perf_counter()
            for question in feeds:
                for _, feed in question:
                    session.run(None, feed, run_options)
            times[name].append((time.perf_counter() - t0) * 1000 / len(feeds))
    ref_best, ref_starts = outputs["fp32"]
    results = {}
    for name, (best, starts) in outputs.items():
        results[name] = {
            "ms_per_question": round(statistics.median(times[name]), 1),
            "same_best_span_as_fp32": f"{sum(a == b for a, b in zip(best, ref_best))}/{len(feeds)}",
            "max_start_logit_diff": round(max(float(np.max(np.abs(a - b))) for a, b in zip(starts, ref_starts)), 3),
        }
        print(f"{name:16} " + ", ".join(f"{k} {v}" for k, v in results[name].items()), flush=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
