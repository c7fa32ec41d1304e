"""Steady-state encoder throughput: passages/s of each speed lever, on real and synthetic passages.

Run from the repository root (offline; every lever takes about an hour on 2 vCPUs, longer
when the machine is busy)::

    PYTHONPATH=src HF_HUB_OFFLINE=1 .venv/bin/python bench/encode.py --json out/encode.json

The OpenVINO levers need ``pip install openvino`` (not a project dependency: on equal
terms it was no faster than ONNX Runtime). ``--ab ROUNDS`` times the given ``--levers``
interleaved instead (see :func:`interleaved`), for example the spin-waiting A/B::

    PYTHONPATH=src HF_HUB_OFFLINE=1 .venv/bin/python bench/encode.py --ab 6 \\
        --levers ort-tokens-bs16,ort-tokens-bs16-no-spin

``--levers NAME,NAME`` runs only some (``--list`` names them), ``--synthetic N`` sets the
size of the synthetic sample (default 192 passages, made by bench/synth.py from the
corpus sentences, seed 0), ``--repeats R`` the timed runs per lever and sample.

What it measures, always on the same inputs in the same order:

* token statistics: word pieces per passage (with [CLS] and [SEP], before truncation)
  per language, and the share longer than the model's 256-piece limit;
* the machine's fp32 matmul ceiling: numpy sgemm 2048x2048x2048, 1 and 2 threads, best of 5
  (and, for 1 thread, per CPU second);
* for every lever: passages/s of the best of ``--repeats`` full encodes (the lever first
  encodes 16 real passages, untimed, to warm up), passages per CPU second (process time of all threads, median run), the padding share of
  the batches, the useful GFLOP/s achieved (model FLOPs of the unpadded, truncated
  passages divided by the best wall time) and the largest absolute difference of any
  vector component from the vectors of citeqa's current default (``citeqa-onnx``).

Wall times are taken as the best of the repeats because other work on a shared machine
only ever makes a run slower; the 1-minute load average before each lever is recorded
so a run on a busy machine can be told apart. On a busy machine, compare the ``threads1``
levers by passages per CPU second: one thread's CPU time is the work done, whoever else
runs (ideal 2-core throughput is at most twice that; multi-thread CPU time also counts
spin-waiting). Levers whose vectors differ (int8, shorter
inputs) must pass the dev-set check (``citeqa eval``) before they may be a default.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from citeqa.embedding.onnx_export import cache_dir, exported  # noqa: E402
from citeqa.embedding.onnx_runtime import onnx_layout  # noqa: E402
from citeqa.embedding.sbert import MINILM, SentenceTransformerEmbedder, resolve_model_path  # noqa: E402

LAYERS, HIDDEN, FFN, HEADS = 6, 384, 1536, 12  #: all-MiniLM-L6-v2
WARM_UP = 16  #: passages encoded, untimed, before a lever is timed


def passage_flops(tokens: int) -> float:
    """Multiply-add FLOPs (2 per MAC) of one encoder pass over ``tokens`` word pieces.

    Per layer: Q, K, V and output projections (4 n d^2 MACs), the feed-forward block
    (2 n d f MACs), attention scores and the weighted sum (2 n^2 d MACs). Embedding
    lookups, layer norms, softmax and GELU are left out (well under 2%).
    """
    n = tokens
    macs = LAYERS * (4 * n * HIDDEN * HIDDEN + 2 * n * HIDDEN * FFN + 2 * n * n * HIDDEN)
    return 2.0 * macs


def sgemm_ceiling(size: int = 2048, tries: int = 5) -> dict[str, float]:
    """Best fp32 matmul GFLOP/s of numpy's BLAS with 1 and with 2 threads."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    out: dict[str, float] = {}
    for threads in (1, 2):
        with threadpool_limits(threads):
            a @ b
            runs = [_timed(lambda: a @ b) for _ in range(tries)]
        out[f"threads_{threads}"] = round(2.0 * size**3 / min(w for w, _ in runs) / 1e9, 1)
        if threads == 1:  # one thread's CPU time is its work, however busy the machine
            out["threads_1_per_cpu_s"] = round(2.0 * size**3 / min(c for _, c in runs) / 1e9, 1)
    return out


