#include "core/frontend/onnx_model_loader.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/stubs/logging.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/frontend/onnx_external_data.h"
#include "core/frontend/onnx_tensor.h"
#include "core/frontend/opset_upgrade.h"
#include "core/graph/op_table.h"
#include "core/support/error.h"
#include "core/support/file_io.h"
#include "core/support/isolated_call.h"

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
  // Only ops of other domains (the training ops of ai.onnx.preview.training): they import as
  // opaque nodes, whatever the default opset.
  if (opset < 0) return kMaxOnnxOpset;
  if (opset < kMinOnnxOpset || opset > kMaxOnnxOpset)
    throw Error("default-domain opset " + std::to_string(opset) + " is not supported (Tessel imports opsets " +
                std::to_string(kMinOnnxOpset) + " to " + std::to_string(kMaxOnnxOpset) + ")");
  return opset;
}

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

// Nodes that will become opaque, or inputs Tessel cannot represent: their types can only come
// from ONNX's shape inference, which is then run (only then: it costs time on large models).
bool needs_onnx_types(const onnx::GraphProto& graph) {
  for (const auto& node : graph.node())
    if (!is_default_domain(node.domain()) ||
        (node.op_type() != "Constant" && find_op(upgraded_op_type(node.op_type())) == nullptr))
      return true;
  for (const auto& input : graph.input())
    if (!input.type().has_tensor_type()) return true;
  return false;
}

// Adds value_info for what ONNX can infer, and says why there is none when there is none.
// ONNX's inference functions trust the model: a Conv whose weight has more dimensions than its
// input makes convPoolShapeInference follow a wild pointer. So they run in a forked child (see
// core/support/isolated_call.h) that sends back only the types it found; a crash there costs the
// opaque nodes their static types, not the process. Their failures are not the model's either:
// Tessel's own inference judges the nodes it knows.
std::string infer_onnx_types(onnx::ModelProto& model) {
  const IsolatedCall call = call_isolated([&model] {
    try {
      onnx::shape_inference::InferShapes(model);  // the child's copy; the parent's stays as it was
    } catch (const std::exception&) {
    }
    onnx::GraphProto types;
    *types.mutable_value_info() = model.graph().value_info();
    *types.mutable_output() = model.graph().output();
    return types.SerializeAsString();
  });
  onnx::GraphProto types;
  if (!call.ok() || !types.ParseFromString(call.result))
    return "ONNX shape inference failed on this model (" + (call.ok() ? "unreadable result" : call.how) + ")";
  onnx::GraphProto& graph = *model.mutable_graph();
  *graph.mutable_value_info() = types.value_info();
  for (int i = 0; i < graph.output_size() && i < types.output_size(); ++i)
    if (types.output(i).name() == graph.output(i).name()) *graph.mutable_output(i) = types.output(i);
  return {};
}

// The checker puts the node last ("... ==> Context: Bad node spec for node. Name: n OpType: Op");
// Tessel's messages put it first.
void run_checker(const onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    const std::string text = one_line(e.what());
    const std::string marker = " ==> Context: Bad node spec for node. Name: ";
    const size_t at = text.find(marker), op_at = text.rfind(" OpType: ");
    if (at != std::string::npos && op_at != std::string::npos && op_at > at) {
      const std::string name = text.substr(at + marker.size(), op_at - at - marker.size());
      throw Error("node '" + name + "' (" + text.substr(op_at + 9) + "): invalid ONNX node: " + text.substr(0, at));
    }
    throw Error("invalid ONNX model: " + text);
  }
}

// The checker refuses a default-domain node whose op ONNX does not define (a private or misspelt
// op). For Tessel that is only one more op it does not know, so such nodes are checked as nodes of
// a private domain (which the checker verifies no further) and then put back as they were.
void run_checker_tolerating_unknown_ops(onnx::ModelProto& model, int64_t opset) {
  static const std::string kPrivateDomain = "tessel.no_onnx_schema";
  std::vector<std::pair<int, std::string>> retagged;  // node index, its domain
  auto& nodes = *model.mutable_graph()->mutable_node();
  for (int i = 0; i < nodes.size(); ++i) {
    onnx::NodeProto& node = nodes[i];
    if (!is_default_domain(node.domain()) ||
        onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), "") != nullptr)
      continue;
    retagged.emplace_back(i, node.domain());
    node.set_domain(kPrivateDomain);
  }
  if (retagged.empty()) return run_checker(model);
  auto* private_opset = model.add_opset_import();
  private_opset->set_domain(kPrivateDomain);
  private_opset->set_version(1);
  auto put_back = [&] {
    for (const auto& [i, domain] : retagged) nodes[i].set_domain(domain);
    model.mutable_opset_import()->RemoveLast();
  };
  try {
    run_checker(model);
  } catch (...) {
    put_back();
    throw;
  }
  put_back();
}

// Sizes are checked before the ONNX checker sees the tensors: it multiplies dims without guarding
// against overflow.
void check_tensor_sizes(const onnx::GraphProto& graph) {
  for (const auto& init : graph.initializer()) check_tensor_data(init);  // errors name the tensor
  for (const auto& node : graph.node())
    for (const auto& attr : node.attribute()) {
      try {
        if (attr.has_t()) check_tensor_data(attr.t());
        for (const auto& t : attr.tensors()) check_tensor_data(t);
      } catch (const Error& e) {
        rethrow_with_context(e, "node '" + node.name() + "' (" + node.op_type() + "): attribute '" + attr.name() + "'");
      }
    }
}

}  // namespace

