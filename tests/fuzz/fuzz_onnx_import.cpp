// The ONNX importer (core/frontend): the bytes become model.onnx in a private folder and go
// through the path `tessel run` takes: parse, list the runtime inputs, build the graph (checker,
// opset upgrade, type inference). External data would be looked up in that folder, which holds
// nothing else.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/frontend/onnx_import.h"
#include "tests/fuzz/fuzz_common.h"

using namespace tessel;

namespace {

// A folder of our own for model.onnx, removed at exit.
class ModelFolder {
 public:
  ModelFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tessel-fuzz-onnx-XXXXXX").string();
    if (!mkdtemp(pattern.data())) std::abort();
    path_ = pattern;
  }
  ~ModelFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

const ModelFolder folder;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = (folder.path() / "model.onnx").string();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) std::abort();
  }
  fuzz::expect_refusal_only([&] {
    OnnxModelFile file(path);
    (void)file.runtime_inputs();
    Graph g = file.import();
    (void)g;
  });
  return 0;
}
