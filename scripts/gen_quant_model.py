#!/usr/bin/python3
# (Debian's python3: the `onnx` and `numpy` modules come from the python3-onnx and python3-numpy
# packages, which a pyenv or venv interpreter on the PATH may not see.)
"""Writes Tessel's QDQ-quantized sample model and its expected result.

A small ResNet-style network (a stem convolution, one residual block, one downsampling residual
block with a 1x1 shortcut, global average pooling and a classifier) in the QDQ form that ONNX
Runtime's quantization tool writes: every activation passes through QuantizeLinear ->
DequantizeLinear (uint8, scales calibrated on the sample input), weights are int8 initializers with
one scale per output channel (symmetric, zero point 0) behind a DequantizeLinear on axis 0, and
biases are int32 initializers quantized with input scale x weight scale. The graph is built with the
onnx helper (no PyTorch), weights are random with a fixed seed, and the expected output is computed
by the numpy forward pass below, with ONNX's arithmetic (float32 division, round half to even,
saturation), never by Tessel.

    scripts/gen_quant_model.py                  # resources/models/qdq_resnet.onnx, qdq_resnet/{input_0,output_0}.pb
    scripts/gen_quant_model.py --out-dir DIR    # the same, elsewhere
    scripts/gen_quant_model.py --verify resources/models   # the committed files are what it writes now

Running it twice writes identical files.
"""
import argparse
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

NAME = "qdq_resnet"
OPSET = 13


# ─── numpy: ONNX's quantization arithmetic and the float ops ────────────────────────────────────

def quantize(x, scale, zero_point):
    """ONNX QuantizeLinear on float32 x with a per-tensor scale: round half to even, saturate."""
    info = np.iinfo(zero_point.dtype)
    q = np.rint(x.astype(np.float32) / np.float32(scale)) + np.float32(zero_point)
    return np.clip(q, info.min, info.max).astype(zero_point.dtype)


def dequantize(q, scale, zero_point, axis=None):
    """ONNX DequantizeLinear: (q - zero_point) * scale in float32; per channel along `axis`."""
    scale = np.asarray(scale, dtype=np.float32)
    zero_point = np.asarray(zero_point)
    if axis is not None:
        shape = [1] * q.ndim
        shape[axis] = -1
        scale, zero_point = scale.reshape(shape), zero_point.reshape(shape)
    return (q.astype(np.int64) - zero_point.astype(np.int64)).astype(np.float32) * scale


def conv2d(x, w, b, stride, pad):
    """Float64 convolution of the float32 operands, rounded once to float32."""
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho, wo = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    cols = np.empty((n, c, kh, kw, ho, wo))
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, i:i + stride * ho:stride, j:j + stride * wo:stride]
    out = np.einsum("ncklhw,mckl->nmhw", cols, w.astype(np.float64)) + b.astype(np.float64).reshape(1, -1, 1, 1)
    return out.astype(np.float32)


def relu(x):
    return np.maximum(x, np.float32(0))


# ─── the network ────────────────────────────────────────────────────────────────────────────────

# (name, in channels, out channels, kernel, stride, pad)
CONVS = [
    ("stem", 3, 8, 3, 1, 1),
    ("block1.conv1", 8, 8, 3, 1, 1),
    ("block1.conv2", 8, 8, 3, 1, 1),
    ("block2.conv1", 8, 16, 3, 2, 1),
    ("block2.conv2", 16, 16, 3, 1, 1),
    ("block2.shortcut", 8, 16, 1, 2, 0),
]
CLASSES = 10
INPUT_SHAPE = (1, 3, 16, 16)


def float_weights():
    rng = np.random.default_rng(2024)
    weights = {}
    for name, cin, cout, k, _, _ in CONVS:
        std = np.sqrt(2.0 / (cin * k * k))
        weights[name] = ((rng.standard_normal((cout, cin, k, k)) * std).astype(np.float32),
                         (rng.standard_normal(cout) * 0.1).astype(np.float32))
    weights["fc"] = ((rng.standard_normal((CLASSES, 16)) * 0.25).astype(np.float32),
                     (rng.standard_normal(CLASSES) * 0.1).astype(np.float32))
    x = rng.standard_normal(INPUT_SHAPE).astype(np.float32)
    return weights, x


