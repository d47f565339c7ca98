// tessel run MODEL --inputs DIR --out-dir DIR [--target SPEC] [--shape NAME=DIMS]...
//
// The contract (docs/architecture.md, "Contracts"): DIR/input_K.pb are the graph inputs that are
// not initializers, in order; output_K.pb is written for each graph output. Outputs are first
// written under temporary names and renamed only once every one of them exists, so a failure
// leaves no partial outputs.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <new>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "app/cli/cli_args.h"
#include "app/cli/cli_inputs.h"
#include "app/cli/cli_records.h"
#include "app/cli/cli_target.h"
#include "core/compile/compiled_model.h"
#include "core/frontend/onnx_import.h"
#include "core/graph/passes/pipeline.h"
#include "core/runtime/reference_executor.h"
#include "core/support/memory_budget.h"
#include "core/target/target.h"

namespace tessel::cli {

namespace fs = std::filesystem;

namespace {

const ArgSpec kSpec{
    .usage =
        "tessel run MODEL --inputs DIR --out-dir DIR [--target SPEC] [--shape NAME=DIMS]... [--no-passes] [--report] "
        "[--memory-limit SIZE] [--records LOG] [--max-loop-iterations N]",
    .value_options = {"--inputs", "--out-dir", "--target", "--memory-limit", "--records",
                      "--max-loop-iterations"},
    .repeatable_options = {"--shape"},
    .flags = {"--no-passes", "--report"},
    .min_positional = 1,
    .max_positional = 1,
};

constexpr const char* kDetails =
    "Compiles and runs MODEL (ONNX). Reads DIR/input_K.pb (ONNX TensorProto; K counts the graph inputs\n"
    "that are not initializers, in order; a SequenceProto or OptionalProto for a sequence or optional\n"
    "input) and writes output_K.pb for each graph output. A model with sequences or optionals among its\n"
    "values runs on the reference executor as a whole, on every target (--report says so).\n\n"
    "  --target SPEC         'llvm' (default when its plugin is loaded), 'c', 'interp', or 'ref' (the\n"
    "                        reference executor); short form 'llvm -num_threads=2' or JSON\n"
    "  --shape NAME=DIMS     binds symbolic input dims, e.g. --shape input=1x3x224x224\n"
    "  --no-passes           run the graph as imported: no optimizing graph pass, only shape inference,\n"
    "                        fusion and memory planning (to compare)\n"
    "  --report              print how many kernels were compiled and, for every kernel, the schedule it\n"
    "                        ran (default, hand, tuned record, plain loops, reference kernels) with the\n"
    "                        reason for any fallback, and where it ran (on an accelerator, why a kernel\n"
    "                        was not offloaded); then the host<->device copies\n"
    "  --memory-limit SIZE   refuse a model whose memory plan (arena, constants, inputs, outputs) needs\n"
    "                        more than SIZE, e.g. 32G or 512M (default: 3/4 of the memory available)\n"
    "  --records LOG         use the fastest schedule `tessel tune` logged in LOG for each kernel it\n"
    "                        tuned on this target (the others keep their default schedules)\n"
    "  --max-loop-iterations N  stop a Loop node that would run more than N iterations, with an error\n"
    "                        (default 1000000: a model's trip count is untrusted input)\n";

// Every graph pass but those the executor needs: types, kernels (fusion) and their storage.
std::set<std::string> optimizing_passes() {
  std::set<std::string> names;
  for (const GraphPass& p : graph_pipeline_passes({}))
    if (p.name != "infer_shapes" && p.name != "fuse_ops" && p.name != "plan_memory") names.insert(p.name);
  return names;
}

// Temporary output files, removed unless commit() renamed all of them into place. An output file
// already in the folder is moved aside before it is replaced and moved back when any rename fails,
// so a failed run leaves the folder exactly as it was.
class OutputFiles {
 public:
  explicit OutputFiles(fs::path dir) : dir_(std::move(dir)) {}
  ~OutputFiles() {
    std::error_code ec;
    for (const fs::path& p : temps_) fs::remove(p, ec);
    for (const fs::path& p : committed_) fs::remove(p, ec);
    for (auto it = set_aside_.rbegin(); it != set_aside_.rend(); ++it) fs::rename(it->second, it->first, ec);
  }
  void write(const RuntimeValue& v, const std::string& name, size_t k) {
    fs::path final_path = dir_ / ("output_" + std::to_string(k) + ".pb");
    fs::path temp = dir_ / (".output_" + std::to_string(k) + ".pb.tmp" + std::to_string(::getpid()));
    temps_.push_back(temp);
    finals_.push_back(final_path);
    write_value_pb(v, name, temp.string());
  }
  void commit() {
    for (const fs::path& p : finals_) {
      std::error_code ec;
      const fs::file_status st = fs::symlink_status(p, ec);
      if (fs::exists(st) && !fs::is_regular_file(st))
        throw Error(p.string() + ": exists and is not a regular file; not replacing it");
    }
    for (size_t k = 0; k < finals_.size(); ++k) {
      std::error_code ec;
      if (!fs::exists(fs::symlink_status(finals_[k], ec))) continue;
      fs::path aside = temps_[k];
      aside += ".old";
      fs::rename(finals_[k], aside, ec);
      if (ec) throw Error(finals_[k].string() + ": cannot replace: " + ec.message());
      set_aside_.emplace_back(finals_[k], aside);
    }
    for (size_t k = 0; k < temps_.size(); ++k) {
      std::error_code ec;
      fs::rename(temps_[k], finals_[k], ec);
      if (ec) throw Error(finals_[k].string() + ": cannot write: " + ec.message());
      committed_.push_back(finals_[k]);
    }
    temps_.clear();
    committed_.clear();  // every output is in place: keep them
    std::error_code ec;
    for (const auto& [original, aside] : set_aside_) fs::remove(aside, ec);
    set_aside_.clear();
  }

