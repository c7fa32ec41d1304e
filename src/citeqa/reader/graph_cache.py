"""The reader's graph as ONNX Runtime optimises it, saved beside the built file so that later loads
skip the optimising.

ONNX Runtime optimises a graph each time a session is made from it (fusing attention, layer
norms, GELU): about half the time making a session of the reader takes. The first load
saves the optimised graph (:data:`SAVED`, at the ``EXTENDED`` level: fusions only, nothing tied
to this CPU's layout; ``ALL`` gave the same graph for this model) and :data:`STAMP` records what
it came from: :data:`VERSION`, the ONNX Runtime version and the sha256 of the built file, with the
sha256 of the saved one. Later loads read the saved file once, check those bytes against the
stamp and load them with optimising off (the start and end logits are bit-identical, see
tests/reader/test_reader.py). A saved file that is missing, damaged, from another build or another
Runtime, or that the Runtime refuses, is made again; one that cannot be written (a read-only
cache) only costs the optimising again. The stamp is this module's own: the build's
(``build.json``, :data:`~citeqa.reader.onnx_build.RECIPE`) is not touched.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from citeqa.reader.onnx_build import checked_bytes, sha256_hex

#: Bump when what is saved or how it is loaded changes: an old saved graph is then made again.
VERSION = 1
SAVED = "reader-int8.opt.onnx"
STAMP = "optimized.json"
PROVIDERS = ["CPUExecutionProvider"]
_log = logging.getLogger(__name__)


def open_session(built: Path, source_sha256: str, source: Callable[[], bytes], options: Callable[[], Any]) -> Any:
    """An ``onnxruntime.InferenceSession`` of the built reader at ``built`` (whose checked bytes have
    ``source_sha256``), from its saved optimised graph when that checks out (:func:`saved_session`),
    else from ``source()`` (the built file's checked bytes, asked for only then), saving the optimised
    graph for next time.

    ``options`` makes a fresh ``SessionOptions`` (threads, logging); the optimisation level and
    where the graph is saved are set here."""
    session = saved_session(built.parent, source_sha256, options)
    return session if session is not None else _optimised(built.parent, source(), options)


def saved_session(folder: Path, source_sha256: str, options: Callable[[], Any]) -> Any | None:
    """A session of the optimised graph saved in ``folder`` when its bytes check out against its
    stamp and that stamp names the built file of sha256 ``source_sha256``; else None. Only the saved
    bytes are read and parsed: a load that gets a session here never reads the built file."""
    import onnxruntime as ort

    stamp = {"version": VERSION, "runtime": ort.__version__, "source": source_sha256}
    found = checked_bytes(folder / STAMP, folder / SAVED, stamp, "saved")
    if found is None:
        return None
    saved = found[0]
    del found
    opts = options()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        return ort.InferenceSession(saved, opts, providers=PROVIDERS)
    except Exception as exc:  # checked bytes the Runtime still refuses: the caller makes it again
        _log.warning("citeqa: cannot load the optimised reader in %s (%s); making it again", folder, exc)
        return None


def _optimised(folder: Path, content: bytes, options: Callable[[], Any]) -> Any:
    """A session of the built file's ``content`` at the ``EXTENDED`` level; the graph it optimised is
    saved with its stamp when the folder takes it (written aside, then moved in: a load never sees half)."""
    import onnxruntime as ort

    # stamped with the bytes optimised (a rebuild between the check and source() changes them)
    stamp = {"version": VERSION, "runtime": ort.__version__, "source": sha256_hex(content)}
    tmp = folder / f".{SAVED}.{os.getpid()}"
    opts = options()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    opts.optimized_model_filepath = str(tmp)
    try:
        try:
            session = ort.InferenceSession(content, opts, providers=PROVIDERS)
        except Exception:  # most often the folder refused the file: the same without saving
            opts = options()
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
            return ort.InferenceSession(content, opts, providers=PROVIDERS)
        _save(tmp, stamp)
        return session
    finally:
        with contextlib.suppress(OSError):  # gone once moved in; a folder in its way is left alone
            tmp.unlink(missing_ok=True)


def _save(tmp: Path, stamp: dict[str, Any]) -> None:
    """Move the graph the Runtime wrote to ``tmp`` into place and write its stamp beside it."""
    folder = tmp.parent
    side = folder / f".{STAMP}.{os.getpid()}"
    try:
        content = tmp.read_bytes()
        os.replace(tmp, folder / SAVED)
        side.write_text(json.dumps({**stamp, "saved": sha256_hex(content)}) + "\n")
        os.replace(side, folder / STAMP)
    except OSError as exc:  # a read-only or full cache: the next load optimises again
        _log.debug("citeqa: cannot save the optimised reader in %s (%s)", folder, exc)
        side.unlink(missing_ok=True)
