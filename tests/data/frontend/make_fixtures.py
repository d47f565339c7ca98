#!/usr/bin/python3
"""Writes the small ONNX fixtures the frontend tests import, with the official `onnx` package, so
the importer is checked against files it did not write itself. Debian's python3 has the `onnx` and
`numpy` modules (python3-onnx, python3-numpy). Run from anywhere:

    /usr/bin/python3 tests/data/frontend/make_fixtures.py

mlp_external.onnx   x[N,4] -> MatMul W1 -> Add b1 -> Relu -> MatMul W2 -> Mul (f16 constant, Cast)
                    weights in mlp_external.bin (external data); the f16 constant is stored in
                    int32_data, as onnx.helper.make_tensor writes float16
mlp_external/       input_0.pb and output_0.pb (numpy's result) for `tessel run`
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def mlp_external():
    rng = np.random.default_rng(7)
    w1 = rng.standard_normal((4, 5)).astype(np.float32)
    b1 = rng.standard_normal(5).astype(np.float32)
    w2 = rng.standard_normal((5, 3)).astype(np.float32)
    scale = np.array([0.5, -2.0, 1.25], dtype=np.float16)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
        helper.make_node("Add", ["h", "b1"], ["hb"], name="bias1"),
        helper.make_node("Relu", ["hb"], ["r"], name="relu1"),
        helper.make_node("MatMul", ["r", "w2"], ["z"], name="fc2"),
        helper.make_node("Constant", [], ["scale16"], name="scale",
                         value=helper.make_tensor("scale16", TensorProto.FLOAT16, [3], scale)),
        helper.make_node("Cast", ["scale16"], ["scale32"], name="to_f32", to=TensorProto.FLOAT),
        helper.make_node("Mul", ["z", "scale32"], ["y"], name="scale_out"),
    ]
    graph = helper.make_graph(
        nodes, "mlp_external",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"), numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_fixtures.py")
    model.ir_version = 8
    assert model.graph.node[4].attribute[0].t.int32_data, "float16 should be stored in int32_data"
    onnx.checker.check_model(model)
    weights = os.path.join(HERE, "mlp_external.bin")
    if os.path.exists(weights):
        os.remove(weights)  # onnx appends external data to an existing file
    onnx.save_model(model, os.path.join(HERE, "mlp_external.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="mlp_external.bin", size_threshold=0)

    x = rng.standard_normal((2, 4)).astype(np.float32)
    y = (np.maximum(x @ w1 + b1, 0) @ w2) * scale.astype(np.float32)
    os.makedirs(os.path.join(HERE, "mlp_external"), exist_ok=True)
    with open(os.path.join(HERE, "mlp_external", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    with open(os.path.join(HERE, "mlp_external", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y.astype(np.float32), "y").SerializeToString())


if __name__ == "__main__":
    mlp_external()