 private:
  fs::path dir_;
  std::vector<fs::path> temps_, finals_, committed_;
  std::vector<std::pair<fs::path, fs::path>> set_aside_;  // (output file, where it was moved)
};

// On a device target: the data that crossed between host and device memory in the run, with the
// reference kernels it was for (the host<->device edges of the graph).
void report_copies(const compile::CompiledModel& model, const compile::RunTimes& times) {
  if (model.device().type == DeviceType::kCPU || (!model.module() && !model.host_module()))
    return;  // nothing ran on the device
  int64_t in = 0, out = 0, fallback = 0;
  std::map<int, std::pair<int, int64_t>> by_kernel;  // kernel → copies, bytes
  for (const compile::RunTimes::Copy& c : times.copies) {
    (c.kernel >= 0 ? fallback : c.to_device ? in : out) += c.bytes;
    if (c.kernel >= 0) {
      auto& [count, bytes] = by_kernel[c.kernel];
      ++count, bytes += c.bytes;
    }
  }
  std::printf("host<->device copies on %s: inputs in %s, outputs out %s, between host and device kernels %s\n",
              device_str(model.device()).c_str(), byte_size_text(in).c_str(), byte_size_text(out).c_str(),
              byte_size_text(fallback).c_str());
  for (const auto& [kernel, copies] : by_kernel)
    std::printf("  %s: %d copies, %s\n", model.kernels().at(static_cast<size_t>(kernel)).name.c_str(), copies.first,
                byte_size_text(copies.second).c_str());
}

void write_outputs(const fs::path& out_dir, const Graph& graph, const std::vector<RuntimeValue>& outputs) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw Error(out_dir.string() + ": cannot create the output folder: " + ec.message());
  OutputFiles files(out_dir);
  for (size_t k = 0; k < outputs.size(); ++k) files.write(outputs[k], graph.value(graph.outputs[k]).name, k);
  files.commit();
}

// A graph with a sequence or an optional among its own values (`why` names the first) runs on the
// reference executor as a whole, on every target: nothing else runs those values
// (core/graph/runtime_value.h).
void run_with_values(const Graph& graph, InputFiles& inputs, const std::string& why, bool report,
                     const std::string& model, const fs::path& out_dir) {
  if (const std::string blockers = blockers_message(graph); !blockers.empty()) throw Error(model + ": " + blockers);
  check_input_types(graph, inputs, model);
  std::vector<RuntimeValue> outputs;
  try {
    outputs = run_reference_values(graph, inputs.values);
  } catch (const Error& e) {
    rethrow_with_context(e, model);
  }
  if (report)
    std::printf(
        "0 of 1 kernels compiled\nreference kernels: the whole graph: %s (sequences and optionals run on the "
        "reference executor)\n",
        why.c_str());
  write_outputs(out_dir, graph, outputs);
}

}  // namespace

