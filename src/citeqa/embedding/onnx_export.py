"""Exporting a sentence-transformers model folder to ONNX, once, into citeqa's cache folder.

The export needs torch, transformers and onnx and downloads nothing; its file is named by the
model folder, its weights file and the recipe (:func:`exported`), written under a lock so two
processes never export the same model at once. :func:`quantize_matmuls` makes the int8 copy
(``onnx-int8``); the trained reader's build (:mod:`citeqa.reader.onnx_build`) uses it too.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypedDict

from citeqa.errors import ModelError

if TYPE_CHECKING:
    import onnx

_INT8_FILE = "model-int8-matmul.onnx"  #: a new name for each quantisation recipe, so none is reused
_EXPORT_VERSION = "2"  #: bump when the export below changes what it writes (2: without NaN guards)
_ONNX_OPSET = 17


class OnnxLayout(TypedDict):
    """What ONNX Runtime needs of a sentence-transformers folder (:func:`citeqa.embedding.onnx_runtime.onnx_layout`)."""

    weights: Path
    pooling: Literal["mean", "cls"]
    max_seq_length: int
    lower: bool
    dimension: int


def cache_dir() -> Path:
    """Where exported ONNX models are kept: ``$CITEQA_CACHE`` or ``~/.cache/citeqa``."""
    explicit = os.environ.get("CITEQA_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "citeqa"


def _cache_key(folder: Path, weights: Path) -> str:
    """Names the export of one model folder; changes when its weights file changes."""
    stat = weights.stat()
    text = f"{_EXPORT_VERSION}|{folder.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{_ONNX_OPSET}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def exported(folder: Path, layout: OnnxLayout, quantized: bool) -> Path:
    """The cached ONNX file for ``folder``, exported (and quantised) on first use."""
    target = cache_dir() / "onnx" / _cache_key(folder, layout["weights"])
    fp32 = target / "model.onnx"
    int8 = target / _INT8_FILE
    wanted = int8 if quantized else fp32
    if wanted.is_file():
        return wanted
    try:
        target.mkdir(parents=True, exist_ok=True)
        with file_lock(target / ".lock"):
            if not fp32.is_file():
                _export(folder, fp32)
                _record_source(target, layout["weights"])
            if quantized and not int8.is_file():
                quantize_matmuls(fp32, int8)
        with contextlib.suppress(OSError):  # tidying the cache never fails an export
            remove_orphans(target.parent)
    except ModelError:
        raise
    except Exception as exc:  # OSError, torch/onnx export errors
        raise ModelError(
            f"cannot export the model in {folder} to ONNX in {target} ({type(exc).__name__}: {exc})"
        ) from exc
    return wanted


#: Beside each export: the weights file it was made from, its size and modification time.
_SOURCE = "source.json"


def _record_source(target: Path, weights: Path) -> None:
    import json

    stat = weights.stat()
    record = {"weights": str(weights.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    (target / _SOURCE).write_text(json.dumps(record) + "\n")


def remove_orphans(exports: Path) -> list[Path]:
    """Remove the exports under ``exports`` whose weights file is gone or changed (a virtual
    environment removed, a model updated: each got an export of ~100-150 MB, never used again);
    exports without a record of their source are left alone. The folders removed."""
    import json
    import shutil

    removed = []
    for folder in sorted(p for p in exports.iterdir() if p.is_dir()):
        try:
            source = json.loads((folder / _SOURCE).read_text())
            weights = Path(source["weights"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        try:
            stat = weights.stat()
            current = (stat.st_size, stat.st_mtime_ns) == (source.get("size"), source.get("mtime_ns"))
        except OSError:
            current = False
        if not current:
            with file_lock(folder / ".lock"):  # not while another process exports into it
                shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    import fcntl

    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _export(folder: Path, out: Path) -> None:
    """Export the model's transformer (token vectors) to ONNX, from local files only."""
    if importlib.util.find_spec("onnx") is None:
        raise ModelError("exporting the model to ONNX needs the onnx package; `pip install onnx`")
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(folder), local_files_only=True).eval()

    class TokenVectors(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(
            self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
        ) -> torch.Tensor:
            vectors: torch.Tensor = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            return vectors

    names = ["input_ids", "attention_mask", "token_type_ids"]
    sample = torch.ones((2, 8), dtype=torch.long)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    import warnings

    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                TokenVectors(model),
                (sample, sample, torch.zeros_like(sample)),
                str(tmp),
                input_names=names,
                output_names=["token_vectors"],
                dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "token_vectors"]},
                opset_version=_ONNX_OPSET,
                dynamo=False,
            )
        drop_nan_guards(tmp)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)


