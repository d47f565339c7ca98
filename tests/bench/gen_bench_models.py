#!/usr/bin/python3
"""Writes the models compare_ort.py times: real networks from torch definitions, and single ops.

    tests/bench/gen_bench_models.py OUT_DIR [--only NAME ...]

Networks (torch's ONNX exporter, random weights with a fixed seed, never downloaded; Debian's
python3-torch and python3-torchvision):
    resnet18, mobilenet_v2     torchvision's definitions, batch 1, 3x224x224, eval mode
    bert_layer                 one BERT-base encoder layer (hidden 768, 12 heads, FFN 3072, GELU
                               with erf, post-LayerNorm), batch 1, sequence 128
Single ops (the onnx helper; no torch needed):
    gemm_1024                  MatMul 1024x1024 @ 1024x1024
    gemm_2048x512              MatMul 2048x512 @ 512x2048 (M=2048, N=2048, K=512)
    conv3x3_64                 Conv 64->64, 3x3, pad 1, on 1x64x56x56
    depthwise3x3_144           Conv 144 groups, 3x3, pad 1, on 1x144x56x56
    softmax                    Softmax over the last axis of 1x12x128x128
    layernorm                  LayerNormalization over the last axis of 128x768

Each model's file is OUT_DIR/NAME.onnx; an existing file is kept (delete it to regenerate).
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def _save_op_model(path, nodes, inputs, outputs, initializers):
    graph = helper.make_graph(nodes, os.path.basename(path)[:-5], inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def _weights(name, shape, rng, scale=None):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    scale = scale if scale is not None else 1.0 / np.sqrt(fan_in)
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def _f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def gemm(path, m, n, k):
    rng = np.random.default_rng(1)
    _save_op_model(path, [helper.make_node("MatMul", ["a", "b"], ["c"], name="matmul")],
                   [_f32("a", [m, k])], [_f32("c", [m, n])], [_weights("b", [k, n], rng)])


def conv(path, channels, size, groups):
    rng = np.random.default_rng(2)
    per_group = channels // groups
    _save_op_model(path,
                   [helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv", kernel_shape=[3, 3],
                                     pads=[1, 1, 1, 1], group=groups)],
                   [_f32("x", [1, channels, size, size])], [_f32("y", [1, channels, size, size])],
                   [_weights("w", [channels, per_group, 3, 3], rng), _weights("b", [channels], rng, 0.1)])


def softmax(path):
    _save_op_model(path, [helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=-1)],
                   [_f32("x", [1, 12, 128, 128])], [_f32("y", [1, 12, 128, 128])], [])


def layernorm(path):
    rng = np.random.default_rng(3)
    _save_op_model(path,
                   [helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["y"], name="layernorm",
                                     axis=-1, epsilon=1e-5)],
                   [_f32("x", [128, 768])], [_f32("y", [128, 768])],
                   [_weights("gamma", [768], rng, 1.0), _weights("beta", [768], rng, 0.1)])


def _torch():
    try:
        import torch
        return torch
    except ImportError:
        sys.exit("gen_bench_models.py: the networks need torch and torchvision "
                 "(apt install python3-torch python3-torchvision)")


def _export(module, example, path):
    torch = _torch()
    module.eval()
    with torch.no_grad():
        torch.onnx.export(module, example, path, opset_version=OPSET,
                          input_names=["input"], output_names=["output"], do_constant_folding=True)


def torchvision_model(path, name):
    torch = _torch()
    import torchvision
    torch.manual_seed(0)
    module = getattr(torchvision.models, name)(weights=None)
    _export(module, torch.randn(1, 3, 224, 224), path)


def bert_layer(path):
    """One encoder layer of BERT-base written out: self-attention, residual + LayerNorm, FFN with
    GELU (erf form), residual + LayerNorm. The exporter turns it into MatMul/Add/Reshape/Transpose/
    Softmax/Erf/LayerNormalization-style subgraphs, as it does for the real model."""
    torch = _torch()
    nn = torch.nn

    class EncoderLayer(nn.Module):
        def __init__(self, hidden=768, heads=12, ffn=3072):
            super().__init__()
            self.heads, self.head_dim = heads, hidden // heads
            self.query, self.key, self.value = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
            self.attention_out = nn.Linear(hidden, hidden)
            self.norm1 = nn.LayerNorm(hidden, eps=1e-12)
            self.intermediate = nn.Linear(hidden, ffn)
            self.output = nn.Linear(ffn, hidden)
            self.norm2 = nn.LayerNorm(hidden, eps=1e-12)

        def split_heads(self, x):
            b, s, _ = x.shape
            return x.view(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

        def forward(self, x):
            q, k, v = self.split_heads(self.query(x)), self.split_heads(self.key(x)), self.split_heads(self.value(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / (self.head_dim ** 0.5)
            context = torch.matmul(torch.softmax(scores, dim=-1), v)
            b, h, s, d = context.shape
            context = context.permute(0, 2, 1, 3).reshape(b, s, h * d)
            x = self.norm1(x + self.attention_out(context))
            return self.norm2(x + self.output(nn.functional.gelu(self.intermediate(x))))

    torch.manual_seed(0)
    _export(EncoderLayer(), torch.randn(1, 128, 768), path)


MODELS = {
    "resnet18": lambda p: torchvision_model(p, "resnet18"),
    "mobilenet_v2": lambda p: torchvision_model(p, "mobilenet_v2"),
    "bert_layer": bert_layer,
    "gemm_1024": lambda p: gemm(p, 1024, 1024, 1024),
    "gemm_2048x512": lambda p: gemm(p, 2048, 2048, 512),
    "conv3x3_64": lambda p: conv(p, 64, 56, 1),
    "depthwise3x3_144": lambda p: conv(p, 144, 56, 144),
    "softmax": softmax,
    "layernorm": layernorm,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("out_dir")
    parser.add_argument("--only", nargs="*", choices=sorted(MODELS))
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name in args.only or MODELS:
        path = os.path.join(args.out_dir, name + ".onnx")
        if not os.path.exists(path):
            MODELS[name](path)
            print("wrote " + path)


if __name__ == "__main__":
    main()