def quantized_weights(w):
    """int8, symmetric, one scale per output channel."""
    flat = np.abs(w.reshape(w.shape[0], -1)).max(axis=1)
    scale = np.where(flat > 0, flat / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(w / scale.reshape(-1, *[1] * (w.ndim - 1))), -127, 127).astype(np.int8)
    return q, scale


def activation_params(values):
    """uint8 scale and zero point covering [min(0, min), max(0, max)] of the calibration values."""
    lo, hi = min(0.0, float(values.min())), max(0.0, float(values.max()))
    scale = np.float32((hi - lo) / 255.0 if hi > lo else 1.0)
    zero_point = np.uint8(np.clip(np.rint(-lo / scale), 0, 255))
    return scale, zero_point


class Network:
    """Runs the quantized network in numpy and, with `graph`, records it as ONNX nodes. The first
    run calibrates (records every activation's range); the second uses the fixed parameters."""

    def __init__(self, weights, calibration=None):
        self.weights = weights
        self.calibration = calibration
        self.seen = {}
        self.nodes, self.initializers = [], []

    def init(self, name, array):
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def node(self, op, inputs, output, **attrs):
        self.nodes.append(helper.make_node(op, inputs, [output], name=output.replace("_out", ""), **attrs))
        return output

    def qdq(self, name, x_value, x_name):
        """QuantizeLinear -> DequantizeLinear on an activation."""
        self.seen[name] = x_value
        scale, zero_point = self.calibration[name] if self.calibration else activation_params(x_value)
        s = self.init(f"{name}.scale", np.array(scale, dtype=np.float32))
        z = self.init(f"{name}.zero_point", np.array(zero_point, dtype=np.uint8))
        q = self.node("QuantizeLinear", [x_name, s, z], f"{name}.q_out")
        dq = self.node("DequantizeLinear", [q, s, z], f"{name}.dq_out")
        q_value = quantize(x_value, scale, np.uint8(zero_point))
        return dequantize(q_value, scale, np.uint8(zero_point)), dq, scale

    def conv(self, name, x_value, x_name, x_scale):
        _, _, _, k, stride, pad = next(c for c in CONVS if c[0] == name)
        w, b = self.weights[name]
        wq, ws = quantized_weights(w)
        bq = np.rint(b / (np.float32(x_scale) * ws)).astype(np.int32)
        w_dq = self.node("DequantizeLinear", [self.init(f"{name}.weight_quantized", wq),
                                              self.init(f"{name}.weight_scale", ws),
                                              self.init(f"{name}.weight_zero_point", np.zeros(len(ws), np.int8))],
                         f"{name}.weight_dq_out", axis=0)
        b_scale = (np.float32(x_scale) * ws).astype(np.float32)
        b_dq = self.node("DequantizeLinear", [self.init(f"{name}.bias_quantized", bq),
                                              self.init(f"{name}.bias_scale", b_scale),
                                              self.init(f"{name}.bias_zero_point", np.zeros(len(ws), np.int32))],
                         f"{name}.bias_dq_out", axis=0)
        y = self.node("Conv", [x_name, w_dq, b_dq], f"{name}_out", kernel_shape=[k, k], pads=[pad] * 4,
                      strides=[stride, stride])
        w_value = dequantize(wq, ws, np.zeros(len(ws), np.int8), axis=0)
        b_value = dequantize(bq, b_scale, np.zeros(len(ws), np.int32), axis=0)
        return conv2d(x_value, w_value, b_value, stride, pad), y

    def conv_relu_qdq(self, name, x_value, x_name, x_scale):
        y_value, y = self.conv(name, x_value, x_name, x_scale)
        r = self.node("Relu", [y], f"{name}.relu_out")
        return self.qdq(f"{name}.act", relu(y_value), r)

    def forward(self, x):
        v, n, s = self.qdq("input", x, "input")
        v, n, s = self.conv_relu_qdq("stem", v, n, s)
        # Residual block: conv-relu-conv, + identity, relu.
        skip_v, skip_n = v, n
        v1, n1, s1 = self.conv_relu_qdq("block1.conv1", v, n, s)
        v2, n2 = self.conv("block1.conv2", v1, n1, s1)
        add = self.node("Add", [n2, skip_n], "block1.add_out")
        r = self.node("Relu", [add], "block1.relu_out")
        v, n, s = self.qdq("block1.out", relu(v2 + skip_v), r)
        # Downsampling block: stride-2 convs, 1x1 stride-2 shortcut.
        v1, n1, s1 = self.conv_relu_qdq("block2.conv1", v, n, s)
        v2, n2 = self.conv("block2.conv2", v1, n1, s1)
        vs, ns = self.conv("block2.shortcut", v, n, s)
        add = self.node("Add", [n2, ns], "block2.add_out")
        r = self.node("Relu", [add], "block2.relu_out")
        v, n, s = self.qdq("block2.out", relu(v2 + vs), r)
        # Classifier in float, as the quantization tool leaves a final Gemm's output.
        pooled = self.node("GlobalAveragePool", [n], "pool_out")
        flat = self.node("Flatten", [pooled], "flatten_out", axis=1)
        w, b = self.weights["fc"]
        wq, ws = quantized_weights(w)
        w_dq = self.node("DequantizeLinear", [self.init("fc.weight_quantized", wq), self.init("fc.weight_scale", ws),
                                              self.init("fc.weight_zero_point", np.zeros(len(ws), np.int8))],
                         "fc.weight_dq_out", axis=0)
        self.node("Gemm", [flat, w_dq, self.init("fc.bias", b)], "output", transB=1)
        pooled_value = v.astype(np.float64).mean(axis=(2, 3))
        w_value = dequantize(wq, ws, np.zeros(len(ws), np.int8), axis=0)
        return (pooled_value @ w_value.astype(np.float64).T + b).astype(np.float32)


