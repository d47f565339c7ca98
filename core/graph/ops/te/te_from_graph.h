#pragma once
// Fused groups of the graph → tensor expressions: one ComputeDag per kernel, composed from a
// tensor-expression builder per op (each op's is named in the op table, core/graph/ops/*.def).
//
//   group fused_conv2d_add_relu_3:  %x ─▶ Conv ─▶ Add(%b) ─▶ Relu ─▶ %y
//   dag:  p0 = placeholder(x)   p1 = placeholder(w)   p2 = placeholder(b)
//         pad = ...  conv = sum(pad * p1)  add = conv + p2[...]  relu = max(add, 0)   outputs {relu}
//
// Placeholders follow group.inputs (constants included: the executor passes their values) and the
// DAG's outputs follow group.outputs, so kernel parameter k is group.inputs[k], then the outputs.
#include <optional>
#include <string>
#include <vector>

#include "core/graph/passes/fusion_result.h"
#include "core/loopir/ir.h"
#include "core/te/tensor.h"

namespace tessel::ops {

// nullopt, with `why` set, when some member op has no builder for its attributes or types (the
// executor then runs that group with the reference kernels and says so). Throws Error when a node
// is invalid whatever runs it (constant indices out of range: te_builder::checked_index).
std::optional<te::ComputeDag> build_group_dag(const Graph& g, const FusionGroup& group, std::string* why);

// The graph values bound to a lowered kernel's parameters, in order: its parameters are the DAG's
// placeholders that the computation reads (named p<k> after group.inputs[k]), then its outputs
// (named after their stages). Throws Error naming the kernel and the parameter that matches nothing.
std::vector<ValueId> bind_kernel_params(const loopir::Func& f, const FusionGroup& group, const te::ComputeDag& dag);

// Whether `op` has a tensor-expression builder at all (its OpDef's compilation, for tests).
bool has_te_builder(const std::string& op);

}  // namespace tessel::ops
