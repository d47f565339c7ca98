#include "app/cli/cli_inputs.h"

#include <algorithm>

#include "core/support/error.h"

namespace tessel::cli {

namespace fs = std::filesystem;

namespace {

// An input file Tessel cannot read (strings, a sequence), or one missing, often belongs to a model
// it cannot run at all: then the message lists everything that blocks the model, as compiling it
// would. Without the input files, symbolic dims stay unbound: they count only beside an opaque node.
void throw_if_model_is_blocked(const std::string& model, const ImportOptions& options) {
  std::string blockers;
  try {
    blockers = blockers_message(import_onnx(model, options));
  } catch (const Error&) {
    try {
      ImportOptions look = options;
      look.infer_failure = InferFailure::kMarkUnknown;
      const Graph g = import_onnx(model, look);
      if (std::any_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return is_opaque(n); }))
        blockers = blockers_message(g);
    } catch (const Error&) {
    }
  }
  if (!blockers.empty()) throw Error(model + ": " + blockers);  // else the file's own error says more
}

InputFiles read_inputs(const fs::path& dir, const std::string& model, const OnnxModelFile& file,
                       ImportOptions& options) {
  const std::vector<OnnxInputInfo>& declared = file.runtime_inputs();
  if (!fs::is_directory(dir)) throw Error(dir.string() + ": not a folder of input_K.pb files");
  InputFiles inputs;
  for (size_t k = 0; k < declared.size(); ++k) {
    const fs::path path = dir / ("input_" + std::to_string(k) + ".pb");
    if (!fs::exists(path))
      throw Error(path.string() + ": missing; " + model + " takes " + std::to_string(declared.size()) +
                  " inputs, input '" + declared[k].name + "' is number " + std::to_string(k));
    const OnnxInputInfo& in = declared[k];
    inputs.paths.push_back(path.string());
    if (in.kind != ValueKind::kTensor) {
      inputs.values.push_back(read_value_pb(path.string(), in.kind));
      inputs.tensors.emplace_back();
      continue;
    }
    inputs.tensors.push_back(read_tensor_pb(path.string()));
    inputs.values.push_back(RuntimeValue::of_tensor(inputs.tensors.back()));
    if (in.feeds_shape_operand) options.bound_inputs.emplace(in.name, inputs.tensors.back());
    if (!in.static_shape && !options.input_shapes.count(in.name))
      options.input_shapes.emplace(in.name, inputs.tensors.back().shape());
  }
  return inputs;
}

}  // namespace

InputFiles read_input_files(const fs::path& dir, const std::string& model, const OnnxModelFile& file,
                            ImportOptions& options) {
  try {
    return read_inputs(dir, model, file, options);
  } catch (const Error&) {
    throw_if_model_is_blocked(model, options);
    throw;
  }
}

void check_input_types(const Graph& graph, InputFiles& inputs, const std::string& model) {
  for (size_t k = 0; k < inputs.tensors.size(); ++k) {
    const Value& v = graph.value(graph.inputs[k]);
    if (!v.type.is_tensor()) continue;  // the reference executor checks sequences and optionals
    Tensor& t = inputs.tensors[k];
    if (v.type.dtype == DataType::kBFloat16 && t.dtype() == DataType::kUInt16)
      t = Tensor::view(DataType::kBFloat16, t.shape(), t.raw_data()).clone();
    if (t.dtype() != v.type.dtype || t.shape() != v.type.shape)
      throw Error(inputs.paths[k] + ": input '" + v.name + "' of " + model + " is " + type_str(v.type) +
                  ", the file holds " + type_str({t.dtype(), t.shape()}));
    if (k < inputs.values.size()) inputs.values[k].tensor = t;
  }
}

}  // namespace tessel::cli