int run_run_command(std::span<const std::string> argv) {
  const Args args = Args::parse(argv, kSpec);
  if (args.help()) return print_usage(kSpec, kDetails), 0;
  const std::string model = args.positional()[0];
  const fs::path inputs_dir = args.required("--inputs");
  const fs::path out_dir = args.required("--out-dir");
  const Target target = resolve_target(args.value("--target"));
  compile::CompileOptions compile_options;
  compile_options.memory_limit = memory_limit_option(args);
  apply_loop_limit_option(args);
  use_tuning_records(args, target, compile_options);

  OnnxModelFile file(model);  // parsed once: its inputs tell which input files bind shape operands
  ImportOptions options;
  options.input_shapes = parse_shape_options(args.values("--shape"));
  InputFiles inputs = read_input_files(inputs_dir, model, file, options);

  // One pipeline for every target: graph passes, fusion, memory plan, kernels compiled by the
  // target's code generator; without one (`ref`), or for a group without a tensor expression,
  // the reference kernels run the group in the same executor.
  if (args.flag("--no-passes")) compile_options.pipeline.disabled_passes = optimizing_passes();
  GraphPtr imported = std::make_shared<const Graph>(file.import(options));  // errors name the file
  if (const std::string why = non_tensor_values_reason(*imported); !why.empty())
    return run_with_values(*imported, inputs, why, args.flag("--report"), model, out_dir), 0;
  std::shared_ptr<const compile::CompiledModel> compiled;
  try {
    compiled = compile::CompiledModel::compile(imported, target, compile_options);
  } catch (const Error& e) {
    rethrow_with_context(e, model);
  } catch (const std::bad_alloc&) {  // the plan passed the limit; something else took the memory
    throw Error(model + ": out of memory while compiling, although its memory plan is within the limit "
                        "(--memory-limit SIZE sets the limit the plan is checked against)");
  }
  report_tuned_kernels(args, *compiled);
  check_input_types(compiled->graph(), inputs, model);
  const Graph& graph = compiled->graph();
  std::vector<Tensor> outputs;
  compile::RunTimes times;
  try {
    outputs = compiled->run(inputs.tensors, args.flag("--report") ? &times : nullptr);
  } catch (const Error& e) {
    rethrow_with_context(e, model);
  } catch (const std::bad_alloc&) {
    throw Error(model + ": out of memory while running, although its memory plan is within the limit "
                        "(--memory-limit SIZE sets the limit the plan is checked against)");
  }

  if (args.flag("--report")) {
    std::printf("%d of %zu kernels compiled (target %s)\n", compiled->compiled_count(), compiled->kernels().size(),
                target.kind().c_str());
    // Every kernel: the schedule it ran (default, hand, tuning record, plain loops, reference
    // kernels) with the reason for any fallback, and where it ran.
    for (const compile::CompiledKernel& k : compiled->kernels())
      std::printf("  %s: %s\n", k.name.c_str(), compiled->schedule_report(k).c_str());
    report_copies(*compiled, times);
  }

  std::vector<RuntimeValue> values;
  for (Tensor& t : outputs) values.push_back(RuntimeValue::of_tensor(std::move(t)));
  write_outputs(out_dir, graph, values);
  return 0;
}

}  // namespace tessel::cli
