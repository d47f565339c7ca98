#include "core/frontend/load_model.h"

#include <filesystem>

#include "core/graph/text_format.h"
#include "core/support/error.h"
#include "core/support/file_io.h"

namespace tessel {

Graph load_model_file(const std::string& path, const ImportOptions& options) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".onnx") return import_onnx(path, options);
  const std::string text = read_text_file(path, "graph text");
  try {
    return parse_graph(text);
  } catch (const Error& e) {
    rethrow_with_context(e, path);
  }
}

}  // namespace tessel
