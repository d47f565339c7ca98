#!/usr/bin/python3
# (Debian's python3: the `onnx` and `numpy` modules come from the python3-onnx and python3-numpy
# packages, which a pyenv or venv interpreter on the PATH may not see.)
"""Writes Tessel's sample models and their expected results.

The models look like PyTorch's ONNX exporter output (opset 13-17, node names such as
"/layer1/conv1/Conv", Constant nodes, Shape->Gather->Unsqueeze->Concat->Reshape chains), but are
built here with the onnx helper so no PyTorch is needed. For each model the expected output is
computed by an independent numpy forward pass written below (float64, from the same float32
weights), never by Tessel, and the node counts and FLOPs the end-to-end test checks against
`tessel inspect --json` are counted here from the layer shapes.

    scripts/gen_models.py                    # resources/models/<name>.onnx and <name>/{input_0,output_0}.pb, expected.json
    scripts/gen_models.py --out-dir DIR      # the same, elsewhere
    scripts/gen_models.py --resnet50 OUT.onnx  # ResNet-50-sized model, random weights (~100 MB), for benchmarks
    scripts/gen_models.py --self-check [DIR] --verify resources/models
        # checks the numpy ops against the ONNX node tests, and the committed files against the generator

Seeds are fixed: running it twice writes identical files.
"""
import argparse
import collections
import json
import math
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

PRODUCER = ("pytorch", "2.1.0")


# ─── Building graphs the way the PyTorch exporter names them ────────────────────────────────────

class Exporter:
    """Collects nodes and initializers, naming them like torch.onnx.export does.

    A node in module scope "/layer1/conv1" of type Conv is "/layer1/conv1/Conv"; the k-th repeat of
    the same name in a scope gets "_k"; its outputs are "<node name>_output_<i>".
    """

    def __init__(self, opset):
        self.opset = opset
        self.nodes = []
        self.initializers = []
        self.repeats = collections.Counter()
        self.flops = {}  # node name -> FLOPs, for the ops whose count is unambiguous (see below)

    def node(self, scope, op, inputs, output=None, **attrs):
        base = f"{scope}/{op}"
        k = self.repeats[base]
        self.repeats[base] += 1
        name = base if k == 0 else f"{base}_{k}"
        out = output or f"{name}_output_0"
        self.nodes.append(helper.make_node(op, inputs, [out], name=name, **attrs))
        return out

    def constant(self, scope, value):
        tensor = numpy_helper.from_array(np.asarray(value))
        return self.node(scope, "Constant", [], value=tensor)

    def param(self, name, array):
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array, dtype=np.float32), name))
        return name

    def last_node_name(self):
        return self.nodes[-1].name

    def model(self, graph_name, input_name, input_shape, output_name, output_shape):
        graph = helper.make_graph(
            self.nodes, graph_name,
            [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, input_shape)],
            [helper.make_tensor_value_info(output_name, TensorProto.FLOAT, output_shape)],
            initializer=self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                                  producer_name=PRODUCER[0], producer_version=PRODUCER[1])
        model.ir_version = 8
        onnx.checker.check_model(model)
        return model

    # Layers that record their FLOPs: 2 per multiply-accumulate, plus one per output element for a
    # bias. Element-wise ops are left out because conventions differ (Erf, Softmax...).
    def conv(self, scope, x, w_name, w, b_name, b, out_hw, stride=1, pad=0, group=1, output=None):
        inputs = [x, self.param(w_name, w)] + ([self.param(b_name, b)] if b is not None else [])
        kh, kw = w.shape[2], w.shape[3]
        y = self.node(scope, "Conv", inputs, output, dilations=[1, 1], group=group, kernel_shape=[kh, kw],
                      pads=[pad] * 4, strides=[stride, stride])
        outputs = w.shape[0] * out_hw[0] * out_hw[1]  # batch 1
        self.flops[self.last_node_name()] = 2 * outputs * (w.shape[1] * kh * kw) + (outputs if b is not None else 0)
        return y

    def gemm(self, scope, x, w_name, w, b_name, b, rows, output=None):
        y = self.node(scope, "Gemm", [x, self.param(w_name, w), self.param(b_name, b)], output,
                      alpha=1.0, beta=1.0, transB=1)
        outputs = rows * w.shape[0]
        self.flops[self.last_node_name()] = 2 * outputs * w.shape[1] + outputs
        return y

    def matmul(self, scope, a, b, a_shape, b_shape, output=None):
        """MatMul of two values (b may be an initializer name); shapes are for the FLOPs."""
        y = self.node(scope, "MatMul", [a, b], output)
        batch = int(np.prod(np.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2])))) if len(a_shape) > 2 else 1
        self.flops[self.last_node_name()] = 2 * batch * a_shape[-2] * a_shape[-1] * b_shape[-1]
        return y


