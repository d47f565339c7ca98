#include "app/measure/model_cache.h"

#include <filesystem>

namespace tessel::measure {

namespace {

// The file and the dims bound at import: what one imported graph is.
std::string import_key(const ModelRef& model) {
  std::string key = model.path;
  for (const auto& [name, shape] : model.input_shapes) key += "\n" + name + "=" + shape_str(shape);
  return key;
}

}  // namespace

GraphPtr ModelCache::imported(const ModelRef& model) {
  const std::string& path = model.path;
  const std::string key = import_key(model);
  std::error_code ec;
  auto time = std::filesystem::last_write_time(path, ec);
  if (ec) throw Error(path + ": cannot read the file (" + ec.message() + ")");
  const int64_t mtime = time.time_since_epoch().count();
  auto it = imported_.find(key);
  if (it != imported_.end() && it->second.mtime == mtime) return it->second.graph;
  // The file changed (or is new): every pipeline built from the old graph is stale.
  for (auto p = pipelines_.begin(); p != pipelines_.end();)
    p = p->first.rfind(key + "\n\n", 0) == 0 ? pipelines_.erase(p) : std::next(p);
  ImportOptions options;
  options.input_shapes = model.input_shapes;
  Imported entry{std::make_shared<const Graph>(load_model_file(path, options)), mtime};
  imported_[key] = entry;
  return entry.graph;
}

std::shared_ptr<const GraphPipelineResult> ModelCache::pipeline(const ModelRef& model, const Target& target) {
  const std::string& path = model.path;
  const nlohmann::json& pass_options = model.pass_options;
  GraphPtr graph = imported(model);
  const std::string key = import_key(model) + "\n\n" + target.str() + "\n" + pass_options.dump();
  auto it = pipelines_.find(key);
  if (it != pipelines_.end()) return it->second;
  PipelineOptions options = pipeline_options_from_json(pass_options);
  options.disabled_passes.erase("fuse_ops");
  options.disabled_passes.erase("plan_memory");
  auto result = std::make_shared<GraphPipelineResult>(run_graph_pipeline(graph, target, options));
  if (!result->ok()) throw Error(path + ": " + result->error);
  if (!result->fusion) throw Error(path + ": the pipeline produced no fusion groups (is fuse_ops disabled?)");
  pipelines_[key] = result;
  return result;
}

}  // namespace tessel::measure
