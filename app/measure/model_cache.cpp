#include "app/measure/model_cache.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/frontend/onnx_import.h"
#include "core/graph/text_format.h"

namespace tessel::measure {

PipelineOptions pipeline_options_from_json(const nlohmann::json& j) {
  PipelineOptions o;
  if (j.is_null()) return o;
  if (!j.is_object()) throw Error("pass_options must be an object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const nlohmann::json& v = it.value();
    auto flag = [&](bool& field) {
      if (!v.is_boolean()) throw Error("pass option '" + key + "' must be true or false");
      field = v.get<bool>();
    };
    auto integer = [&](auto& field) {
      if (!v.is_number_integer()) throw Error("pass option '" + key + "' must be an integer");
      field = v.get<std::remove_reference_t<decltype(field)>>();
    };
    if (key == "fold_constants")
      flag(o.fold_constants);
    else if (key == "simplify")
      flag(o.simplify);
    else if (key == "transform_layout")
      flag(o.transform_layout);
    else if (key == "fuse")
      flag(o.fuse);
    else if (key == "plan_memory")
      flag(o.plan_memory);
    else if (key == "verify")
      flag(o.verify);
    else if (key == "max_fusion_depth")
      integer(o.max_fusion_depth);
    else if (key == "max_kernel_arguments")
      integer(o.max_kernel_arguments);
    else if (key == "memory_alignment")
      integer(o.memory_alignment);
    else if (key == "disabled_passes") {
      if (!v.is_array()) throw Error("pass option 'disabled_passes' must be a list of pass names");
      for (const auto& name : v) o.disabled_passes.insert(name.get<std::string>());
    }
    // Other keys are the studio's own (it warns about them); the pipeline does not read them.
  }
  return o;
}

Graph load_model_file(const std::string& path) {
  if (std::filesystem::path(path).extension() == ".onnx") return import_onnx(path);
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot read the file");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return parse_graph(text.str());
  } catch (const Error& e) {
    rethrow_with_context(e, path);
  }
}

GraphPtr ModelCache::imported(const std::string& path) {
  std::error_code ec;
  auto time = std::filesystem::last_write_time(path, ec);
  if (ec) throw Error(path + ": cannot read the file (" + ec.message() + ")");
  const int64_t mtime = time.time_since_epoch().count();
  auto it = imported_.find(path);
  if (it != imported_.end() && it->second.mtime == mtime) return it->second.graph;
  // The file changed (or is new): every pipeline built from the old graph is stale.
  for (auto p = pipelines_.begin(); p != pipelines_.end();)
    p = p->first.rfind(path + "\n", 0) == 0 ? pipelines_.erase(p) : std::next(p);
  Imported entry{std::make_shared<const Graph>(load_model_file(path)), mtime};
  imported_[path] = entry;
  return entry.graph;
}

std::shared_ptr<const GraphPipelineResult> ModelCache::pipeline(const std::string& path, const Target& target,
                                                                const nlohmann::json& pass_options) {
  GraphPtr graph = imported(path);
  const std::string key = path + "\n" + target.str() + "\n" + pass_options.dump();
  auto it = pipelines_.find(key);
  if (it != pipelines_.end()) return it->second;
  PipelineOptions options = pipeline_options_from_json(pass_options);
  options.fuse = true;
  options.plan_memory = true;
  auto result = std::make_shared<GraphPipelineResult>(run_graph_pipeline(graph, target, options));
  if (!result->ok()) throw Error(path + ": " + result->error);
  if (!result->fusion) throw Error(path + ": the pipeline produced no fusion groups (is fuse_ops disabled?)");
  pipelines_[key] = result;
  return result;
}

}  // namespace tessel::measure