def _timed(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall and process CPU seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


# --- inputs ----------------------------------------------------------------------------------------


def real_passages(corpus: Path) -> list[tuple[str, str]]:
    """``(lang, text)`` of every passage the indexer makes from ``corpus``, in index order."""
    from citeqa.ingest.chunking import ChunkerSettings, chunk_document
    from citeqa.ingest.documents import scan_corpus

    settings = ChunkerSettings()
    return [(c.lang, c.text) for d in scan_corpus(corpus).documents for c in chunk_document(d, settings)]


def synthetic_passages(corpus: Path, count: int, seed: int = 0) -> list[tuple[str, str]]:
    """``count`` passages recombined from the corpus sentences (bench/synth.py)."""
    import synth

    return synth.make_passages(synth.corpus_sentences(corpus), count, seed)


def token_stats(tokenizer: object, passages: list[tuple[str, str]], limit: int) -> dict[str, dict]:
    """Word pieces per passage by language (untruncated, with [CLS]/[SEP])."""
    by_lang: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for lang, text in passages:
        by_lang[lang].append((len(text), len(tokenizer.encode(text).ids)))  # type: ignore[attr-defined]
    by_lang["all"] = [x for lang in sorted(by_lang) for x in by_lang[lang]]
    stats = {}
    for lang, rows in sorted(by_lang.items()):
        chars = np.array([r[0] for r in rows])
        pieces = np.array([r[1] for r in rows])
        stats[lang] = {
            "passages": len(rows),
            "chars_mean": round(float(chars.mean()), 1),
            "pieces_mean": round(float(pieces.mean()), 1),
            "pieces_p50": int(np.median(pieces)),
            "pieces_p90": int(np.percentile(pieces, 90)),
            "pieces_max": int(pieces.max()),
            "pieces_per_char": round(float(pieces.sum() / chars.sum()), 3),
            "truncated_share": round(float((pieces > limit).mean()), 3),
        }
    return stats


# --- runners --------------------------------------------------------------------------------------

Infer = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass
class Pipeline:
    """Tokenise, batch, run a token-vector model, mean-pool and normalise (like citeqa's ONNX path).

    ``order`` is ``chars`` (longest text first, what sentence-transformers does) or
    ``tokens`` (most word pieces first, so a batch pads to nearly one length);
    ``workers`` > 1 runs that many batches at once from Python threads.
    """

    infer: Infer
    tokenizer: object
    batch_size: int
    order: str = "tokens"
    workers: int = 1
    max_length: int = 256
    padding: list[float] = field(default_factory=list)

    def encode(self, texts: list[str]) -> np.ndarray:
        self.tokenizer.enable_truncation(max_length=self.max_length)  # type: ignore[attr-defined]
        encodings = self.tokenizer.encode_batch(texts)  # type: ignore[attr-defined]
        if self.order == "tokens":
            order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        else:
            order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        batches = [order[s : s + self.batch_size] for s in range(0, len(order), self.batch_size)]
        real = sum(len(e.ids) for e in encodings)
        padded = sum(len(b) * max(len(encodings[i].ids) for i in b) for b in batches)
        self.padding.append(1.0 - real / padded)
        out = np.empty((len(texts), HIDDEN), dtype=np.float32)

        def run(rows: list[int]) -> None:
            out[rows] = self._forward([encodings[i] for i in rows])

        if self.workers > 1:
            with ThreadPoolExecutor(self.workers) as pool:
                list(pool.map(run, batches))
        else:
            for rows in batches:
                run(rows)
        return out

    def _forward(self, encodings: list) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for row, e in enumerate(encodings):
            n = len(e.ids)
            ids[row, :n] = e.ids
            mask[row, :n] = 1
            types[row, :n] = e.type_ids
        hidden = self.infer(ids, mask, types)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return (pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)).astype(np.float32)


