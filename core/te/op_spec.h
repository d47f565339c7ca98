#pragma once
// Kernels named on a command line: "matmul M=512 N=512 K=512", "conv2d N=1 C=16 H=28 W=28 K=32",
// "relu shape=64x64". Op names are Tessel's lowercase names or the op table's ONNX names
// (MatMul, Conv, Relu, Add, MaxPool, AveragePool, Softmax, LayerNormalization, Transpose).
// Every attribute has a default; an unknown op or attribute is an Error listing what exists.
#include <string>
#include <vector>

#include "core/te/tensor.h"

namespace tessel::te {

ComputeDag dag_from_spec(const std::string& spec);
// "matmul M N K", ... : one line per op kind, for help texts.
std::vector<std::string> op_spec_help();

}  // namespace tessel::te