namespace {

// Protobuf's default nesting limit, 100 messages, stops a model at about 32 levels of subgraphs
// (each If/Loop/Scan level is three messages: NodeProto, AttributeProto, GraphProto), and its
// failure reads as "corrupted". Tessel takes 256 levels; deeper is refused by name: a file that
// parses only with a limit eight times higher (2048 levels, still a small stack for the parser
// alone) was nested too deeply, not damaged. Every pass over bodies is
// linear in the depth, but each level costs stack (typing, then running, a body recurses): about
// 3 KB per level in a Release build and several times that under AddressSanitizer, so 256 levels
// stay well inside a thread's 8 MiB where 1000 did not (measured: 2-4 MiB in Release).
constexpr int kMaxSubgraphLevels = 256;
constexpr int kProtoLevelsPerSubgraph = 3;
constexpr int kProtoRecursionLimit = kMaxSubgraphLevels * kProtoLevelsPerSubgraph + 16;

bool parse_with_limit(int fd, google::protobuf::MessageLite& message, int recursion_limit, int* read_errno) {
  google::protobuf::io::FileInputStream in(fd);
  google::protobuf::io::CodedInputStream coded(&in);
  coded.SetRecursionLimit(recursion_limit);
  const bool parsed = message.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  *read_errno = in.GetErrno();
  return parsed;
}

}  // namespace

void parse_proto_file(const std::string& path, google::protobuf::MessageLite& message, const char* what) {
  const int fd = open_regular_file(path, what);  // a FIFO or device would never end
  // Protobuf refuses messages of 2 GiB or more; say so instead of calling such a file corrupt.
  struct stat st {};
  if (::fstat(fd, &st) == 0 && static_cast<uintmax_t>(st.st_size) >= (uintmax_t{1} << 31)) {
    ::close(fd);
    throw Error(path + ": " + std::to_string(st.st_size >> 20) + " MiB is beyond protobuf's 2 GiB limit for one " +
                what + " file (store the weights as external data)");
  }
  bool parsed = false;
  bool too_deep = false;
  const bool empty = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0;
  int read_errno = 0;
  if (!empty) {
    google::protobuf::LogSilencer quiet;  // protobuf would log invalid UTF-8 to stderr; we report ourselves
    parsed = parse_with_limit(fd, message, kProtoRecursionLimit, &read_errno);
    if (!parsed && read_errno == 0 && ::lseek(fd, 0, SEEK_SET) == 0) {
      message.Clear();
      too_deep = parse_with_limit(fd, message, 8 * kProtoRecursionLimit, &read_errno);
      message.Clear();
    }
  }
  ::close(fd);
  if (read_errno != 0) throw Error(path + ": read error: " + std::strerror(read_errno));
  if (empty) throw Error(path + ": the file is empty");
  if (too_deep)
    throw Error(path + ": subgraphs (If, Loop and Scan bodies) are nested more than " +
                std::to_string(kMaxSubgraphLevels) + " levels deep: refused");
  if (!parsed)
    throw Error(path + ": not a valid " + std::string(what) + " file (truncated or corrupted protobuf data)");
}

namespace {

// Nodes of a sub-graph are named after it ("loop_body/Add_3"), so that an error inside a body
// names a node one can find.
void name_unnamed_nodes_under(onnx::GraphProto& graph, const std::string& prefix) {
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto& n = *graph.mutable_node(i);
    if (n.name().empty()) n.set_name(prefix + n.op_type() + "_" + std::to_string(i));
    for (auto& attr : *n.mutable_attribute()) {
      auto body_prefix = [&](const onnx::GraphProto& g) {
        return (g.name().empty() ? n.name() + "." + attr.name() : g.name()) + "/";
      };
      if (attr.has_g()) name_unnamed_nodes_under(*attr.mutable_g(), body_prefix(attr.g()));
      for (auto& g : *attr.mutable_graphs()) name_unnamed_nodes_under(g, body_prefix(g));
    }
  }
}

}  // namespace

void name_unnamed_nodes(onnx::GraphProto& graph) { name_unnamed_nodes_under(graph, ""); }

LoadedOnnxModel load_onnx_model(const std::string& path) {
  LoadedOnnxModel loaded;
  parse_proto_file(path, loaded.proto, "ONNX model");
  try {
    onnx::ModelProto& model = loaded.proto;
    if (!model.has_graph()) throw Error("not an ONNX model: it has no graph");
    if (model.graph().output_size() == 0) throw Error("the model's graph has no outputs, so it computes nothing");
    loaded.opset = default_domain_opset(model);
    onnx::GraphProto& graph = *model.mutable_graph();
    name_unnamed_nodes(graph);
    load_external_data(graph, fs::path(path).parent_path());
    check_tensor_sizes(graph);
    run_checker_tolerating_unknown_ops(model, loaded.opset);
    if (needs_onnx_types(graph)) loaded.onnx_inference_problem = infer_onnx_types(model);
    loaded.not_upgraded = upgrade_opset(model, loaded.opset);
  } catch (const Error& e) {
    rethrow_in_file(e, path);
  }
  return loaded;
}

void rethrow_in_file(const Error& e, const std::string& path) {
  std::string message = e.what();
  for (char& c : message)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  throw Error(path + ": " + message);
}

}  // namespace tessel