# ─── numpy reference ops (float64) ──────────────────────────────────────────────────────────────

def np_conv2d(x, w, b, stride=1, pad=0, group=1):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho = (h + 2 * pad - kh) // stride + 1
    wo = (wd + 2 * pad - kw) // stride + 1
    mg = m // group
    out = np.zeros((n, m, ho, wo))
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        cols = np.empty((n, cg, kh, kw, ho, wo))
        for i in range(kh):
            for j in range(kw):
                cols[:, :, i, j] = xs[:, :, i:i + stride * ho:stride, j:j + stride * wo:stride]
        out[:, g * mg:(g + 1) * mg] = np.einsum("ncklhw,mckl->nmhw", cols, w[g * mg:(g + 1) * mg])
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


def np_batchnorm(x, gamma, beta, mean, var, eps=1e-5):
    shape = (1, -1, 1, 1)
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * gamma.reshape(shape) + beta.reshape(shape)


def np_maxpool(x, k, stride, pad):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=-np.inf)
    ho = (h + 2 * pad - k) // stride + 1
    wo = (w + 2 * pad - k) // stride + 1
    out = np.full((n, c, ho, wo), -np.inf)
    for i in range(k):
        for j in range(k):
            out = np.maximum(out, xp[:, :, i:i + stride * ho:stride, j:j + stride * wo:stride])
    return out