def ort_infer(model: Path, threads: int = 2, level: str = "all", arena: bool = True, spin: bool = True) -> Infer:
    """An ONNX Runtime session on ``model`` with the given session options."""
    import onnxruntime as ort

    levels = {
        "disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = levels[level]
    options.enable_cpu_mem_arena = arena
    options.log_severity_level = 3
    if not spin:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}

    def infer(ids: np.ndarray, mask: np.ndarray, types: np.ndarray) -> np.ndarray:
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        return session.run(None, {k: v for k, v in feeds.items() if k in names})[0]

    return infer


def openvino_infer(model: Path, threads: int = 2, hint: str = "LATENCY") -> Infer:
    """OpenVINO's CPU plugin on the same ONNX file, fp32 inference precision."""
    import openvino as ov

    core = ov.Core()
    compiled = core.compile_model(
        core.read_model(str(model)),
        "CPU",
        {"PERFORMANCE_HINT": hint, "INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": "f32"},
    )
    names = {p.get_any_name() for p in compiled.inputs}
    output = compiled.output(0)
    local = __import__("threading").local()

    def infer(ids: np.ndarray, mask: np.ndarray, types: np.ndarray) -> np.ndarray:
        if not hasattr(local, "request"):
            local.request = compiled.create_infer_request()
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        result = local.request.infer({k: v for k, v in feeds.items() if k in names})
        return np.array(result[output])

    return infer


class TorchRunner:
    """citeqa's torch backend (sentence-transformers) with a fixed number of torch threads."""

    def __init__(self, threads: int, batch_size: int) -> None:
        import torch

        torch.set_num_threads(threads)
        self.embedder = SentenceTransformerEmbedder(backend="torch", batch_size=batch_size)
        self.padding: list[float] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.embedder.encode(texts)


class CiteqaRunner:
    """citeqa's own path (SentenceTransformerEmbedder, onnx or onnx-int8 backend) as the code has it."""

    def __init__(self, batch_size: int, backend: str = "onnx") -> None:
        self.embedder = SentenceTransformerEmbedder(backend=backend, batch_size=batch_size)
        self.padding: list[float] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.embedder.encode(texts)


# --- derived model files ------------------------------------------------------------------------------


def model_files(work: Path) -> dict[str, Callable[[], Path]]:
    """Lazily made model files: the citeqa export and variants derived from it in ``work``."""
    folder = Path(resolve_model_path(MINILM))
    layout = onnx_layout(folder)
    assert layout is not None
    fp32 = exported(folder, layout, quantized=False)
    work.mkdir(parents=True, exist_ok=True)

    def fused() -> Path:
        out = work / "model-fused.onnx"
        if not out.is_file():
            from onnxruntime.transformers.optimizer import optimize_model

            optimize_model(
                str(fp32), model_type="bert", num_heads=HEADS, hidden_size=HIDDEN, opt_level=1, use_gpu=False
            ).save_model_to_file(str(out))
        return out

    def quantized(source: Callable[[], Path], name: str, **kwargs: object) -> Callable[[], Path]:
        def make() -> Path:
            out = work / name
            if not out.is_file():
                from onnxruntime.quantization import quantize_dynamic

                quantize_dynamic(str(source()), str(out), **kwargs)
            return out

        return make

    from onnx import TensorProto
    from onnxruntime.quantization import QuantType

    matmul = {
        "op_types_to_quantize": ["MatMul"],
        "per_channel": True,
        "extra_options": {"DefaultTensorType": TensorProto.FLOAT},
    }  # fused ops have no inferred types
    return {
        "fp32": lambda: fp32,
        "citeqa-int8": lambda: exported(folder, layout, quantized=True),
        "int8-all-ops": quantized(lambda: fp32, "model-int8-all-ops.onnx", weight_type=QuantType.QInt8),
        "fused": fused,
        "int8-pc": quantized(lambda: fp32, "model-int8-matmul-pc.onnx", weight_type=QuantType.QInt8, **matmul),
        "int8-pc-rr": quantized(
            lambda: fp32, "model-int8-matmul-pc-rr.onnx", weight_type=QuantType.QInt8, reduce_range=True, **matmul
        ),
        "uint8-pc": quantized(lambda: fp32, "model-uint8-matmul-pc.onnx", weight_type=QuantType.QUInt8, **matmul),
        "fused-int8-pc": quantized(fused, "model-fused-int8-matmul-pc.onnx", weight_type=QuantType.QInt8, **matmul),
        "fused-int8-pc-rr": quantized(
            fused, "model-fused-int8-matmul-pc-rr.onnx", weight_type=QuantType.QInt8, reduce_range=True, **matmul
        ),
    }


