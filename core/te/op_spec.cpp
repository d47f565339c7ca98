#include "core/te/op_spec.h"

#include <map>
#include <sstream>

#include "core/support/error.h"
#include "core/support/shape.h"
#include "core/te/op_builders.h"

namespace tessel::te {

namespace {

struct SpecKind {
  std::string name;
  std::vector<std::string> aliases;
  std::vector<std::pair<std::string, std::string>> params;  // name, default
};

const std::vector<SpecKind>& kinds() {
  static const std::vector<SpecKind> k = {
      {"matmul", {"MatMul", "dense", "Gemm"}, {{"M", "64"}, {"N", "64"}, {"K", "64"}}},
      {"matmul_packed", {}, {{"M", "64"}, {"N", "64"}, {"K", "64"}, {"block", "16"}}},
      {"conv2d",
       {"Conv"},
       {{"N", "1"},
        {"C", "4"},
        {"H", "8"},
        {"W", "8"},
        {"K", "4"},
        {"R", "3"},
        {"S", "3"},
        {"stride", "1"},
        {"pad", "1"}}},
      {"conv2d_bias_relu",
       {},
       {{"N", "1"},
        {"C", "4"},
        {"H", "8"},
        {"W", "8"},
        {"K", "4"},
        {"R", "3"},
        {"S", "3"},
        {"stride", "1"},
        {"pad", "1"}}},
      {"conv2d_nchwc",
       {},
       {{"N", "1"},
        {"C", "32"},
        {"H", "8"},
        {"W", "8"},
        {"K", "32"},
        {"R", "3"},
        {"S", "3"},
        {"stride", "1"},
        {"pad", "1"},
        {"block", "16"}}},
      {"depthwise_conv2d",
       {},
       {{"N", "1"}, {"C", "4"}, {"H", "8"}, {"W", "8"}, {"R", "3"}, {"S", "3"}, {"stride", "1"}, {"pad", "1"}}},
      {"relu", {"Relu"}, {{"shape", "64x64"}}},
      {"add", {"Add"}, {{"shape", "64x64"}}},
      {"max_pool", {"MaxPool"}, {{"N", "1"}, {"C", "4"}, {"H", "8"}, {"W", "8"}, {"size", "2"}, {"stride", "2"}}},
      {"avg_pool", {"AveragePool"}, {{"N", "1"}, {"C", "4"}, {"H", "8"}, {"W", "8"}, {"size", "2"}, {"stride", "2"}}},
      {"softmax", {"Softmax"}, {{"M", "16"}, {"N", "64"}}},
      {"layernorm", {"LayerNormalization"}, {{"M", "16"}, {"N", "64"}}},
      {"transpose", {"Transpose"}, {{"M", "64"}, {"N", "64"}}},
  };
  return k;
}

// Each attribute is an extent, a window or a step: bounded so that the builders' arithmetic on
// them (H + 2 * pad, ...) cannot overflow; the tensors' sizes are checked once the kernel is built.
constexpr int64_t kMaxSpecValue = (int64_t{1} << 31) - 1;

int64_t to_int(const std::string& op, const std::string& key, const std::string& text) {
  int64_t v = 0;
  try {
    size_t used = 0;
    v = std::stoll(text, &used);
    if (used != text.size()) throw Error("");
  } catch (...) {
    throw Error(op + ": attribute " + key + "=" + text + " is not an integer");
  }
  if (v > kMaxSpecValue)
    throw Error(op + ": attribute " + key + "=" + text + " is larger than " + std::to_string(kMaxSpecValue));
  return v;
}

Shape to_shape(const std::string& op, const std::string& text) {
  Shape s;
  std::istringstream in(text);
  std::string part;
  while (std::getline(in, part, 'x')) s.push_back(to_int(op, "shape", part));
  return s;
}

ComputeDag build_dag(const std::string& spec);

}  // namespace

ComputeDag dag_from_spec(const std::string& spec) {
  ComputeDag dag = build_dag(spec);
  for (const Tensor& t : dag.ops) {
    try {
      checked_tensor_bytes(t->shape, dtype_size(t->dtype));
    } catch (const Error& e) {
      rethrow_with_context(e, dag.name + ": tensor " + t->name);
    }
  }
  return dag;
}

std::vector<std::string> op_spec_help() {
  std::vector<std::string> out;
  for (auto& k : kinds()) {
    std::string line = k.name;
    for (auto& [p, d] : k.params) line += " " + p + "=" + d;
    out.push_back(line);
  }
  return out;
}

namespace {

ComputeDag build_dag(const std::string& spec) {
  std::istringstream in(spec);
  std::string name;
  in >> name;
  if (name.empty()) throw Error("op spec is empty; expected e.g. \"matmul M=512 N=512 K=512\"");
  const SpecKind* kind = nullptr;
  for (auto& k : kinds()) {
    if (k.name == name) kind = &k;
    for (auto& a : k.aliases)
      if (a == name) kind = &k;
  }
  if (!kind) {
    std::string known;
    for (auto& k : kinds()) known += (known.empty() ? "" : ", ") + k.name;
    throw Error("unknown op '" + name + "' (known: " + known + ")");
  }
  std::map<std::string, std::string> values(kind->params.begin(), kind->params.end());
  std::string token;
  while (in >> token) {
    auto eq = token.find('=');
    if (eq == std::string::npos) throw Error(kind->name + ": expected KEY=VALUE, got '" + token + "'");
    std::string key = token.substr(0, eq);
    if (!values.count(key)) {
      std::string allowed;
      for (auto& [p, d] : kind->params) allowed += (allowed.empty() ? "" : ", ") + p;
      throw Error(kind->name + ": unknown attribute '" + key + "' (allowed: " + allowed + ")");
    }
    values[key] = token.substr(eq + 1);
  }
  auto get = [&](const char* key) { return to_int(kind->name, key, values.at(key)); };
  const std::string& n = kind->name;
  if (n == "matmul") return matmul_dag(get("M"), get("N"), get("K"));
  if (n == "matmul_packed") return matmul_packed_dag(get("M"), get("N"), get("K"), get("block"));
  if (n == "conv2d" || n == "conv2d_bias_relu" || n == "depthwise_conv2d" || n == "conv2d_nchwc") {
    Conv2dParams p;
    p.batch = get("N");
    p.in_channels = get("C");
    p.height = get("H");
    p.width = get("W");
    p.out_channels = n == "depthwise_conv2d" ? p.in_channels : get("K");
    p.kernel_h = get("R");
    p.kernel_w = get("S");
    p.stride = get("stride");
    p.pad = get("pad");
    if (n == "conv2d") return conv2d_dag(p);
    if (n == "conv2d_bias_relu") return conv2d_bias_relu_dag(p);
    if (n == "conv2d_nchwc") return conv2d_nchwc_dag(p, get("block"));
    return depthwise_conv2d_dag(p);
  }
  if (n == "relu") return relu_dag(to_shape(n, values.at("shape")));
  if (n == "add") return add_dag(to_shape(n, values.at("shape")));
  if (n == "max_pool" || n == "avg_pool")
    return pool2d_dag(n == "max_pool", get("N"), get("C"), get("H"), get("W"), get("size"), get("stride"));
  if (n == "softmax") return softmax_dag(get("M"), get("N"));
  if (n == "layernorm") return layernorm_dag(get("M"), get("N"));
  return transpose_dag(get("M"), get("N"));
}

}  // namespace

}  // namespace tessel::te
