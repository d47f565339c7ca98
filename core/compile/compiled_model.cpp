#include "core/compile/compiled_model.h"

#include <algorithm>
#include <cstring>

#include "core/compile/kernel_compiler.h"
#include "core/loopir/printer.h"
#include "core/runtime/codegen.h"
#include "core/runtime/reference_executor.h"
#include "core/runtime/thread_pool.h"
#include "core/support/timing.h"
#include "core/te/tensor.h"

namespace tessel::compile {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

int CompiledModel::compiled_count() const {
  return static_cast<int>(
      std::count_if(kernels_.begin(), kernels_.end(), [](const CompiledKernel& k) { return k.compiled; }));
}

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
  const bool codegen = generates_code(target);

  std::vector<loopir::Func> funcs;
  for (const MemoryStep& step : plan.steps) {
    const FusionGroup& group = fusion.groups.at(static_cast<size_t>(step.group));
    CompiledKernel k;
    k.name = group.kernel_name;
    k.group = step.group;
    k.flops = kernel_flops(g, group);
    k.bytes = kernel_bytes(g, group);
    const auto start = Clock::now();
    auto given = options.schedules.find(k.name);
    std::optional<schedule::Schedule> hand;
    if (given != options.schedules.end()) hand = given->second;
    std::optional<te::ComputeDag> dag;
    if (!codegen)
      k.fallback_reason = "target '" + target.kind() + "' has no code generator";
    else
      dag = kernel_dag(g, group, &k.fallback_reason);
    if (dag) {
      k.tensor_expression = te::to_string(*dag);
      try {
        LoweredKernel lowered = lower_kernel(group, *dag, target, hand);
        k.schedule = std::move(lowered.schedule);
        k.params = std::move(lowered.params);
        k.loop_program = loopir::to_string(lowered.func);
        funcs.push_back(std::move(lowered.func));
        k.compiled = true;
      } catch (const Error& e) {
        if (hand) throw;  // a hand schedule that does not lower is the caller's error
        k.fallback_reason = e.what();
      }
    }
    k.compile_ms = ms_since(start);
    model->kernels_.push_back(std::move(k));
  }
  const auto start = Clock::now();
  if (!funcs.empty()) model->module_ = build_module(funcs, target);
  model->codegen_ms_ = ms_since(start);
  return model;
}

std::vector<Tensor> CompiledModel::run(const std::vector<Tensor>& inputs, RunTimes* times) const {
  const Graph& g = graph();
  const MemoryPlan& plan = *pipeline_.memory_plan;
  std::vector<Tensor> env = bind_graph_inputs(g, inputs);  // errors name the input
  ThreadPool::set_global_threads(target_threads(target_));
  // One arena; every planned tensor is a view at its offset.
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
