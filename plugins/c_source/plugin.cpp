// The c_source plugin: target kind `c` emits portable C from the loop program, compiles it with
// the system C compiler into a shared object and loads it. An independent second backend, used to
// cross-check the llvm plugin.
#include <dlfcn.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/plugin/plugin_api.h"
#include "core/support/subprocess.h"
#include "plugins/c_source/emit_c.h"

namespace {

namespace fs = std::filesystem;

class CModule final : public tessel::Module {
 public:
  CModule(void* handle, const std::vector<tessel::loopir::Func>& kernels, std::string source, std::string command,
          std::string compile_object)
      : handle_(handle), source_(std::move(source)), command_(std::move(command)), compile_object_(std::move(compile_object)) {
    for (const auto& f : kernels) {
      std::string symbol;
      for (char c : f.name) symbol += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      if (symbol.empty() || std::isdigit(static_cast<unsigned char>(symbol[0]))) symbol = "_" + symbol;
      void* fn = dlsym(handle_, symbol.c_str());
      if (!fn) throw tessel::Error("kernel '" + f.name + "': c backend: symbol " + symbol + " missing from the compiled library");
      entries_.push_back(reinterpret_cast<void (*)(void* const*)>(fn));
      symbols_.push_back(symbol);
      add_kernel(tessel::kernel_signature(f));
    }
  }
  ~CModule() override { dlclose(handle_); }
  std::string target_kind() const override { return "c"; }
  std::map<std::string, std::string> artifacts() const override { return {{"c", source_}, {"command", command_}}; }
  std::string kernel_symbol(size_t index) const override { return symbols_.at(index); }
  void save_object(const std::string& path) const override;

 protected:
  void invoke(size_t kernel_index, void* const* args) const override { entries_[kernel_index](args); }

 private:
  void* handle_;
  std::vector<void (*)(void* const*)> entries_;
  std::vector<std::string> symbols_;
  std::string source_, command_;
  std::string compile_object_;  // "cc <cflags> -std=c11 -fPIC -c", the source and "-o FILE" follow
};

// The C source is compiled again, to an object file this time (the loaded library was linked
// and its object is gone). Compiled in a temporary folder and copied, so that an unwritable path
// is reported as such rather than as a compiler message.
void CModule::save_object(const std::string& path) const {
  tessel::TempDir dir("tessel-c");
  fs::path c_file = dir.path() / "kernels.c", o_file = dir.path() / "kernels.o";
  std::ofstream(c_file) << source_;
  std::string output;
  int rc = tessel::run_shell_command(compile_object_ + " " + c_file.string() + " -o " + o_file.string(), &output);
  if (rc != 0) throw tessel::Error(path + ": c backend: the compiler failed (exit " + std::to_string(rc) + "): " + output.substr(0, output.find('\n')));
  std::error_code ec;
  fs::copy_file(o_file, path, fs::copy_options::overwrite_existing, ec);
  if (ec) throw tessel::Error(path + ": cannot write: " + ec.message());
}

std::unique_ptr<tessel::Module> compile(const std::vector<tessel::loopir::Func>& kernels, const tessel::Target& target) {
  std::string source = tessel::c_source::emit_c(kernels);
  tessel::TempDir dir("tessel-c");  // removed on return: the loaded library stays mapped without its file
  fs::path c_file = dir.path() / "kernels.c", so_file = dir.path() / "kernels.so";
  std::ofstream(c_file) << source;
  std::string command = target.get_string("cc") + " " + target.get_string("cflags") + " -std=c11 -fPIC -shared -o " +
                        so_file.string() + " " + c_file.string() + " -lm";
  std::string output;
  int rc = tessel::run_shell_command(command, &output);
  if (rc != 0) {
    std::string first = output.substr(0, output.find('\n'));
    throw tessel::Error("c backend: `" + target.get_string("cc") + "` failed (exit " + std::to_string(rc) + "): " + first);
  }
  void* handle = dlopen(so_file.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string load_error = handle ? "" : dlerror();
  if (!handle) throw tessel::Error("c backend: cannot load the compiled kernels: " + load_error);
  std::string compile_object = target.get_string("cc") + " " + target.get_string("cflags") + " -std=c11 -fPIC -c";
  return std::make_unique<CModule>(handle, kernels, std::move(source), command, std::move(compile_object));
}

}  // namespace

TESSEL_PLUGIN_ENTRY(tessel::PluginContext* ctx) {
  tessel::TargetKind k;
  k.name = "c";
  k.device = "cpu";
  k.doc = "Portable C compiled by the system C compiler (cross-checks the llvm backend)";
  k.options = {
      {.name = "cc", .type = tessel::TargetOptionSpec::Type::kString, .doc = "C compiler command",
       .default_value = [] { return tessel::TargetOptionValue{std::string("cc")}; }, .min = 0, .max = 0, .choices = {}},
      {.name = "cflags", .type = tessel::TargetOptionSpec::Type::kString, .doc = "Compiler flags",
       .default_value = [] { return tessel::TargetOptionValue{std::string("-O2 -march=native")}; }, .min = 0, .max = 0,
       .choices = {}},
  };
  ctx->add_target_kind(k);
  ctx->add_codegen("c", compile);
  return 0;
}