def drop_nan_guards(path: Path) -> int:
    """Remove the NaN guards torch's export puts after each attention softmax, in place; how many.

    torch exports its attention as ``Where(IsNaN(p), 0, p)`` over the softmax ``p``, so that a row
    with every key masked gives zeros rather than NaN. Our inputs never have such a row (every text
    and every reader window keeps its first token), so the guard passes ``p`` through bit for bit,
    yet it took ~16% of a read (ONNX Runtime's profile of the reader). The constants only the guards
    used go with them."""
    import onnx

    model = onnx.load(str(path))
    graph = model.graph
    nodes = list(graph.node)
    made = {out: i for i, node in enumerate(nodes) for out in node.output}
    uses: dict[str, int] = {}
    for name in [*(i for node in nodes for i in node.input), *(out.name for out in graph.output)]:
        uses[name] = uses.get(name, 0) + 1
    guards: set[int] = set()
    renamed: dict[str, str] = {}
    for i, node in enumerate(nodes):
        test = made.get(node.input[0]) if node.op_type == "Where" else None
        if test is None or nodes[test].op_type != "IsNaN" or uses[nodes[test].output[0]] != 1:
            continue
        if nodes[test].input[0] == node.input[2]:
            guards.update((i, test))
            renamed[node.output[0]] = node.input[2]
    kept = [node for i, node in enumerate(nodes) if i not in guards]
    for node in kept:
        for k, name in enumerate(node.input):
            node.input[k] = renamed.get(name, name)
    _replace_nodes(graph, kept)
    _drop_unused_constants(graph)
    onnx.save(model, str(path))
    return len(renamed)


def _replace_nodes(graph: onnx.GraphProto, nodes: list[onnx.NodeProto]) -> None:
    kept = [type(n)() for n in nodes]
    for copy, node in zip(kept, nodes):
        copy.CopyFrom(node)
    graph.ClearField("node")
    graph.node.extend(kept)


def _drop_unused_constants(graph: onnx.GraphProto) -> None:
    """Remove ``Constant`` nodes and initializers that no node or output reads any more."""
    used = {name for node in graph.node for name in node.input} | {out.name for out in graph.output}
    _replace_nodes(graph, [n for n in graph.node if n.op_type != "Constant" or any(o in used for o in n.output)])
    inits = [t for t in graph.initializer if t.name in used]
    kept = [type(t)() for t in inits]
    for copy, t in zip(kept, inits):
        copy.CopyFrom(t)
    graph.ClearField("initializer")
    graph.initializer.extend(kept)


def quantize_matmuls(fp32: Path, out: Path, *, full_range: bool = False, keep_float: Sequence[str] = ()) -> None:
    """A dynamically quantised copy of an exported model: int8 MatMul weights, one scale per column.

    Only the MatMul weights are quantised (the embedding tables and attention stay float),
    with per-channel scales and, unless ``full_range``, a 7-bit range (``reduce_range``), which avoids the int16
    saturation of the u8 x s8 kernels on CPUs without VNNI: every sum is then exact on every CPU, so
    every machine computes the same vectors. They stay nearer the float ones (cosine >= 0.98 on tests/embedding/test_embedding.py's texts, against 0.91 for the
    former all-ops, per-tensor recipe) at about the same speed (bench/encode.py measures both, and float32).
    On the dev set both recipes are within 0.01 of the float model. Activations are
    quantised per batch, so a text's vector shifts slightly with its batch-mates (batches of 16
    or 32 move the dev-set answer accuracy by about 0.01). The MatMul nodes named in
    ``keep_float`` stay float32.
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    try:
        quantize_dynamic(  # its root-logger warnings: citeqa's main filters them out (cli._QuantizerNoise)
            str(fp32),
            str(tmp),
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=not full_range,
            op_types_to_quantize=["MatMul"],
            nodes_to_exclude=list(keep_float),
        )
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
