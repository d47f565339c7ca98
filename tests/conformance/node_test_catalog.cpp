#include "tests/conformance/node_test_catalog.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace tessel::testing {
namespace {

namespace fs = std::filesystem;

void collect_ops(const onnx::GraphProto& graph, std::set<std::string>& ops) {
  for (const onnx::NodeProto& node : graph.node()) {
    const std::string& domain = node.domain();
    ops.insert(domain.empty() || domain == "ai.onnx" ? node.op_type() : domain + "." + node.op_type());
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_g()) collect_ops(attr.g(), ops);
      for (const onnx::GraphProto& g : attr.graphs()) collect_ops(g, ops);
    }
  }
}

// The kind of one graph input or output (see NodeTest::element_kind); empty for float32/int/bool.
std::string kind_of(const onnx::TypeProto& type) {
  if (!type.has_tensor_type()) return "sequence/optional/map";
  switch (type.tensor_type().elem_type()) {
    case onnx::TensorProto::DOUBLE:
      return "float64";
    case onnx::TensorProto::FLOAT16:
      return "float16";
    case onnx::TensorProto::BFLOAT16:
      return "bfloat16";
    case onnx::TensorProto::STRING:
      return "string";
    case onnx::TensorProto::UINT16:
      return "uint16";
    case onnx::TensorProto::UINT32:
      return "uint32";
    case onnx::TensorProto::UINT64:
      return "uint64";
    case onnx::TensorProto::COMPLEX64:
    case onnx::TensorProto::COMPLEX128:
      return "complex";
    default:
      return "";
  }
}

// The folder that holds node/ and the other test folders.
fs::path data_root(const std::string& node_dir) {
  fs::path p(node_dir);
  if (!p.has_filename()) p = p.parent_path();  // "…/node/"
  return p.parent_path();
}

}  // namespace

std::string node_test_data_dir() {
  if (const char* dir = std::getenv("TESSEL_ONNX_NODE_TESTS"); dir && *dir) return dir;
  return "/usr/share/libonnx-testdata/data/node";
}

NodeTest read_node_test(const std::string& data_dir, const std::string& name) {
  NodeTest test;
  test.name = name;
  const size_t slash = name.find('/');
  test.directory = slash == std::string::npos ? "node" : name.substr(0, slash);
  test.folder = slash == std::string::npos ? (fs::path(data_dir) / name).string()
                                           : (data_root(data_dir) / name).string();
  const std::string model_path = test.folder + "/model.onnx";
  std::ifstream in(model_path, std::ios::binary);
  onnx::ModelProto model;
  if (!in || !model.ParseFromIstream(&in)) throw std::runtime_error(model_path + ": cannot read the model");

  collect_ops(model.graph(), test.ops);
  for (const onnx::OperatorSetIdProto& opset : model.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx") test.opset = static_cast<int>(opset.version());

  test.element_kind = "float32";
  auto note_kind = [&](const onnx::ValueInfoProto& v) {
    const std::string kind = kind_of(v.type());
    if (!kind.empty() && test.element_kind == "float32") test.element_kind = kind;
  };
  for (const auto& v : model.graph().input()) note_kind(v);
  for (const auto& v : model.graph().output()) note_kind(v);

  for (int k = 0; fs::exists(test.folder + "/test_data_set_0/output_" + std::to_string(k) + ".pb"); ++k)
    test.expected_outputs = k + 1;
  return test;
}

std::vector<std::string> list_node_tests(const std::string& data_dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(data_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("test_", 0) == 0 && fs::exists(entry.path() / "model.onnx")) names.push_back(name);
  }
  if (ec) throw std::runtime_error(data_dir + ": " + ec.message());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> list_all_tests(const std::string& data_dir) {
  std::vector<std::string> names = list_node_tests(data_dir);
  for (const char* directory : kTestDirectories) {
    const fs::path dir = data_root(data_dir) / directory;
    if (std::string(directory) == "node" || !fs::is_directory(dir)) continue;
    for (const std::string& test : list_node_tests(dir.string())) names.push_back(std::string(directory) + "/" + test);
  }
  return names;
}

std::vector<std::string> read_test_list(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::vector<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    const size_t begin = line.find_first_not_of(" \t\r");
    if (begin == std::string::npos) continue;
    const size_t end = line.find_first_of(" \t\r", begin);
    names.push_back(line.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
  }
  return names;
}

}  // namespace tessel::testing
