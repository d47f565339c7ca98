#include "core/frontend/onnx_external_data.h"

#include <charconv>
#include <fstream>

#include "core/frontend/onnx_tensor.h"
#include "core/support/error.h"

namespace tessel {

namespace fs = std::filesystem;

namespace {

int64_t parse_byte_count(const std::string& key, const std::string& text) {
  int64_t v = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0)
    throw Error("external data " + key + " '" + text + "' is not a non-negative integer");
  return v;
}

// The data file for `location`, which must stay inside `model_dir` even after symbolic links.
fs::path resolve_inside(const std::string& location, const fs::path& model_dir) {
  if (location.empty()) throw Error("external data location is empty");
  const fs::path rel(location);
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory())
    throw Error("external data location '" + location +
                "' is an absolute path; it must be relative to the model's folder");
  for (const fs::path& part : rel)
    if (part == "..") throw Error("external data location '" + location + "' escapes the model's folder");
  std::error_code ec;
  const fs::path base = fs::canonical(model_dir.empty() ? fs::path(".") : model_dir, ec);
  if (ec) throw Error("cannot resolve the model's folder '" + model_dir.string() + "': " + ec.message());
  const fs::path file = fs::canonical(base / rel, ec);
  if (ec) throw Error("external data file '" + location + "' cannot be opened: " + ec.message());
  const fs::path inside = file.lexically_relative(base);
  if (inside.empty() || *inside.begin() == "..")
    throw Error("external data location '" + location + "' resolves outside the model's folder (to " + file.string() +
                ")");
  if (!fs::is_regular_file(file, ec)) throw Error("external data location '" + location + "' is not a regular file");
  return file;
}

}  // namespace

void load_external_data(onnx::TensorProto& tensor, const fs::path& model_dir) {
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL) return;
  try {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& entry : tensor.external_data()) {
      if (entry.key() == "location")
        location = entry.value();
      else if (entry.key() == "offset")
        offset = parse_byte_count("offset", entry.value());
      else if (entry.key() == "length")
        length = parse_byte_count("length", entry.value());
    }
    const DeclaredTensor declared = declared_tensor(tensor);
    if (length >= 0 && length != declared.bytes)
      throw Error("external data length " + std::to_string(length) + " does not match the " +
                  std::to_string(declared.bytes) + " bytes of " + std::string(dtype_name(declared.dtype)) +
                  shape_str(declared.shape));
    const fs::path file = resolve_inside(location, model_dir);
    std::error_code ec;
    const auto file_size = static_cast<int64_t>(fs::file_size(file, ec));
    if (ec) throw Error("cannot read external data file '" + location + "': " + ec.message());
    if (offset > file_size || file_size - offset < declared.bytes)
      throw Error("external data file '" + location + "' has " + std::to_string(file_size) +
                  " bytes, shorter than the " + std::to_string(declared.bytes) + " bytes claimed at offset " +
                  std::to_string(offset));
    std::string bytes(static_cast<size_t>(declared.bytes), '\0');
    std::ifstream in(file, std::ios::binary);
    in.seekg(offset);
    in.read(bytes.data(), declared.bytes);
    if (!in) throw Error("reading external data file '" + location + "' failed");
    tensor.clear_external_data();
    tensor.set_data_location(onnx::TensorProto::DEFAULT);
    tensor.set_raw_data(std::move(bytes));
  } catch (const Error& e) {
    rethrow_with_context(e, tensor_label(tensor));
  }
}

void load_external_data(onnx::GraphProto& graph, const fs::path& model_dir) {
  for (auto& init : *graph.mutable_initializer()) load_external_data(init, model_dir);
  for (auto& node : *graph.mutable_node())
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_t()) load_external_data(*attr.mutable_t(), model_dir);
      for (auto& t : *attr.mutable_tensors()) load_external_data(t, model_dir);
    }
}

}  // namespace tessel