def np_layernorm(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_gelu_erf(x):
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def np_hardswish(x):
    return x * np.clip(x / 6.0 + 0.5, 0.0, 1.0)


# ─── weights ────────────────────────────────────────────────────────────────────────────────────

def he(rng, shape, fan_in):
    return (rng.standard_normal(shape) * math.sqrt(2.0 / fan_in)).astype(np.float32)


def small(rng, shape, scale=0.1):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def bn_params(rng, c):
    return dict(gamma=rng.uniform(0.5, 1.5, c).astype(np.float32), beta=small(rng, c),
                mean=small(rng, c), var=rng.uniform(0.5, 1.5, c).astype(np.float32))


def f64(a):
    return np.asarray(a, dtype=np.float64)


# ─── the sample models ──────────────────────────────────────────────────────────────────────────
# Each returns (onnx model, input array, numpy forward function of the input).

def resnet_block():
    """A ResNet basic block with its head, batch norm kept (exported with training=PRESERVE)."""
    rng = np.random.default_rng(1001)
    c, hw, classes = 16, 16, 10
    w1, w2 = he(rng, (c, c, 3, 3), c * 9), he(rng, (c, c, 3, 3), c * 9)
    bn1, bn2 = bn_params(rng, c), bn_params(rng, c)
    fc_w, fc_b = he(rng, (classes, c), c), small(rng, classes)
    x = rng.standard_normal((1, c, hw, hw)).astype(np.float32)

    e = Exporter(opset=13)
    t = e.conv("/layer1/conv1", "input", "layer1.conv1.weight", w1, None, None, (hw, hw), pad=1)

    def bn(scope, prefix, v, p):
        inputs = [v, e.param(f"{prefix}.weight", p["gamma"]), e.param(f"{prefix}.bias", p["beta"]),
                  e.param(f"{prefix}.running_mean", p["mean"]), e.param(f"{prefix}.running_var", p["var"])]
        return e.node(scope, "BatchNormalization", inputs, epsilon=1e-5, momentum=0.9)

    t = bn("/layer1/bn1", "layer1.bn1", t, bn1)
    t = e.node("/layer1/relu", "Relu", [t])
    t = e.conv("/layer1/conv2", t, "layer1.conv2.weight", w2, None, None, (hw, hw), pad=1)
    t = bn("/layer1/bn2", "layer1.bn2", t, bn2)
    t = e.node("/layer1", "Add", [t, "input"])
    t = e.node("/layer1/relu_1", "Relu", [t])
    t = e.node("/maxpool", "MaxPool", [t], ceil_mode=0, dilations=[1, 1], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
               strides=[2, 2])
    t = e.node("/avgpool", "GlobalAveragePool", [t])
    t = e.node("", "Flatten", [t], axis=1)
    e.gemm("/fc", t, "fc.weight", fc_w, "fc.bias", fc_b, rows=1, output="output")
    model = e.model("main_graph", "input", [1, c, hw, hw], "output", [1, classes])

    def forward(inp):
        y = np_conv2d(f64(inp), f64(w1), None, pad=1)
        y = np.maximum(np_batchnorm(y, *(f64(bn1[k]) for k in ("gamma", "beta", "mean", "var"))), 0)
        y = np_conv2d(y, f64(w2), None, pad=1)
        y = np_batchnorm(y, *(f64(bn2[k]) for k in ("gamma", "beta", "mean", "var")))
        y = np.maximum(y + f64(inp), 0)
        y = np_maxpool(y, 3, 2, 1).mean(axis=(2, 3))
        return y @ f64(fc_w).T + f64(fc_b)

    return model, x, forward, e.flops


def mlp():
    """Linear-ReLU-Linear-ReLU-Linear on a batch of 4 vectors (2-D input: the exporter uses Gemm)."""
    rng = np.random.default_rng(1002)
    sizes = [64, 128, 128, 10]
    weights = [(he(rng, (sizes[i + 1], sizes[i]), sizes[i]), small(rng, sizes[i + 1])) for i in range(3)]
    x = rng.standard_normal((4, sizes[0])).astype(np.float32)

    e = Exporter(opset=14)
    t = "input"
    for i, (w, b) in enumerate(weights):
        layer = 2 * i  # nn.Sequential indices: Linear, ReLU, Linear, ReLU, Linear
        last = i == len(weights) - 1
        t = e.gemm(f"/layers/layers.{layer}", t, f"layers.{layer}.weight", w, f"layers.{layer}.bias", b, rows=4,
                   output="output" if last else None)
        if not last:
            t = e.node(f"/layers/layers.{layer + 1}", "Relu", [t])
    model = e.model("main_graph", "input", [4, sizes[0]], "output", [4, sizes[-1]])

    def forward(inp):
        y = f64(inp)
        for i, (w, b) in enumerate(weights):
            y = y @ f64(w).T + f64(b)
            if i < len(weights) - 1:
                y = np.maximum(y, 0)
        return y

    return model, x, forward, e.flops


def mobilenet_block():
    """MobileNetV3-style inverted residual, batch norm folded into the convs as the exporter does in
    eval mode: 1x1 expand -> ReLU6 (Clip) -> depthwise 3x3 -> HardSwish -> 1x1 project -> + input."""
    rng = np.random.default_rng(1003)
    c, expanded, hw = 16, 64, 16
    w_expand, b_expand = he(rng, (expanded, c, 1, 1), c), small(rng, expanded)
    w_dw, b_dw = he(rng, (expanded, 1, 3, 3), 9), small(rng, expanded)
    w_project, b_project = he(rng, (c, expanded, 1, 1), expanded) * np.float32(0.5), small(rng, c)
    x = rng.standard_normal((1, c, hw, hw)).astype(np.float32)

    e = Exporter(opset=15)
    s = "/block"
    t = e.conv(f"{s}/block.0/block.0.0", "input", "onnx::Conv_201", w_expand, "onnx::Conv_202", b_expand, (hw, hw))
    lo = e.constant(f"{s}/block.0/block.0.2", np.array(0.0, dtype=np.float32))
    hi = e.constant(f"{s}/block.0/block.0.2", np.array(6.0, dtype=np.float32))
    t = e.node(f"{s}/block.0/block.0.2", "Clip", [t, lo, hi])
    t = e.conv(f"{s}/block.1/block.1.0", t, "onnx::Conv_204", w_dw, "onnx::Conv_205", b_dw, (hw, hw), pad=1,
               group=expanded)
    t = e.node(f"{s}/block.1/block.1.2", "HardSwish", [t])
    t = e.conv(f"{s}/block.2/block.2.0", t, "onnx::Conv_207", w_project, "onnx::Conv_208", b_project, (hw, hw))
    e.node("", "Add", [t, "input"], output="output")
    model = e.model("main_graph", "input", [1, c, hw, hw], "output", [1, c, hw, hw])

    def forward(inp):
        y = np.clip(np_conv2d(f64(inp), f64(w_expand), f64(b_expand)), 0.0, 6.0)
        y = np_hardswish(np_conv2d(y, f64(w_dw), f64(b_dw), pad=1, group=expanded))
        return np_conv2d(y, f64(w_project), f64(b_project)) + f64(inp)

    return model, x, forward, e.flops


def attention_block():
    """A pre-norm transformer encoder block: x + attn(ln1(x)), then + mlp(ln2(.)) with Erf GELU."""
    rng = np.random.default_rng(1004)
    batch, seq, dim, heads, hidden = 1, 8, 32, 4, 64
    head_dim = dim // heads
    p = {
        "ln1.weight": rng.uniform(0.8, 1.2, dim), "ln1.bias": small(rng, dim),
        "q.w": he(rng, (dim, dim), dim), "q.b": small(rng, dim),
        "k.w": he(rng, (dim, dim), dim), "k.b": small(rng, dim),
        "v.w": he(rng, (dim, dim), dim), "v.b": small(rng, dim),
        "out.w": he(rng, (dim, dim), dim) * 0.5, "out.b": small(rng, dim),
        "ln2.weight": rng.uniform(0.8, 1.2, dim), "ln2.bias": small(rng, dim),
        "fc1.w": he(rng, (dim, hidden), dim), "fc1.b": small(rng, hidden),
        "fc2.w": he(rng, (hidden, dim), hidden) * 0.5, "fc2.b": small(rng, dim),
    }
    p = {k: np.asarray(v, dtype=np.float32) for k, v in p.items()}
    x = rng.standard_normal((batch, seq, dim)).astype(np.float32)

    e = Exporter(opset=17)
    # Initializer names as the exporter writes them: biases keep the module path, the transposed
    # Linear weights that feed MatMul get "onnx::MatMul_<n>".
    names = {"q.w": "onnx::MatMul_301", "k.w": "onnx::MatMul_302", "v.w": "onnx::MatMul_303",
             "out.w": "onnx::MatMul_304", "fc1.w": "onnx::MatMul_305", "fc2.w": "onnx::MatMul_306",
             "q.b": "attn.q_proj.bias", "k.b": "attn.k_proj.bias", "v.b": "attn.v_proj.bias",
             "out.b": "attn.out_proj.bias", "fc1.b": "mlp.fc1.bias", "fc2.b": "mlp.fc2.bias",
             "ln1.weight": "ln1.weight", "ln1.bias": "ln1.bias", "ln2.weight": "ln2.weight", "ln2.bias": "ln2.bias"}
    w = {k: e.param(names[k], v) for k, v in p.items()}

    def linear(scope, v, wk, bk, in_dim, out_dim):
        y = e.matmul(scope, v, w[wk], (batch, seq, in_dim), (in_dim, out_dim))
        return e.node(scope, "Add", [w[bk], y])

    def dim_of(scope, v, axis):
        """Shape -> Gather(axis) -> Unsqueeze: one dimension as a 1-element tensor."""
        shape = e.node(scope, "Shape", [v])
        index = e.constant(scope, np.array(axis, dtype=np.int64))
        d = e.node(scope, "Gather", [shape, index], axis=0)
        axes = e.constant(scope, np.array([0], dtype=np.int64))
        return e.node(scope, "Unsqueeze", [d, axes])

    def split_heads(scope, v, perm):
        """x.view(B, T, H, dh).permute(perm), with the view's shape built from x's runtime shape."""
        b, t = dim_of(scope, v, 0), dim_of(scope, v, 1)
        h = e.constant(scope, np.array([heads], dtype=np.int64))
        d = e.constant(scope, np.array([head_dim], dtype=np.int64))
        shape = e.node(scope, "Concat", [b, t, h, d], axis=0)
        r = e.node(scope, "Reshape", [v, shape])
        return e.node(scope, "Transpose", [r], perm=perm)

    t = e.node("/ln1", "LayerNormalization", ["input", w["ln1.weight"], w["ln1.bias"]], axis=-1, epsilon=1e-5)
    q = linear("/attn/q_proj", t, "q.w", "q.b", dim, dim)
    k = linear("/attn/k_proj", t, "k.w", "k.b", dim, dim)
    v = linear("/attn/v_proj", t, "v.w", "v.b", dim, dim)
    q = split_heads("/attn", q, [0, 2, 1, 3])
    k = split_heads("/attn", k, [0, 2, 3, 1])
    v = split_heads("/attn", v, [0, 2, 1, 3])
    s = e.matmul("/attn", q, k, (batch, heads, seq, head_dim), (batch, heads, head_dim, seq))
    s = e.node("/attn", "Div", [s, e.constant("/attn", np.array(math.sqrt(head_dim), dtype=np.float32))])
    s = e.node("/attn", "Softmax", [s], axis=-1)
    o = e.matmul("/attn", s, v, (batch, heads, seq, seq), (batch, heads, seq, head_dim))
    o = e.node("/attn", "Transpose", [o], perm=[0, 2, 1, 3])
    b_dim, t_dim = dim_of("/attn", o, 0), dim_of("/attn", o, 1)
    shape = e.node("/attn", "Concat", [b_dim, t_dim, e.constant("/attn", np.array([dim], dtype=np.int64))], axis=0)
    o = e.node("/attn", "Reshape", [o, shape])
    o = linear("/attn/out_proj", o, "out.w", "out.b", dim, dim)
    r = e.node("", "Add", ["input", o])

    t = e.node("/ln2", "LayerNormalization", [r, w["ln2.weight"], w["ln2.bias"]], axis=-1, epsilon=1e-5)
    t = linear("/mlp/fc1", t, "fc1.w", "fc1.b", dim, hidden)
    g = e.node("/mlp/act", "Div", [t, e.constant("/mlp/act", np.array(1.4142135381698608, dtype=np.float32))])
    g = e.node("/mlp/act", "Erf", [g])
    g = e.node("/mlp/act", "Add", [g, e.constant("/mlp/act", np.array(1.0, dtype=np.float32))])
    g = e.node("/mlp/act", "Mul", [t, g])
    g = e.node("/mlp/act", "Mul", [g, e.constant("/mlp/act", np.array(0.5, dtype=np.float32))])
    g = linear("/mlp/fc2", g, "fc2.w", "fc2.b", hidden, dim)
    e.node("", "Add", [r, g], output="output")
    model = e.model("main_graph", "input", [batch, seq, dim], "output", [batch, seq, dim])

    def forward(inp):
        q64 = {k2: f64(v2) for k2, v2 in p.items()}
        xin = f64(inp)
        h = np_layernorm(xin, q64["ln1.weight"], q64["ln1.bias"])

        def heads_of(a):
            return a.reshape(batch, seq, heads, head_dim).transpose(0, 2, 1, 3)

        qh = heads_of(h @ q64["q.w"] + q64["q.b"])
        kh = heads_of(h @ q64["k.w"] + q64["k.b"])
        vh = heads_of(h @ q64["v.w"] + q64["v.b"])
        att = np_softmax(qh @ kh.transpose(0, 1, 3, 2) / math.sqrt(head_dim)) @ vh
        att = att.transpose(0, 2, 1, 3).reshape(batch, seq, dim)
        res = xin + att @ q64["out.w"] + q64["out.b"]
        m = np_layernorm(res, q64["ln2.weight"], q64["ln2.bias"]) @ q64["fc1.w"] + q64["fc1.b"]
        return res + np_gelu_erf(m) @ q64["fc2.w"] + q64["fc2.b"]

    return model, x, forward, e.flops


SAMPLES = {
    "resnet_block": resnet_block,
    "mlp": mlp,
    "mobilenet_block": mobilenet_block,
    "attention_block": attention_block,
}


def summary(model, flops):
    """What `tessel inspect` should report, counted from the model itself."""
    ops = collections.Counter(n.op_type for n in model.graph.node)
    params = sum(int(np.prod(t.dims)) for t in model.graph.initializer)
    constant_node_elements = sum(int(np.prod(a.t.dims)) for n in model.graph.node if n.op_type == "Constant"
                                 for a in n.attribute if a.name == "value")
    return {
        "opset": model.opset_import[0].version,
        "nodes": len(model.graph.node),
        "nodes_without_constants": len(model.graph.node) - ops.get("Constant", 0),
        "op_counts": dict(sorted(ops.items())),
        "parameters": params,
        # Tessel's graph holds Constant nodes' values as constants beside the weights.
        "constant_elements": params + constant_node_elements,
        "flops_by_node": dict(sorted(flops.items())),
        "flops_of_listed_nodes": sum(flops.values()),
        "flops_note": "Conv, Gemm and MatMul only: 2 per multiply-accumulate, plus 1 per output for a bias input",
    }


def write_tensor(path, array):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array).SerializeToString())


