#include "core/frontend/onnx_model_loader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/stubs/logging.h>
#include <onnx/checker.h>

#include "core/frontend/onnx_external_data.h"
#include "core/frontend/opset_upgrade.h"
#include "core/graph/op_table.h"
#include "core/support/error.h"

namespace tessel {

namespace fs = std::filesystem;

namespace {

// The checker's messages span several lines ("...\n\n==> Context: Bad node spec ..."); Tessel's
// errors are one line.
std::string one_line(std::string text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

int64_t default_domain_opset(const onnx::ModelProto& model) {
  int64_t opset = -1;
  for (const auto& imp : model.opset_import())
    if (imp.domain().empty() || imp.domain() == "ai.onnx") opset = imp.version();
  if (opset < 0) throw Error("the model declares no opset for the default ONNX domain");
  if (opset < kMinOnnxOpset || opset > kMaxOnnxOpset)
    throw Error("default-domain opset " + std::to_string(opset) + " is not supported (Tessel imports opsets " +
                std::to_string(kMinOnnxOpset) + " to " + std::to_string(kMaxOnnxOpset) + ")");
  return opset;
}

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

void check_supported_ops(const onnx::GraphProto& graph) {
  std::string list;
  int count = 0;
  for (const auto& node : graph.node()) {
    const bool supported = is_default_domain(node.domain()) &&
                           (node.op_type() == "Constant" || find_op(upgraded_op_type(node.op_type())) != nullptr);
    if (supported) continue;
    const std::string op = is_default_domain(node.domain()) ? node.op_type() : node.domain() + "::" + node.op_type();
    list += (count++ ? ", '" : "'") + node.name() + "' (" + op + ")";
  }
  if (count) throw Error(std::to_string(count) + " unsupported op" + (count > 1 ? "s" : "") + ": " + list);
}

void run_checker(const onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throw Error("invalid ONNX model: " + one_line(e.what()));
  }
}

}  // namespace

void parse_proto_file(const std::string& path, google::protobuf::MessageLite& message, const char* what) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw Error(path + ": is a folder, not " + std::string(what) + " file");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  bool parsed = false;
  bool empty = false;
  {
    google::protobuf::LogSilencer quiet;  // protobuf would log invalid UTF-8 to stderr; we report ourselves
    google::protobuf::io::FileInputStream in(fd);
    const void* first = nullptr;
    int size = 0;
    empty = !in.Next(&first, &size);
    if (!empty) in.BackUp(size);
    parsed = !empty && message.ParseFromZeroCopyStream(&in);
    if (in.GetErrno() != 0) {
      ::close(fd);
      throw Error(path + ": read error: " + std::strerror(in.GetErrno()));
    }
  }
  ::close(fd);
  if (empty) throw Error(path + ": the file is empty");
  if (!parsed) throw Error(path + ": not a valid " + std::string(what) + " file (truncated or corrupted protobuf data)");
}

void name_unnamed_nodes(onnx::GraphProto& graph) {
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto& n = *graph.mutable_node(i);
    if (n.name().empty()) n.set_name(n.op_type() + "_" + std::to_string(i));
  }
}

LoadedOnnxModel load_onnx_model(const std::string& path) {
  LoadedOnnxModel loaded;
  parse_proto_file(path, loaded.proto, "ONNX model");
  try {
    onnx::ModelProto& model = loaded.proto;
    if (!model.has_graph()) throw Error("not an ONNX model: it has no graph");
    loaded.opset = default_domain_opset(model);
    onnx::GraphProto& graph = *model.mutable_graph();
    name_unnamed_nodes(graph);
    check_supported_ops(graph);
    load_external_data(graph, fs::path(path).parent_path());
    run_checker(model);
    upgrade_opset(model, loaded.opset);
  } catch (const Error& e) {
    rethrow_with_context(e, path);
  }
  return loaded;
}

}  // namespace tessel
