#include "core/graph/passes/pipeline_options_json.h"

#include "core/support/error.h"

namespace tessel {

PipelineOptions pipeline_options_from_json(const nlohmann::json& j, std::vector<std::string>* unknown) {
  PipelineOptions o;
  if (j.is_null()) return o;
  if (!j.is_object()) throw Error("pass options must be a JSON object, not " + j.dump());
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
    // Shorthands for disabled_passes: false leaves the pass out (true, the default, changes nothing).
    auto pass_flag = [&](const char* pass) {
      bool runs = true;
      flag(runs);
      if (!runs) o.disabled_passes.insert(pass);
    };
    if (key == "fold_constants")
      pass_flag("fold_constants");
    else if (key == "simplify")
      pass_flag("simplify_inference");
    else if (key == "transform_layout")
      flag(o.transform_layout);
    else if (key == "fuse")
      pass_flag("fuse_ops");
    else if (key == "plan_memory")
      pass_flag("plan_memory");
    else if (key == "verify")
      flag(o.verify);
    else if (key == "max_fusion_depth")
      integer(o.max_fusion_depth);
    else if (key == "max_kernel_arguments")
      integer(o.max_kernel_arguments);
    else if (key == "max_folded_bytes")
      integer(o.max_folded_bytes);
    else if (key == "memory_alignment")
      integer(o.memory_alignment);
    else if (key == "disabled_passes") {
      if (!v.is_array()) throw Error("pass option 'disabled_passes' must be a list of pass names");
      for (const auto& name : v) {
        if (!name.is_string()) throw Error("pass option 'disabled_passes' must be a list of pass names");
        o.disabled_passes.insert(name.get<std::string>());
      }
    } else if (unknown) {
      unknown->push_back(key);
    }
  }
  return o;
}

}  // namespace tessel
