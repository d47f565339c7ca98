// The c_source plugin: target kind `c` emits portable C from the loop program, compiles it with
// the system C compiler into a shared object and loads it. An independent second backend, used to
// cross-check the llvm plugin.
#include <dlfcn.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/plugin/plugin_api.h"
#include "core/support/subprocess.h"
#include "plugins/c_source/compiler_options.h"
#include "plugins/c_source/emit_c.h"

namespace {

namespace fs = std::filesystem;

// A compiler gets this long before it counts as hung (a whole model's C source takes seconds).
constexpr std::chrono::minutes kCompilerTimeout{10};

// Runs the compiler in `dir` (so that nothing it writes lands elsewhere); throws Error starting with
// `what` when it fails.
void run_compiler(const std::vector<std::string>& argv, const fs::path& dir, const std::string& what) {
  tessel::ProgramRun run = tessel::run_program(argv, {.working_dir = dir, .timeout = kCompilerTimeout});
  if (!run.ok())
    throw tessel::Error(what + ": `" + argv[0] + "` failed (" + run.failure() + "): " + run.first_message_line());
}

class CModule final : public tessel::Module {
 public:
  CModule(void* handle, const std::vector<tessel::loopir::Func>& kernels, std::string source, std::string command,
          std::vector<std::string> compile_object)
      : handle_(handle),
        source_(std::move(source)),
        command_(std::move(command)),
        compile_object_(std::move(compile_object)) {
    for (const auto& f : kernels) {
      std::string symbol;
      for (char c : f.name) symbol += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      if (symbol.empty() || std::isdigit(static_cast<unsigned char>(symbol[0]))) symbol = "_" + symbol;
      void* fn = dlsym(handle_, symbol.c_str());
      if (!fn)
        throw tessel::Error("kernel '" + f.name + "': c backend: symbol " + symbol +
                            " missing from the compiled library");
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
  std::vector<std::string> compile_object_;  // cc, cflags, -std=c11 -fPIC -c; "kernels.c -o kernels.o" follow
};

// The C source is compiled again, to an object file this time (the loaded library was linked
// and its object is gone). Compiled in a temporary folder and copied, so that an unwritable path
// is reported as such rather than as a compiler message.
void CModule::save_object(const std::string& path) const {
  tessel::TempDir dir("tessel-c");
  std::ofstream(dir.path() / "kernels.c") << source_;
  std::vector<std::string> argv = compile_object_;
  argv.insert(argv.end(), {"kernels.c", "-o", "kernels.o"});
  run_compiler(argv, dir.path(), path + ": c backend");
  std::error_code ec;
  fs::copy_file(dir.path() / "kernels.o", path, fs::copy_options::overwrite_existing, ec);
  if (ec) throw tessel::Error(path + ": cannot write: " + ec.message());
}

std::unique_ptr<tessel::Module> compile(const std::vector<tessel::loopir::Func>& kernels,
                                        const tessel::Target& target) {
  // Checked before any file is written: the options may come from a session file or a request.
  std::vector<std::string> argv = tessel::c_source::compiler_command(
      target, {"-std=c11", "-fPIC", "-shared", "-o", "kernels.so", "kernels.c", "-lm"});
  std::vector<std::string> compile_object = tessel::c_source::compiler_command(target, {"-std=c11", "-fPIC", "-c"});
  std::string source = tessel::c_source::emit_c(kernels);
  tessel::TempDir dir("tessel-c");  // removed on return: the loaded library stays mapped without its file
  std::ofstream(dir.path() / "kernels.c") << source;
  run_compiler(argv, dir.path(), "c backend");
  const fs::path so_file = dir.path() / "kernels.so";
  void* handle = dlopen(so_file.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string load_error = handle ? "" : dlerror();
  if (!handle) throw tessel::Error("c backend: cannot load the compiled kernels: " + load_error);
  return std::make_unique<CModule>(handle, kernels, std::move(source), tessel::command_line_text(argv),
                                   std::move(compile_object));
}

}  // namespace

TESSEL_PLUGIN_ENTRY(tessel::PluginContext* ctx) {
  tessel::TargetKind k;
  k.name = "c";
  k.device = "cpu";
  k.doc = "Portable C compiled by the system C compiler (cross-checks the llvm backend)";
  k.options = {
      {.name = "cc",
       .type = tessel::TargetOptionSpec::Type::kString,
       .doc = "C compiler: a program on PATH or an absolute path (no arguments; see cflags)",
       .default_value = [] { return tessel::TargetOptionValue{std::string("cc")}; },
       .min = 0,
       .max = 0,
       .choices = {},
       .check = tessel::c_source::check_cc_option},
      {.name = "cflags",
       .type = tessel::TargetOptionSpec::Type::kString,
       .doc = "Compiler flags, split at spaces with no quoting; each one of -O*, -g, -m*, -f*, -W*, -w, -std=*, "
              "-pedantic, -pthread, without '/' (plugins/c_source/compiler_options.h has the rule)",
       .default_value = [] { return tessel::TargetOptionValue{std::string("-O2 -march=native")}; },
       .min = 0,
       .max = 0,
       .choices = {},
       .check = tessel::c_source::check_cflags_option},
  };
  ctx->add_target_kind(k);
  ctx->add_codegen("c", compile);
  return 0;
}