# --- levers ----------------------------------------------------------------------------------------


def levers(files: dict[str, Callable[[], Path]], tokenizer_path: Path) -> dict[str, Callable[[], object]]:
    """Every lever by name: a factory for an object with ``encode(texts)`` and ``padding``."""
    from tokenizers import Tokenizer

    def tok() -> object:
        t = Tokenizer.from_file(str(tokenizer_path))
        t.no_padding()
        return t

    def ort(
        model: str = "fp32",
        bs: int = 32,
        order: str = "tokens",
        workers: int = 1,
        max_length: int = 256,
        **options: object,
    ) -> Callable[[], Pipeline]:
        return lambda: Pipeline(ort_infer(files[model](), **options), tok(), bs, order, workers, max_length)

    def ov(bs: int = 32, workers: int = 1, **options: object) -> Callable[[], Pipeline]:
        return lambda: Pipeline(openvino_infer(files["fp32"](), **options), tok(), bs, "tokens", workers)

    table: dict[str, Callable[[], object]] = {}
    for bs in (8, 16, 32, 64):
        table[f"citeqa-onnx-bs{bs}"] = lambda b=bs: CiteqaRunner(b)
    table["citeqa-int8-bs16"] = lambda: CiteqaRunner(16, "onnx-int8")
    table["ort-chars-bs32"] = ort(order="chars")
    for bs in (8, 16, 32, 64):
        table[f"ort-tokens-bs{bs}"] = ort(bs=bs)
    table["ort-tokens-bs16-threads1"] = ort(bs=16, threads=1)
    table["ort-tokens-bs16-no-spin"] = ort(bs=16, spin=False)
    table["ort-tokens-bs16-2x1thread"] = ort(bs=16, threads=1, workers=2)
    for level in ("disabled", "basic", "extended"):
        table[f"ort-tokens-bs16-opt-{level}"] = ort(bs=16, level=level)
    table["ort-tokens-bs16-no-arena"] = ort(bs=16, arena=False)
    table["ort-fused-bs16"] = ort("fused", bs=16)
    table["ort-fused-bs16-2x1thread"] = ort("fused", bs=16, threads=1, workers=2)
    table["ort-fused-bs16-threads1"] = ort("fused", bs=16, threads=1)
    table["citeqa-onnx-int8-bs16"] = ort("citeqa-int8", bs=16)
    table["ort-int8-all-ops-bs16"] = ort("int8-all-ops", bs=16)  # citeqa's onnx-int8 recipe before
    table["ort-int8-matmul-pc-bs16"] = ort("int8-pc", bs=16)
    table["ort-int8-matmul-pc-rr-bs16"] = ort("int8-pc-rr", bs=16)
    table["ort-uint8-matmul-pc-bs16"] = ort("uint8-pc", bs=16)
    table["ort-fused-int8-matmul-pc-bs16"] = ort("fused-int8-pc", bs=16)
    table["ort-int8-matmul-pc-bs16-threads1"] = ort("int8-pc", bs=16, threads=1)
    table["ort-int8-matmul-pc-rr-bs16-threads1"] = ort("int8-pc-rr", bs=16, threads=1)
    table["ort-fused-int8-matmul-pc-rr-bs16"] = ort("fused-int8-pc-rr", bs=16)
    table["ort-tokens-bs16-maxlen128"] = ort(bs=16, max_length=128)
    table["openvino-fp32-bs16"] = ov(bs=16)
    table["openvino-fp32-bs16-2x1thread"] = ov(bs=16, threads=1, workers=2, hint="THROUGHPUT")
    table["openvino-fp32-bs16-threads1"] = ov(bs=16, threads=1)
    for threads in (1, 2):
        table[f"torch-threads{threads}-bs32"] = lambda t=threads: TorchRunner(t, 32)
    table["torch-threads2-bs16"] = lambda: TorchRunner(2, 16)
    return table