def build():
    weights, x = float_weights()
    calibrating = Network(weights)
    calibrating.forward(x)
    calibration = {name: activation_params(value) for name, value in calibrating.seen.items()}
    net = Network(weights, calibration)
    y = net.forward(x)
    graph = helper.make_graph(
        net.nodes, NAME,
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, list(INPUT_SHAPE))],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, CLASSES])],
        initializer=net.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="onnx.quantize",
                              producer_version="0.1.0")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model, x, y


def write(out_dir, quiet=False):
    model, x, y = build()
    os.makedirs(os.path.join(out_dir, NAME), exist_ok=True)
    onnx.save(model, os.path.join(out_dir, f"{NAME}.onnx"))
    for file, array in (("input_0.pb", x), ("output_0.pb", y)):
        with open(os.path.join(out_dir, NAME, file), "wb") as f:
            f.write(numpy_helper.from_array(array).SerializeToString())
    if not quiet:
        print(f"{NAME}: {len(model.graph.node)} nodes, output {y.ravel().round(4).tolist()}")


def verify(committed_dir):
    with tempfile.TemporaryDirectory() as fresh:
        write(fresh, quiet=True)
        differences = 0
        for relative in (f"{NAME}.onnx", f"{NAME}/input_0.pb", f"{NAME}/output_0.pb"):
            committed = os.path.join(committed_dir, relative)
            same = os.path.exists(committed) and open(committed, "rb").read() == open(os.path.join(fresh, relative),
                                                                                       "rb").read()
            if not same:
                differences += 1
                print(f"FAIL {relative} differs from what scripts/gen_quant_model.py writes now (run it to update)")
        if differences == 0:
            print(f"ok   {committed_dir} holds the quantized sample the generator writes")
        return differences


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                          "resources", "models"))
    parser.add_argument("--verify", metavar="MODELS_DIR", help="check the committed files, then exit")
    args = parser.parse_args()
    if args.verify:
        return 1 if verify(args.verify) else 0
    write(os.path.normpath(args.out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
