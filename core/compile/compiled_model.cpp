#include "core/compile/compiled_model.h"

#include <algorithm>

#include "core/graph/ops/te/te_from_graph.h"
#include "core/loopir/printer.h"
#include "core/lower/pipeline.h"
#include "core/runtime/codegen.h"
#include "core/runtime/reference_executor.h"
#include "core/runtime/thread_pool.h"
#include "core/schedule/default_schedule.h"

namespace tessel::compile {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

int64_t value_bytes(const Graph& g, ValueId v) {
  const TensorType& t = g.value(v).type;
  return shape_numel(t.shape) * static_cast<int64_t>(dtype_size(t.dtype));
}

int64_t vector_lanes(const Target& t) {
  const TargetOptionSpec* spec = t.kind_info().find_option("vector_bits");
  return spec ? std::max<int64_t>(1, t.get_int("vector_bits") / 32) : 8;
}

}  // namespace

int CompiledModel::compiled_count() const {
  return static_cast<int>(std::count_if(kernels_.begin(), kernels_.end(), [](const CompiledKernel& k) { return k.compiled; }));
}

std::shared_ptr<const CompiledModel> CompiledModel::compile(GraphPtr graph, const Target& target, const CompileOptions& options) {
  auto model = std::shared_ptr<CompiledModel>(new CompiledModel(target));
  PipelineOptions pipeline_options = options.pipeline;
  pipeline_options.disabled_passes.erase("fuse_ops");
  pipeline_options.disabled_passes.erase("plan_memory");
  model->pipeline_ = run_graph_pipeline(std::move(graph), target, pipeline_options);
  if (!model->pipeline_.ok()) throw Error(model->pipeline_.error);
  const Graph& g = *model->pipeline_.graph;
  const FusionResult& fusion = *model->pipeline_.fusion;
  const MemoryPlan& plan = *model->pipeline_.memory_plan;

  std::vector<loopir::Func> funcs;
  for (const MemoryStep& step : plan.steps) {
    const FusionGroup& group = fusion.groups.at(static_cast<size_t>(step.group));
    CompiledKernel k;
    k.name = group.kernel_name;
    k.group = step.group;
    for (NodeId n : group.nodes) k.flops += node_flops(g, g.nodes[n]);
    for (ValueId v : group.inputs) k.bytes += value_bytes(g, v);
    for (ValueId v : group.outputs) k.bytes += value_bytes(g, v);
    auto start = Clock::now();
    std::string why;
    std::optional<te::ComputeDag> dag = build_group_dag(g, group, &why);
    if (dag) {
      k.tensor_expression = te::to_string(*dag);
      auto given = options.schedules.find(k.name);
      try {
        k.schedule = given != options.schedules.end() ? given->second : schedule::default_cpu_schedule(*dag, vector_lanes(target));
        loopir::Func f = lower::lower(*dag, k.schedule).func;
        f.name = k.name;
        k.params = bind_kernel_params(f, group, *dag);
        k.loop_program = loopir::to_string(f);
        funcs.push_back(std::move(f));
        k.compiled = true;
      } catch (const Error& e) {
        if (given != options.schedules.end()) throw Error("kernel '" + k.name + "': schedule: " + e.what());
        // The default schedule did not lower: plain loops always do.
        try {
          k.schedule = {};
          loopir::Func f = lower::lower(*dag, k.schedule).func;
          f.name = k.name;
          k.params = bind_kernel_params(f, group, *dag);
          k.loop_program = loopir::to_string(f);
          funcs.push_back(std::move(f));
          k.compiled = true;
        } catch (const Error& e2) {
          k.fallback_reason = std::string("lowering failed: ") + e2.what();
        }
      }
    } else {
      k.fallback_reason = why;
    }
    k.compile_ms = ms_since(start);
    model->kernels_.push_back(std::move(k));
  }
  auto start = Clock::now();
  if (!funcs.empty()) model->module_ = build_module(funcs, target);
  model->codegen_ms_ = ms_since(start);
  return model;
}

void CompiledModel::run_fallback(const CompiledKernel& k, std::vector<Tensor>& env) const {
  const Graph& g = graph();
  const FusionGroup& group = pipeline_.fusion->groups.at(static_cast<size_t>(k.group));
  for (NodeId id : group.nodes) {
    const Node& n = g.nodes[id];
    std::vector<const Tensor*> args;
    for (ValueId v : n.inputs) args.push_back(v == kNoValue ? nullptr : &env[v]);
    std::vector<Tensor> outs = run_node_reference(g, n, args);
    for (size_t o = 0; o < outs.size(); ++o) {
      Tensor& dst = env[n.outputs[o]];
      if (dst.defined() && dst.raw_data() != outs[o].raw_data()) std::memcpy(dst.raw_data(), outs[o].raw_data(), outs[o].nbytes());
      else dst = std::move(outs[o]);
    }
  }
}

std::vector<Tensor> CompiledModel::run(const std::vector<Tensor>& inputs, RunTimes* times) const {
  const Graph& g = graph();
  const MemoryPlan& plan = *pipeline_.memory_plan;
  if (inputs.size() != g.inputs.size())
    throw Error("the model takes " + std::to_string(g.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
  ThreadPool::set_global_threads(target_.kind_info().find_option("num_threads") ? static_cast<int>(target_.get_int("num_threads")) : 1);

  std::vector<Tensor> env(g.values.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Value& v = g.value(g.inputs[k]);
    if (inputs[k].dtype() != v.type.dtype || inputs[k].shape() != v.type.shape)
      throw Error("input '" + v.name + "' expects " + type_str(v.type) + ", got " + type_str({inputs[k].dtype(), inputs[k].shape()}));
    env[g.inputs[k]] = inputs[k];
  }
  for (ValueId id = 0; id < static_cast<ValueId>(g.values.size()); ++id)
    if (g.is_constant(id)) env[id] = g.value(id).value;
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
      run_fallback(k, env);
    }
    if (times) {
      double begin = std::chrono::duration<double, std::milli>(start - run_start).count();
      double ms = ms_since(start);
      times->kernel_ms.push_back(ms);
      times->kernel_spans_ms.emplace_back(begin, begin + ms);
      const int index = static_cast<int>(times->kernel_ms.size()) - 1;
      for (const ThreadPool::ChunkSpan& c : pool.take_trace())
        times->thread_spans.push_back({index, c.thread, std::chrono::duration<double, std::milli>(c.begin - run_start).count(),
                                       std::chrono::duration<double, std::milli>(c.end - run_start).count()});
    }
  }
  if (times) times->total_ms = ms_since(run_start);
  std::vector<Tensor> out;
  for (ValueId v : g.outputs) out.push_back(env[v].clone());  // out of the arena
  return out;
}

}  // namespace tessel::compile
