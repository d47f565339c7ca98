#include "core/frontend/load_model.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/graph/text_format.h"
#include "core/support/error.h"

namespace tessel {

Graph load_model_file(const std::string& path, const ImportOptions& options) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".onnx") return import_onnx(path, options);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot read the file");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return parse_graph(text.str());
  } catch (const Error& e) {
    rethrow_with_context(e, path);
  }
}

}  // namespace tessel