def measure(runner: object, texts: list[str], repeats: int, warm_up: bool) -> tuple[dict, np.ndarray]:
    """Time ``repeats`` full encodes of ``texts``, after an untimed encode of a few when ``warm_up``."""
    if warm_up:
        runner.encode(texts[:WARM_UP])  # type: ignore[attr-defined]
    vectors, walls, cpus, drift = None, [], [], 0.0
    for _ in range(repeats):
        cpu, wall = time.process_time(), time.perf_counter()
        again = runner.encode(texts)  # type: ignore[attr-defined]
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        vectors = again if vectors is None else vectors
        drift = max(drift, float(np.abs(again - vectors).max()))
    padding = getattr(runner, "padding", [])
    best = min(walls)
    return {
        "passages_per_s": round(len(texts) / best, 2),
        "passages_per_cpu_s": round(len(texts) / float(np.median(cpus)), 2),
        "passages_per_s_median": round(len(texts) / float(np.median(walls)), 2),
        "cpu_ms_per_passage": round(1000 * float(np.median(cpus)) / len(texts), 1),
        "padding_share": round(float(padding[-1]), 3) if padding else None,
        "run_to_run_diff": float(f"{drift:.2e}"),
        "best_s": round(best, 3),
    }, vectors


def interleaved(runners: dict[str, object], texts: list[str], rounds: int) -> dict[str, dict]:
    """A/B timing: every round encodes ``texts`` once with each runner, in alternating order.

    On a shared machine, slow and quiet moments then hit all runners alike.
    """
    walls: dict[str, list[float]] = {n: [] for n in runners}
    cpus: dict[str, list[float]] = {n: [] for n in runners}
    for runner in runners.values():
        runner.encode(texts[:WARM_UP])  # type: ignore[attr-defined]
    names = list(runners)
    for k in range(rounds):
        for name in names if k % 2 == 0 else names[::-1]:
            cpu, wall = time.process_time(), time.perf_counter()
            runners[name].encode(texts)  # type: ignore[attr-defined]
            walls[name].append(time.perf_counter() - wall)
            cpus[name].append(time.process_time() - cpu)
    return {
        n: {
            "passages_per_s": round(len(texts) / min(walls[n]), 2),
            "passages_per_s_median": round(len(texts) / float(np.median(walls[n])), 2),
            "passages_per_cpu_s": round(len(texts) / float(np.median(cpus[n])), 2),
            "rounds_faster_than_first": sum(a < b for a, b in zip(walls[n], walls[names[0]])),
        }
        for n in names
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=REPO / "corpus")
    parser.add_argument("--synthetic", type=int, default=192, help="synthetic passages (0: none)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--levers", default="", help="comma-separated lever names (default: all)")
    parser.add_argument(
        "--work",
        type=Path,
        default=cache_dir() / "bench-encode",
        help="where derived model files (fused, int8) are kept",
    )
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--list", action="store_true", help="print the lever names and stop")
    parser.add_argument("--no-sgemm", action="store_true")
    parser.add_argument(
        "--ab",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="instead: interleaved A/B of the --levers on the real passages, ROUNDS rounds",
    )
    args = parser.parse_args(argv)

    folder = Path(resolve_model_path(MINILM))
    files = model_files(args.work)
    table = levers(files, folder / "tokenizer.json")
    if args.list:
        print("\n".join(table))
        return 0
    asked = [n for n in args.levers.split(",") if n] or list(table)
    unknown = [n for n in asked if n not in table]
    if unknown:
        parser.error(f"unknown levers: {', '.join(unknown)}")
    chosen = ["citeqa-onnx-bs32", *[n for n in asked if n != "citeqa-onnx-bs32"]]  # the reference vectors

    if args.ab > 0:
        texts = [t for _, t in real_passages(args.corpus)]
        results = interleaved({n: table[n]() for n in asked}, texts, args.ab)
        for name, r in results.items():
            print(
                f"{name:34s} best {r['passages_per_s']:6.2f}/s  median {r['passages_per_s_median']:6.2f}/s  "
                f"{r['passages_per_cpu_s']:6.2f}/cpu-s  rounds faster than the first lever "
                f"{r['rounds_faster_than_first']}/{args.ab}"
            )
        if args.json is not None:
            _write(args.json, {"ab_rounds": args.ab, "levers": results})
        return 0

    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    samples = {"real": real_passages(args.corpus)}
    if args.synthetic > 0:
        samples["synthetic"] = synthetic_passages(args.corpus, args.synthetic)
    report: dict = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "processor": platform.processor() or platform.machine(),
        },
        "tokens": {name: token_stats(tokenizer, p, 256) for name, p in samples.items()},
        "levers": {},
    }
    if not args.no_sgemm:
        report["sgemm_gflops"] = sgemm_ceiling()
    useful = {
        name: sum(passage_flops(min(len(tokenizer.encode(t).ids), 256)) for _, t in p) for name, p in samples.items()
    }
    report["gflop_per_passage"] = {name: round(useful[name] / len(p) / 1e9, 2) for name, p in samples.items()}

    reference: dict[str, np.ndarray] = {}
    for name in chosen:
        try:
            runner = table[name]()
        except ImportError as exc:
            print(f"{name:34s} | skipped: {exc.name} is not installed", flush=True)
            continue
        row: dict = {"load_1min": round(os.getloadavg()[0], 2)}
        for sample, passages in samples.items():
            texts = [t for _, t in passages]
            stats, vectors = measure(runner, texts, args.repeats, warm_up=sample == "real")
            reference.setdefault(sample, vectors)
            stats["max_abs_diff"] = float(f"{np.abs(vectors - reference[sample]).max():.2e}")
            stats["gflops"] = round(useful[sample] / stats["best_s"] / 1e9, 1)
            row[sample] = stats
        report["levers"][name] = row
        print(_row(name, row), flush=True)
        del runner
        if args.json is not None:  # after every lever, so a long run that stops keeps its numbers
            _write(args.json, report)
    print()
    print(_summary(report))
    return 0