def write_samples(out_dir, quiet=False):
    os.makedirs(out_dir, exist_ok=True)
    for name, build in SAMPLES.items():
        model, x, forward, flops = build()
        y = forward(x).astype(np.float32)
        onnx.save(model, os.path.join(out_dir, f"{name}.onnx"))
        data_dir = os.path.join(out_dir, name)
        os.makedirs(data_dir, exist_ok=True)
        write_tensor(os.path.join(data_dir, "input_0.pb"), x)
        write_tensor(os.path.join(data_dir, "output_0.pb"), y)
        with open(os.path.join(data_dir, "expected.json"), "w") as f:
            json.dump(summary(model, flops), f, indent=2)
            f.write("\n")
        size = os.path.getsize(os.path.join(out_dir, f"{name}.onnx"))
        if not quiet:
            print(f"{name}: {len(model.graph.node)} nodes, {size} bytes, output {list(y.shape)}")


# ─── ResNet-50 for benchmarks ───────────────────────────────────────────────────────────────────

def write_resnet50(path):
    """torchvision's ResNet-50 layout (bottleneck blocks 3-4-6-3), batch norm folded into the convs
    as the exporter does in eval mode; random weights. ~25.6 M parameters, ~100 MB."""
    rng = np.random.default_rng(50)
    e = Exporter(opset=17)
    counter = [500]

    def conv(scope, x, cin, cout, k, stride, hw_out):
        counter[0] += 2
        w = (rng.standard_normal((cout, cin, k, k), dtype=np.float32) * np.float32(math.sqrt(2.0 / (cin * k * k))))
        b = small(rng, cout)
        return e.conv(scope, x, f"onnx::Conv_{counter[0]}", w, f"onnx::Conv_{counter[0] + 1}", b, (hw_out, hw_out),
                      stride=stride, pad=k // 2)

    t = conv("/conv1", "input", 3, 64, 7, 2, 112)
    t = e.node("/relu", "Relu", [t])
    t = e.node("/maxpool", "MaxPool", [t], ceil_mode=0, dilations=[1, 1], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
               strides=[2, 2])
    cin, hw = 64, 56
    for layer, (blocks, width) in enumerate([(3, 64), (4, 128), (6, 256), (3, 512)], start=1):
        for block in range(blocks):
            s = f"/layer{layer}/layer{layer}.{block}"
            stride = 2 if block == 0 and layer > 1 else 1
            hw_out = hw // stride
            y = e.node(f"{s}/relu", "Relu", [conv(f"{s}/conv1", t, cin, width, 1, 1, hw)])
            y = e.node(f"{s}/relu_1", "Relu", [conv(f"{s}/conv2", y, width, width, 3, stride, hw_out)])
            y = conv(f"{s}/conv3", y, width, width * 4, 1, 1, hw_out)
            shortcut = t
            if block == 0:
                shortcut = conv(f"{s}/downsample/downsample.0", t, cin, width * 4, 1, stride, hw_out)
            t = e.node(f"{s}/relu_2", "Relu", [e.node(s, "Add", [y, shortcut])])
            cin, hw = width * 4, hw_out
    t = e.node("/avgpool", "GlobalAveragePool", [t])
    t = e.node("", "Flatten", [t], axis=1)
    e.gemm("/fc", t, "fc.weight", he(rng, (1000, 2048), 2048), "fc.bias", small(rng, 1000), rows=1, output="output")
    model = e.model("main_graph", "input", [1, 3, 224, 224], "output", [1, 1000])
    onnx.save(model, path)
    print(f"resnet50: {len(model.graph.node)} nodes, {os.path.getsize(path)} bytes -> {path}")


def self_check(node_tests):
    """Checks the numpy reference ops above against the official ONNX node tests, so that the
    expected outputs do not rest on this file alone. Returns the number of failures."""
    def load(test, name):
        return numpy_helper.to_array(onnx.load_tensor(os.path.join(node_tests, test, "test_data_set_0", name)))

    def attrs(test):
        node = onnx.load(os.path.join(node_tests, test, "model.onnx")).graph.node[0]
        return {a.name: helper.get_attribute_value(a) for a in node.attribute}

    def conv(t):
        a = attrs(t)
        return np_conv2d(f64(load(t, "input_0.pb")), f64(load(t, "input_1.pb")), None, a["strides"][0], a["pads"][0])

    def maxpool(t):
        a = attrs(t)
        return np_maxpool(f64(load(t, "input_0.pb")), a["kernel_shape"][0], a.get("strides", [1])[0],
                          a.get("pads", [0])[0])

    def batchnorm(t):
        ins = [f64(load(t, f"input_{k}.pb")) for k in range(5)]
        return np_batchnorm(*ins, eps=attrs(t).get("epsilon", 1e-5))

    def layernorm(t):
        return np_layernorm(f64(load(t, "input_0.pb")), f64(load(t, "input_1.pb")), f64(load(t, "input_2.pb")),
                            eps=attrs(t).get("epsilon", 1e-5))

    def unary(fn):
        return lambda t: fn(f64(load(t, "input_0.pb")))

    checks = {
        "test_conv_with_strides_padding": conv,
        "test_conv_with_strides_no_padding": conv,
        "test_maxpool_2d_pads": maxpool,
        "test_maxpool_2d_precomputed_strides": maxpool,
        "test_batchnorm_epsilon": batchnorm,
        "test_layer_normalization_3d_axis_negative_1_epsilon": layernorm,
        "test_softmax_example": unary(np_softmax),
        "test_softmax_large_number": unary(np_softmax),
        "test_hardswish": unary(np_hardswish),
        "test_erf": unary(lambda x: np.vectorize(math.erf)(x)),
        "test_globalaveragepool": unary(lambda x: x.mean(axis=(2, 3), keepdims=True)),
    }
    failures = 0
    # No node test covers grouped convolution: a depthwise conv must equal one conv per channel.
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((1, 4, 6, 6)), rng.standard_normal((4, 1, 3, 3))
    per_channel = np.concatenate([np_conv2d(x[:, c:c + 1], w[c:c + 1], None, 2, 1) for c in range(4)], axis=1)
    depthwise_ok = np.allclose(np_conv2d(x, w, None, 2, 1, group=4), per_channel)
    failures += 0 if depthwise_ok else 1
    print(f"{'ok  ' if depthwise_ok else 'FAIL'} depthwise conv == per-channel convs")
    for test, fn in checks.items():
        expected = f64(load(test, "output_0.pb"))
        got = fn(test)
        ok = got.shape == expected.shape and np.allclose(got, expected, rtol=1e-5, atol=1e-6)
        failures += 0 if ok else 1
        print(f"{'ok  ' if ok else 'FAIL'} {test}")
    return failures


def verify(committed_dir):
    """Regenerates the samples into a scratch folder and compares them byte for byte with
    committed_dir. Returns the number of files that differ or are missing."""
    with tempfile.TemporaryDirectory() as fresh:
        write_samples(fresh, quiet=True)
        differences = 0
        for root, _, files in os.walk(fresh):
            for name in sorted(files):
                path = os.path.join(root, name)
                relative = os.path.relpath(path, fresh)
                committed = os.path.join(committed_dir, relative)
                same = os.path.exists(committed) and open(committed, "rb").read() == open(path, "rb").read()
                if not same:
                    differences += 1
                    print(f"FAIL {relative} differs from what scripts/gen_models.py writes now (run it to update)")
        if differences == 0:
            print(f"ok   {committed_dir} matches the generator")
        return differences


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--self-check", metavar="NODE_TEST_DIR", nargs="?",
                        const="/usr/share/libonnx-testdata/data/node",
                        help="check the numpy reference ops against the ONNX node tests, then exit")
    parser.add_argument("--out-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                          "resources", "models"))
    parser.add_argument("--verify", metavar="MODELS_DIR",
                        help="check that MODELS_DIR holds exactly what the generator writes, then exit")
    parser.add_argument("--resnet50", metavar="OUT.onnx", help="write only the ResNet-50-sized benchmark model")
    args = parser.parse_args()
    if args.self_check or args.verify:
        failures = self_check(args.self_check) if args.self_check else 0
        failures += verify(args.verify) if args.verify else 0
        return 1 if failures else 0
    if args.resnet50:
        write_resnet50(args.resnet50)
    else:
        write_samples(os.path.normpath(args.out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
