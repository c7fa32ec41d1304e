"""The embedding backends: which one is chosen, and that ONNX gives torch's vectors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from citeqa.embedding.onnx_runtime import onnx_layout
from citeqa.embedding.sbert import (
    BACKEND_ENV,
    MINILM,
    SentenceTransformerEmbedder,
    resolve_model_path,
    sbert_backend,
    vector_kind,
)
from citeqa.errors import ModelError


def fake_model_folder(folder: Path, pooling: str = "mean", model_type: str = "bert") -> Path:
    """The files that decide whether a sentence-transformers folder can run on ONNX."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "modules.json").write_text(
        json.dumps(
            [
                {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
            ]
        )
    )
    (folder / "config.json").write_text(json.dumps({"model_type": model_type, "hidden_size": 8}))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 64, "do_lower_case": False}))
    (folder / "tokenizer.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"weights")
    (folder / "1_Pooling").mkdir(exist_ok=True)
    (folder / "1_Pooling" / "config.json").write_text(
        json.dumps(
            {
                "pooling_mode_cls_token": pooling == "cls",
                "pooling_mode_mean_tokens": pooling == "mean",
                "pooling_mode_max_tokens": pooling == "max",
            }
        )
    )
    return folder


def test_layout_of_a_bert_folder_with_mean_or_cls_pooling(tmp_path: Path):
    mean = onnx_layout(fake_model_folder(tmp_path / "mean"))
    assert mean is not None and mean["pooling"] == "mean" and mean["max_seq_length"] == 64
    assert mean["dimension"] == 8 and not mean["lower"]
    cls = onnx_layout(fake_model_folder(tmp_path / "cls", pooling="cls"))
    assert cls is not None and cls["pooling"] == "cls"


@pytest.mark.parametrize("pooling,model_type", [("max", "bert"), ("mean", "t5")])
def test_other_models_stay_on_torch(tmp_path: Path, monkeypatch, pooling: str, model_type: str):
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    folder = fake_model_folder(tmp_path / "m", pooling=pooling, model_type=model_type)
    assert onnx_layout(folder) is None
    assert sbert_backend(str(folder)) == "torch"
    assert sbert_backend("not-a-local-folder") == "torch"


def test_supported_folder_and_default_model_choose_onnx(tmp_path: Path, monkeypatch):
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    assert sbert_backend(str(fake_model_folder(tmp_path / "m"))) == "onnx"
    assert sbert_backend(MINILM) == "onnx"
    assert onnx_layout(Path(resolve_model_path(MINILM))) is not None


def test_environment_picks_the_backend(monkeypatch):
    monkeypatch.setenv(BACKEND_ENV, "torch")
    assert sbert_backend(MINILM) == "torch"
    assert SentenceTransformerEmbedder().backend == "torch"
    monkeypatch.setenv(BACKEND_ENV, "onnx-int8")
    assert sbert_backend("anything") == "onnx-int8"
    monkeypatch.setenv(BACKEND_ENV, "gpu")
    with pytest.raises(ModelError, match=BACKEND_ENV):
        sbert_backend(MINILM)
    with pytest.raises(ModelError, match="backend"):
        SentenceTransformerEmbedder(backend="tpu")


def test_batch_size_defaults_by_backend():
    assert SentenceTransformerEmbedder(backend="onnx").batch_size == 16
    assert SentenceTransformerEmbedder(backend="torch").batch_size == 32
    assert SentenceTransformerEmbedder(backend="onnx", batch_size=5).batch_size == 5


def test_explicit_onnx_on_an_unsupported_model_is_a_model_error(tmp_path: Path):
    folder = fake_model_folder(tmp_path / "m", pooling="max")
    with pytest.raises(ModelError, match="ONNX"):
        SentenceTransformerEmbedder(str(folder), backend="onnx").encode(["x"])


def test_only_backends_of_one_vector_kind_share_an_index():
    assert vector_kind("torch") == vector_kind("onnx")
    assert vector_kind("onnx-int8") != vector_kind("onnx")


TEXTS = [
    "¿Cuántos parámetros tiene openPangu 2.0?",
    "Em que mês de 2025 o CANN foi aberto?",
    "  How much memory is the 960DT estimated to have?  ",
    "x",
    " ".join(["Un texto largo, con acentos y cifras como 4 petaFLOPS en FP4;"] * 60),  # > 256 tokens
]


@pytest.mark.slow
def test_onnx_vectors_equal_the_torch_ones():
    onnx = SentenceTransformerEmbedder(backend="onnx", batch_size=2)
    torch = SentenceTransformerEmbedder(backend="torch")
    a, b = onnx.encode(TEXTS), torch.encode(TEXTS)
    assert onnx.backend == "onnx" and a.dtype == np.float32 and a.shape == (len(TEXTS), 384)
    assert np.abs(a - b).max() < 1e-5
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(onnx.encode(TEXTS[:1]), a[:1]) or np.abs(onnx.encode(TEXTS[:1]) - a[:1]).max() < 1e-6


@pytest.mark.slow
def test_onnx_worker_threads_do_not_spin():
    embedder = SentenceTransformerEmbedder(backend="onnx")
    embedder.warm_up()
    options = embedder._model.session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


@pytest.mark.slow
def test_answering_with_onnx_never_imports_torch():
    SentenceTransformerEmbedder(backend="onnx").warm_up()  # the export, once, may use torch
    code = (
        "import sys; from citeqa.embedding.sbert import SentenceTransformerEmbedder as E; "
        "e = E(); v = e.encode(['hola']); "
        "print(e.backend, v.shape, 'torch' in sys.modules, 'sentence_transformers' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )  # same cache folder as the export
    assert out.stdout.split() == ["onnx", "(1,", "384)", "False", "False"]


class _WidthRecorder:
    """A stand-in ONNX session: token vectors made from the ids, and the batch shapes seen."""

    def __init__(self) -> None:
        self.shapes: list[tuple[int, int]] = []

    def get_inputs(self) -> list:
        return [type("Input", (), {"name": n})() for n in ("input_ids", "attention_mask", "token_type_ids")]

    def run(self, _outputs: object, feeds: dict) -> list[np.ndarray]:
        ids = feeds["input_ids"]
        self.shapes.append(ids.shape)
        hidden = np.stack([np.sin(ids * (k + 1)) for k in range(4)], axis=-1).astype(np.float32)
        return [hidden]


def test_onnx_batches_follow_word_pieces_not_characters():
    from tokenizers import Tokenizer

    from citeqa.embedding.onnx_runtime import OnnxModel

    tokenizer = Tokenizer.from_file(str(Path(resolve_model_path(MINILM)) / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=256)
    model = OnnxModel(_WidthRecorder(), tokenizer, {"pooling": "mean", "lower": False, "dimension": 4})
    # Plain English words are one piece each, digits too, so characters and pieces disagree.
    texts = ["the cat " * 8, "7 3 9 1 " * 5, "the " * 11, "1 2 3 4 5 6 7 8 9 1"]
    pieces = [len(tokenizer.encode(t).ids) for t in texts]
    by_chars = sorted(range(4), key=lambda i: -len(texts[i]))
    longest = sorted(pieces, reverse=True)
    widths = [(2, longest[0]), (2, longest[2])]  # the least padding possible
    assert [(2, max(pieces[i] for i in by_chars[s : s + 2])) for s in (0, 2)] != widths
    vectors = model.encode(texts, batch_size=2, progress=False)
    assert model.session.shapes == widths
    alone = np.vstack([model.encode([t], batch_size=1, progress=False) for t in texts])
    np.testing.assert_allclose(vectors, alone, atol=1e-6)  # each row is its own text's vector


@pytest.mark.slow
def test_int8_quantises_matmul_weights_per_channel_and_stays_near_float():
    import onnx

    from citeqa.embedding.onnx_export import exported

    folder = Path(resolve_model_path(MINILM))
    graph = onnx.load(str(exported(folder, onnx_layout(folder), quantized=True))).graph
    shapes = {i.name: list(i.dims) for i in graph.initializer}
    types = {i.name: i.data_type for i in graph.initializer}
    matmuls = [n for n in graph.node if n.op_type == "MatMulInteger"]
    assert len(matmuls) == 36  # 6 layers x (Q, K, V, output, 2 feed-forward)
    assert all(len(shapes[n.input[3]]) == 1 and shapes[n.input[3]][0] > 1 for n in matmuls)  # one scale per column
    tables = [n.input[0] for n in graph.node if n.op_type == "Gather" and n.input[0] in types]
    assert tables and all(types[t] == onnx.TensorProto.FLOAT for t in tables)  # embeddings stay float
    float32 = SentenceTransformerEmbedder(backend="onnx").encode(TEXTS)
    int8 = SentenceTransformerEmbedder(backend="onnx-int8").encode(TEXTS)
    assert (float32 * int8).sum(axis=1).min() > 0.97  # the all-ops, per-tensor recipe gave 0.91
