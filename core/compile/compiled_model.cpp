#include "core/compile/compiled_model.h"

#include <algorithm>
#include <cstring>

#include "core/compile/device_run.h"
#include "core/compile/kernel_compiler.h"
#include "core/graph/ops/te/te_from_graph.h"
#include "core/loopir/printer.h"
#include "core/runtime/codegen.h"
#include "core/runtime/reference_executor.h"
#include "core/runtime/thread_pool.h"
#include "core/support/memory_budget.h"
#include "core/support/timing.h"
#include "core/target/target_traits.h"
#include "core/te/tensor.h"

namespace tessel::compile {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

MemoryNeed memory_need(const Graph& g, const MemoryPlan& plan) {
  MemoryNeed need;
  need.arena = plan.peak_bytes;
  auto bytes_of = [&](ValueId v) {
    const TensorType& t = g.value(v).type;
    return shape_numel(t.shape) * static_cast<int64_t>(dtype_size(t.dtype));
  };
  for (ValueId v = 0; v < static_cast<ValueId>(g.values.size()); ++v) {
    const int64_t bytes = bytes_of(v);
    if (g.is_constant(v)) need.constants += bytes;
    if (bytes > need.largest_bytes) need.largest = v, need.largest_bytes = bytes;
  }
  for (ValueId v : g.inputs) need.inputs_outputs += bytes_of(v);
  for (ValueId v : g.outputs) need.inputs_outputs += bytes_of(v);
  return need;
}

void check_memory_limit(const Graph& g, const MemoryPlan& plan, int64_t limit, const KernelScratch* scratch) {
  const bool given = limit > 0;
  std::string basis;
  if (!given) limit = default_memory_limit(&basis);
  const MemoryNeed need = memory_need(g, plan);
  const int64_t scratch_bytes = scratch ? scratch->need.bytes : 0;
  int64_t total = 0;
  if (__builtin_add_overflow(need.total(), scratch_bytes, &total)) total = INT64_MAX;
  if (total <= limit) return;
  std::string largest;
  if (scratch_bytes > 0) {
    largest = "; kernel '" + scratch->kernel + "' allocates " + byte_size_text(scratch_bytes) +
              " of scratch, the largest buffer '" + scratch->need.largest_buffer + "' (" +
              byte_size_text(scratch->need.largest_bytes) + ")";
  } else if (need.largest != kNoValue) {
    const Value& v = g.value(need.largest);
    largest = "; the largest tensor is '" + v.name + "' " + type_str(v.type) + " (" +
              byte_size_text(need.largest_bytes) + ")";
  }
  throw Error("model '" + g.name + "' needs " + byte_size_text(total) + " (" + std::to_string(total) +
              " bytes: arena " + byte_size_text(need.arena) + ", constants " + byte_size_text(need.constants) +
              ", inputs and outputs " + byte_size_text(need.inputs_outputs) +
              (scratch_bytes > 0 ? ", kernel scratch " + byte_size_text(scratch_bytes) : std::string()) + ")" +
              largest + "; that is more than the memory limit of " + byte_size_text(limit) +
              (given ? "" : " (" + basis + ")") + "; raise it with --memory-limit SIZE (e.g. --memory-limit " +
              std::to_string((total >> 30) + 1) + "G)");
}

int CompiledModel::compiled_count() const {
  return static_cast<int>(
      std::count_if(kernels_.begin(), kernels_.end(), [](const CompiledKernel& k) { return k.compiled; }));
}

namespace {

// A kernel lowered as asked: a hand schedule (its errors are the caller's), else a tuning record
// that still lowers, else the default with its placement (default_lowering). Lowered once: what
// comes back is what gets generated. On an accelerator a given schedule must be taken by its code
// generator (lower_for_accelerator asks it and names the step that made it refuse).
LoweredKernel lower_as_asked(const FusionGroup& group, const te::ComputeDag& dag, const Target& target,
                             bool accelerator, const std::optional<schedule::Schedule>& hand,
                             const std::optional<schedule::Schedule>& tuned) {
  auto lower_given = [&](const schedule::Schedule& s, ScheduleSource source) {
    if (!accelerator) {
      LoweredKernel k = lower_kernel(group, dag, target, s);
      k.source = source;
      return k;
    }
    LoweredKernel k;
    k.func = lower_for_accelerator(group.kernel_name, dag, s, target);
    k.params = ops::bind_kernel_params(k.func, group, dag);
    k.schedule = s;
    k.source = source;
    return k;
  };
  if (hand) return lower_given(*hand, ScheduleSource::kHand);
  std::string passed_over;
  if (tuned) {
    try {
      return lower_given(*tuned, ScheduleSource::kTuned);
    } catch (const Error& e) {
      // A record the core no longer takes (a log from another version) or refuses (a shared log's
      // schedule past the limits, issue 40): the default, and why.
      passed_over = e.what();
    }
  }
  LoweredKernel k = lower_kernel(group, dag, target);
  if (!passed_over.empty()) {
    k.record_passed_over = passed_over;
    k.fallback_reason = "the tuning record's schedule was passed over: " + passed_over +
                        (k.fallback_reason.empty() ? "" : "; " + k.fallback_reason);
  }
  return k;
}

}  // namespace

// Three passes over the kernels, each once:
//
//   1. placement + lowering   every group: its DAG, the schedule as asked (hand, tuning record,
//                             default) and the device it runs on; lowered once (lower_as_asked)
//   2. memory check           the plan plus the largest kernel scratch, before any code exists
//   3. code generation        one module of the target's kernels, one of the host's (an
//                             accelerator's kernels placed on the host)
std::shared_ptr<const CompiledModel> CompiledModel::compile(GraphPtr graph, const Target& target,
                                                            const CompileOptions& options) {
  auto model = std::shared_ptr<CompiledModel>(new CompiledModel(target));
  PipelineOptions pipeline_options = options.pipeline;
  pipeline_options.disabled_passes.erase("fuse_ops");
  pipeline_options.disabled_passes.erase("plan_memory");
  model->pipeline_ = run_graph_pipeline(std::move(graph), target, pipeline_options);
  if (!model->pipeline_.ok()) throw Error(model->pipeline_.error);
  const Graph& g = *model->pipeline_.graph;
  const FusionResult& fusion = *model->pipeline_.fusion;
  const MemoryPlan& plan = *model->pipeline_.memory_plan;
  check_memory_limit(g, plan, options.memory_limit);  // before anything is compiled or allocated
  const bool codegen = generates_code(target);
  const bool accelerator = codegen && target_traits(target).is_accelerator();
  if (accelerator) model->host_target_ = host_target_of(target);
  const bool host_codegen = accelerator && generates_code(*model->host_target_);

  // 1. Placement and lowering.
  std::vector<loopir::Func> funcs, host_funcs;
  KernelScratch largest_scratch;  // the compiled kernel that allocates the most for itself
  for (const MemoryStep& step : plan.steps) {
    const FusionGroup& group = fusion.groups.at(static_cast<size_t>(step.group));
    CompiledKernel k;
    k.name = group.kernel_name;
    k.group = step.group;
    k.flops = kernel_flops(g, group);
    k.bytes = kernel_bytes(g, group);
    const auto start = Clock::now();
    std::optional<te::ComputeDag> dag;
    if (!codegen)
      k.fallback_reason = "target '" + target.kind() + "' has no code generator";
    else
      dag = kernel_dag(g, group, &k.fallback_reason);
    if (dag) {
      k.tensor_expression = te::to_string(*dag);
      std::optional<schedule::Schedule> hand;
      if (auto given = options.schedules.find(k.name); given != options.schedules.end()) hand = given->second;
      std::optional<schedule::Schedule> tuned;
      if (!hand && options.tuned_schedule) tuned = options.tuned_schedule(*dag);
      std::optional<LoweredKernel> lowered;
      try {
        lowered = lower_as_asked(group, *dag, target, accelerator, hand, tuned);
      } catch (const Error& e) {
        if (hand) throw;  // a hand schedule that does not lower is the caller's error
        k.fallback_reason = e.what();
      }
      if (lowered) {
        k.schedule_source = lowered->source;
        k.schedule_note = lowered->fallback_reason;
        k.record_passed_over = lowered->record_passed_over;
        k.on_host = lowered->host.has_value();
        k.host_reason = lowered->host_reason;
        if (k.on_host && !host_codegen) {
          k.fallback_reason = "the host target '" + model->host_target_->kind() + "' has no code generator";
        } else {
          k.schedule = std::move(lowered->schedule);
          k.params = std::move(lowered->params);
          k.loop_program = loopir::to_string(lowered->func);
          loopir::ScratchNeed scratch = loopir::scratch_need(lowered->func);
          if (scratch.bytes > largest_scratch.need.bytes) largest_scratch = {k.name, std::move(scratch)};
          (k.on_host ? host_funcs : funcs).push_back(std::move(lowered->func));
          k.compiled = true;
        }
      }
    }
    k.compile_ms = ms_since(start);
    model->kernels_.push_back(std::move(k));
  }
  // 2. Kernels allocate their own scratch when they run; refuse one that cannot fit before any
  // code is built.
  check_memory_limit(g, plan, options.memory_limit, &largest_scratch);
  // 3. Code generation. An accelerator's code generator was asked about each of its kernels while
  // placing them (default_lowering, lower_for_accelerator), so a refusal here is an error.
  const auto start = Clock::now();
  if (!funcs.empty()) model->module_ = build_module(funcs, target);
  if (!host_funcs.empty()) model->host_module_ = build_module(host_funcs, *model->host_target_);
  model->codegen_ms_ = ms_since(start);
  return model;
}

std::string CompiledModel::placement(const CompiledKernel& k) const {
  if (!k.on_host && k.compiled) return device_str(device_) + " (" + target_.kind() + ")";
  if (k.compiled) return "host (" + host_target_->kind() + ")";
  return "host (reference kernels)";
}

std::string CompiledModel::schedule_report(const CompiledKernel& k) const {
  std::string schedule;
  if (!k.compiled) {
    schedule = "reference kernels (" + k.fallback_reason + ")";
  } else {
    schedule = std::string(schedule_source_name(k.schedule_source));
    if (k.schedule_source != ScheduleSource::kPlainLoops) schedule += " schedule";
    if (!k.schedule_note.empty()) schedule += " (" + k.schedule_note + ")";
  }
  std::string where = placement(k);
  if (k.on_host) where += " (not offloaded: " + k.host_reason + ")";
  return schedule + ", on " + where;
}

Device target_device(const Target& target) {
  Device d{device_type_from_name(target.kind_info().device), 0};
  if (target.kind_info().find_option("device")) d.id = static_cast<int32_t>(target.get_int("device"));
  return d;
}

CompiledModel::CompiledModel(const Target& target)
    : target_(target), device_(target_device(target)), device_constants_(std::make_unique<DeviceConstants>()) {}

CompiledModel::~CompiledModel() = default;

std::vector<Tensor> CompiledModel::run(const std::vector<Tensor>& inputs, RunTimes* times) const {
  // Without a module nothing runs on the device: every group is a reference kernel on the host.
  if (device_.type != DeviceType::kCPU && (module_ || host_module_))
    return run_on_device(*this, device_, *device_constants_, inputs, times);
  const Graph& g = graph();
  const MemoryPlan& plan = *pipeline_.memory_plan;
  std::vector<Tensor> env = bind_graph_inputs(g, inputs);  // errors name the input
  ThreadPool::set_global_threads(target_threads(target_));
  // One arena; every planned tensor is a view at its offset.
  if (plan.peak_bytes > kMaxTensorBytes)
    throw Error("model '" + g.name + "': the memory plan's arena of " + byte_size_text(plan.peak_bytes) +
                " is more than one allocation may take (" + byte_size_text(kMaxTensorBytes) + ")");
  Tensor arena(DataType::kUInt8, {std::max<int64_t>(plan.peak_bytes, 1)});
  for (const PlannedTensor& t : plan.tensors) {
    const TensorType& type = g.value(t.value).type;
    env[t.value] = Tensor::view(type.dtype, type.shape, arena.raw_data() + t.offset);
  }

  auto run_start = Clock::now();
  ThreadPool& pool = ThreadPool::global();
  // Chunk spans only when times are asked for; off again however the run ends.
  struct Tracing {
    ThreadPool& pool;
    ~Tracing() { pool.set_tracing(false); }
  } tracing{pool};
  pool.set_tracing(times != nullptr);
  pool.take_trace();  // nothing of an earlier run
  for (const CompiledKernel& k : kernels_) {
    auto start = Clock::now();
    if (k.compiled) {
      std::vector<Tensor*> args;
      for (ValueId v : k.params) {
        // Groups whose intermediate values were not planned (none should be) get their own storage.
        if (!env[v].defined()) env[v] = Tensor(g.value(v).type.dtype, g.value(v).type.shape);
        args.push_back(&env[v]);
      }
      module_->call_host(k.name, args);
    } else {
      run_group_reference(g, pipeline_.fusion->groups.at(static_cast<size_t>(k.group)),
                          [&](ValueId v) -> Tensor& { return env[v]; });
    }
    if (times) {
      double begin = ms_between(run_start, start);
      double ms = ms_since(start);
      times->kernel_ms.push_back(ms);
      times->kernel_spans_ms.emplace_back(begin, begin + ms);
      const int index = static_cast<int>(times->kernel_ms.size()) - 1;
      for (const ThreadPool::ChunkSpan& c : pool.take_trace())
        times->thread_spans.push_back({index, c.thread, ms_between(run_start, c.begin), ms_between(run_start, c.end)});
    }
  }
  if (times) times->total_ms = ms_since(run_start);
  std::vector<Tensor> out;
  for (ValueId v : g.outputs) out.push_back(env[v].clone());  // out of the arena
  return out;
}

}  // namespace tessel::compile
