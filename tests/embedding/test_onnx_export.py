"""Graph edits made to exported models: the attention's NaN guards go, bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from citeqa.embedding.onnx_export import drop_nan_guards


def _attention_like(path: Path) -> None:
    """scores (with an additive mask chosen by a Where that must stay) -> softmax -> NaN guard -> MatMul."""
    zero = helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(np.array(0.0, np.float32)))
    low = helper.make_node("Constant", [], ["low"], value=numpy_helper.from_array(np.array(-1e9, np.float32)))
    spare = numpy_helper.from_array(np.array(0.0, np.float32), "spare")  # read by the guard only
    weight = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3) / 10, "weight")
    nodes = [
        zero,
        low,
        helper.make_node("Where", ["keep", "zero", "low"], ["bias"]),  # not a guard: stays
        helper.make_node("Add", ["scores", "bias"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["p"], axis=-1),
        helper.make_node("IsNaN", ["p"], ["nan"]),
        helper.make_node("Where", ["nan", "spare", "p"], ["guarded"]),
        helper.make_node("MatMul", ["guarded", "weight"], ["out"]),
    ]
    graph = helper.make_graph(
        nodes,
        "attention",
        [
            helper.make_tensor_value_info("scores", TensorProto.FLOAT, [2, 4]),
            helper.make_tensor_value_info("keep", TensorProto.BOOL, [2, 4]),
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 3])],
        [spare, weight],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def _run(path: Path, feeds: dict) -> np.ndarray:
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def test_nan_guards_are_dropped_and_the_outputs_stay_bit_for_bit(tmp_path: Path) -> None:
    path = tmp_path / "model.onnx"
    _attention_like(path)
    rng = np.random.default_rng(0)
    feeds = {
        "scores": rng.standard_normal((2, 4)).astype(np.float32),
        "keep": np.array([[True, True, False, False], [True, False, True, True]]),
    }
    before = _run(path, feeds)

    assert drop_nan_guards(path) == 1
    graph = onnx.load(str(path)).graph
    assert [n.op_type for n in graph.node] == ["Constant", "Constant", "Where", "Add", "Softmax", "MatMul"]
    assert graph.node[-1].input[0] == "p"
    assert [t.name for t in graph.initializer] == ["weight"]  # the guard's own constant went with it
    assert np.array_equal(_run(path, feeds), before)
    assert drop_nan_guards(path) == 0  # nothing left to drop


def test_a_nan_test_the_model_also_outputs_is_not_a_guard(tmp_path: Path) -> None:
    path = tmp_path / "model.onnx"
    _attention_like(path)
    model = onnx.load(str(path))
    model.graph.output.append(helper.make_tensor_value_info("nan", TensorProto.BOOL, [2, 4]))
    onnx.save(model, str(path))

    assert drop_nan_guards(path) == 0
    assert "IsNaN" in [n.op_type for n in onnx.load(str(path)).graph.node]


def test_exports_of_weights_that_are_gone_or_changed_are_removed(tmp_path: Path) -> None:
    from citeqa.embedding.onnx_export import _record_source, remove_orphans

    exports, models = tmp_path / "onnx", tmp_path / "models"
    models.mkdir()
    for name in ("live", "changed", "gone", "unrecorded"):
        (exports / name).mkdir(parents=True)
        (exports / name / "model.onnx").write_bytes(b"graph")
        weights = models / f"{name}.safetensors"
        weights.write_bytes(b"weights")
        if name != "unrecorded":
            _record_source(exports / name, weights)
    (models / "changed.safetensors").write_bytes(b"other weights")  # a model updated in place
    (models / "gone.safetensors").unlink()  # its virtual environment removed

    removed = remove_orphans(exports)

    assert sorted(p.name for p in removed) == ["changed", "gone"]
    assert sorted(p.name for p in exports.iterdir()) == ["live", "unrecorded"]
    assert (exports / "live" / "model.onnx").read_bytes() == b"graph"
