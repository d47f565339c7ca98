// tessel build MODEL -o FILE [--target SPEC] [--header FILE] [--name NAME] [--emit so|llvm|asm|obj|c|opencl|cuda|ptx]
//                    [--shape NAME=DIMS]...
//
// Compiles MODEL and writes either a shared library that runs the whole model without Tessel
// (--emit so, the default; see core/aot/model_library.h for its C ABI) or one artifact of the
// backend's module: LLVM IR, assembly, an object file with every kernel, or the C source.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>

#include "app/cli/cli_args.h"
#include "app/cli/cli_records.h"
#include "app/cli/cli_target.h"
#include "core/aot/model_library.h"
#include "core/compile/compiled_model.h"
#include "core/frontend/onnx_import.h"

namespace tessel::cli {

namespace fs = std::filesystem;

namespace {

const ArgSpec kSpec{
    .usage =
        "tessel build MODEL -o FILE [--target SPEC] [--header FILE] [--name NAME] [--emit "
        "so|llvm|asm|obj|c|opencl|cuda|ptx] "
        "[--shape NAME=DIMS]... [--memory-limit SIZE] [--records LOG]",
    .value_options = {"-o", "--target", "--header", "--name", "--emit", "--memory-limit", "--records"},
    .repeatable_options = {"--shape"},
    .flags = {},
    .min_positional = 1,
    .max_positional = 1,
};

constexpr const char* kDetails =
    "Compiles MODEL (ONNX) ahead of time.\n\n"
    "  -o FILE               what to write\n"
    "  --emit so             (default) a shared library running the whole model: every kernel as object\n"
    "                        code, the weights embedded, the memory plan's arena; entry points\n"
    "                        NAME_run(inputs, outputs), NAME_run_with_arena, NAME_arena_bytes, and\n"
    "                        NAME_last_error (why a run returned 2: an index out of range)\n"
    "  --emit llvm|asm|obj   the optimized LLVM IR, assembly, or an object file of every kernel\n"
    "  --emit c              the C source (--target c)\n"
    "  --emit opencl         the OpenCL C of every kernel (--target opencl)\n"
    "  --emit cuda|ptx       the CUDA C or NVRTC's PTX of every kernel (--target cuda)\n"
    "  --header FILE         also write the C header declaring the entry points, names, dtypes, shapes\n"
    "  --name NAME           prefix of the entry points (default: the model's file name)\n"
    "  --target SPEC         'llvm' (default) or 'c'; e.g. 'llvm -mcpu=znver4 -num_threads=4'\n"
    "  --shape NAME=DIMS     binds symbolic input dims, e.g. --shape input=1x3x224x224\n"
    "  --memory-limit SIZE   refuse a model whose memory plan (arena, constants, inputs, outputs) needs\n"
    "                        more than SIZE, e.g. 32G or 512M (default: 3/4 of the memory available)\n"
    "  --records LOG         use the fastest schedule `tessel tune` logged in LOG for each kernel it\n"
    "                        tuned on this target (the others keep their default schedules)\n";

// Text artifacts by --emit value, and the backend's name for each.
const std::map<std::string, std::string> kTextArtifacts = {{"llvm", "llvm_ir"},  {"asm", "asm"},   {"c", "c"},
                                                           {"opencl", "opencl"}, {"cuda", "cuda"}, {"ptx", "ptx"}};

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(path + ": cannot write: " + std::strerror(errno));
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) throw Error(path + ": cannot write");
}

}  // namespace

int run_build_command(std::span<const std::string> argv) {
  const Args args = Args::parse(argv, kSpec);
  if (args.help()) return print_usage(kSpec, kDetails), 0;
  const std::string model = args.positional()[0];
  const std::string out = args.required("-o");
  const std::string emit = args.value("--emit").value_or("so");
  if (emit != "so" && emit != "obj" && !kTextArtifacts.count(emit)) {
    std::string choices = "so, obj";  // and every text artifact, from the one table
    for (const auto& [name, artifact] : kTextArtifacts) choices += ", " + name;
    throw UsageError("unknown --emit '" + emit + "' (choices: " + choices + ")");
  }
  if (args.value("--header") && emit != "so")
    throw UsageError("--header goes with --emit so (the library it declares)");
  const Target target = resolve_code_generating_target(args.value("--target"), "build");
  compile::CompileOptions compile_options;
  compile_options.memory_limit = memory_limit_option(args);
  use_tuning_records(args, target, compile_options);

  ImportOptions options;
  options.input_shapes = parse_shape_options(args.values("--shape"));
  const Graph imported = import_onnx(model, options);
  std::shared_ptr<const compile::CompiledModel> compiled;
  try {
    compiled = compile::CompiledModel::compile(std::make_shared<const Graph>(imported), target, compile_options);
  } catch (const Error& e) {
    rethrow_with_context(e, model);
  }
  report_tuned_kernels(args, *compiled);
  if (!compiled->module()) throw Error(model + ": no kernel of the model compiled, there is nothing to build");

  if (emit == "so") {
    aot::LibraryOptions library;
    library.name = args.value("--name").value_or(fs::path(model).stem().string());
    if (target.kind() == "c") library.cc = target.get_string("cc");
    aot::build_model_library(*compiled, out, library);
    if (auto header = args.value("--header")) {
      try {
        write_text(*header, aot::model_header(*compiled, library.name));
      } catch (const Error&) {
        std::error_code ec;
        fs::remove(out, ec);  // no library without the header that was asked for
        throw;
      }
    }
  } else if (emit == "obj") {
    compiled->module()->save_object(out);
  } else {
    const auto artifacts = compiled->module()->artifacts();
    auto it = artifacts.find(kTextArtifacts.at(emit));
    if (it == artifacts.end()) {
      std::string has;
      for (const auto& [name, text] : artifacts) has += (has.empty() ? "" : ", ") + name;
      throw Error("the " + target.kind() + " backend has no " + kTextArtifacts.at(emit) +
                  " to emit (it has: " + (has.empty() ? "none" : has) + ")");
    }
    write_text(out, it->second);
  }
  return 0;
}

}  // namespace tessel::cli