def _write(path: Path, report: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def _row(name: str, row: dict) -> str:
    cells = [f"{name:34s}", f"load {row['load_1min']:5.2f}"]
    for sample in ("real", "synthetic"):
        if sample not in row:
            continue
        s = row[sample]
        pad = "   -" if s["padding_share"] is None else f"{100 * s['padding_share']:3.0f}%"
        cells.append(
            f"{sample[:4]} {s['passages_per_s']:6.2f}/s (med {s['passages_per_s_median']:6.2f}) "
            f"{s['passages_per_cpu_s']:6.2f}/cpu-s pad {pad} {s['gflops']:5.1f} GFLOP/s "
            f"diff {s['max_abs_diff']:.1e}"
        )
    return " | ".join(cells)


def _summary(report: dict) -> str:
    lines = ["word pieces per passage ([CLS]/[SEP] included, before truncation at 256):"]
    for sample, by_lang in report["tokens"].items():
        for lang, s in by_lang.items():
            lines.append(
                f"  {sample:9s} {lang:3s} n={s['passages']:4d} chars {s['chars_mean']:6.1f} "
                f"pieces mean {s['pieces_mean']:6.1f} p50 {s['pieces_p50']:4d} p90 {s['pieces_p90']:4d} "
                f"max {s['pieces_max']:4d} pieces/char {s['pieces_per_char']:.3f} "
                f"truncated {100 * s['truncated_share']:.1f}%"
            )
    lines.append(f"model GFLOP per passage: {report['gflop_per_passage']}")
    if "sgemm_gflops" in report:
        lines.append(f"numpy sgemm 2048^3 ceiling GFLOP/s: {report['sgemm_gflops']}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
