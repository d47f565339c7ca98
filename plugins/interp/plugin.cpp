// The interp plugin: target kind `interp` runs lowered kernels with the loop-IR interpreter. Slow
// and obviously faithful to the loop program: the backend that cross-checks the code generators.
#include "core/loopir/interpreter.h"
#include "core/loopir/printer.h"
#include "core/plugin/plugin_api.h"

namespace {

class InterpModule final : public tessel::Module {
 public:
  explicit InterpModule(std::vector<tessel::loopir::Func> kernels) : kernels_(std::move(kernels)) {
    for (const auto& f : kernels_) add_kernel(tessel::kernel_signature(f));
  }
  std::string target_kind() const override { return "interp"; }
  std::map<std::string, std::string> artifacts() const override {
    std::string text;
    for (const auto& f : kernels_) text += tessel::loopir::to_string(f) + "\n";
    return {{"loopir", text}};
  }

 protected:
  void invoke(size_t kernel_index, void* const* args) const override {
    const auto& f = kernels_[kernel_index];
    // The interpreter works on tensors; wrap each argument's memory in a tensor view (a copy in,
    // a copy out for outputs would hide aliasing bugs, so views share the caller's memory).
    std::vector<tessel::Tensor> views;
    for (size_t k = 0; k < f.params.size(); ++k)
      views.push_back(tessel::Tensor::view(f.params[k]->dtype, f.params[k]->shape, static_cast<std::byte*>(args[k])));
    tessel::loopir::interpret(f, views, static_cast<tessel::loopir::CheckRecord*>(args[f.params.size()]));
  }

 private:
  std::vector<tessel::loopir::Func> kernels_;
};

}  // namespace

TESSEL_PLUGIN_ENTRY(tessel::PluginContext* ctx) {
  tessel::TargetKind k;
  k.name = "interp";
  k.device = "cpu";
  k.doc = "The loop-IR interpreter as a backend (slow; for verification and teaching)";
  ctx->add_target_kind(k);
  ctx->add_codegen("interp", [](const std::vector<tessel::loopir::Func>& kernels, const tessel::Target&) {
    return std::unique_ptr<tessel::Module>(new InterpModule(kernels));
  });
  return 0;
}
