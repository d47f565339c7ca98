#pragma once
// The parts default_cpu_schedule (default_schedule.h) is assembled from, for its files only. Each
// file decides one thing, and default_schedule.cpp gives every stage of a kernel to one of them:
//
//   cpu_parallel_loops.cpp       which loops run in parallel, widened when they have few iterations
//   cpu_register_blocking.cpp    a reduction's register tile and the loops around its micro-kernel
//   cpu_operand_caching.cpp      what keeps that reduction's operands in cache: packed panels, the
//                                tile columns per panel, prefetched conv weights, an output plane
//                                per channel block, rows outside the blocks, a GEMM's K block
//   cpu_injective_schedule.cpp   element-wise outputs: vectors, a parallel loop, order for reuse
//   cpu_padding.cpp              a padding stage read by a reduction: inlined, copied, or per plane
//   cpu_row_chain.cpp            row reductions and their output (softmax, layer norm): row by row
//
// The accelerator's default schedule (accel_schedule.cpp) and the GPU-style one (gpu_schedule.h)
// share none of this.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/schedule/default_schedule.h"
#include "core/schedule/schedule_writer.h"
#include "core/target/register_tile.h"

namespace tessel::schedule::cpu {

// The default schedules are written step by step with a ScheduleWriter (schedule_writer.h).
using Loop = LoopHandle;
using Writer = ScheduleWriter;

// ── cpu_parallel_loops.cpp ───────────────────────────────────────────────────────────────────

// A parallel loop with fewer iterations than this is fused with the loop inside it.
constexpr int64_t kEnoughParallelIterations = 16;

// The outermost loop worth running in parallel: the first root loop with more than one iteration.
Loop parallel_loop(const Stage& s);
// The number of iterations of loop `a` of a stage.
int64_t loop_extent(const Stage& s, int a);
// The outermost data-parallel loop of a register-blocked reduction with more than one iteration.
Loop parallel_tile_loop(const Stage& s);
// Runs the outermost loop(s) of a stage in parallel (one, or two fused with knobs.parallel_loops).
void parallelize(Writer& w, const std::string& name, const CpuKnobs& knobs, bool tiles = false,
                 bool next_outside = true);
// Parallelizes the outermost loop of `name` when it is data-parallel.
void parallel_outermost(Writer& w, const std::string& name);

// ── cpu_operand_caching.cpp ──────────────────────────────────────────────────────────────────

// The operand of a register-blocked reduction worth packing into panels at run time, or "".
std::string packed_operand(const Stage& red, const RegisterTile& t, const CpuKnobs& knobs, const CpuCaches& caches);
// An operand packed at compile time, with its panel width b; width 0 when the reduction reads none.
struct Prepacked {
  std::string name;
  int64_t width = 0;
};
Prepacked prepacked_operand(const Stage& red);
// The tile columns per cache panel when the knob leaves it open (0: no panel).
int64_t default_panel(const Stage& red, const RegisterTile& t, const std::string& packed, const CpuCaches& caches);
// The operand of a register-blocked conv that streams from beyond the L2 cache (its weights), or "".
std::string streamed_operand(const Stage& red, const RegisterTile& t, const CpuKnobs& knobs, const CpuCaches& caches);
// Whether a conv's rows go outside its output-channel blocks when the two are fused for the threads.
bool rows_before_blocks(const Stage& red, const RegisterTile& t, const CpuCaches& caches, const std::string& streamed);
// The loop at which a conv whose weights stream accumulates a whole output plane per channel block.
std::optional<Loop> plane_block_loop(Writer& w, const std::string& out, const std::string& red, const RegisterTile& t,
                                     const CpuKnobs& knobs, const CpuCaches& caches, const std::string& streamed);
// Hints, in the loop `at`, for the next output-channel block of `tensor`.
void prefetch_next_block(Writer& w, const std::string& out, const std::string& red, const std::string& tensor,
                         const Loop& at);
// The K block of a GEMM when the knobs leave it open (0: none).
int64_t default_k_block(const Stage& s, const RegisterTile& t, const CpuCaches& caches);

// ── cpu_register_blocking.cpp ────────────────────────────────────────────────────────────────

// Register blocking of reduction `red_name`, with `out_name` the stage that holds the final values.
void register_blocked(Writer& w, const std::string& out_name, const std::string& red_name, const RegisterTile& t,
                      const CpuKnobs& knobs, const CpuCaches& caches);
// The register tile of reduction `red` whose values `out` holds.
RegisterTile register_tile_for(const Stage& out, const Stage& red, int64_t lanes, const CpuKnobs& knobs);
// K blocking of reduction `red` (k_blocked_gemm.h) when it applies: writes it and returns true.
bool k_blocked(Writer& w, const std::string& red, const RegisterTile& t, const CpuKnobs& knobs,
               const CpuCaches& caches);
// A reduction output: register blocked, K blocked, or tiled in place when too narrow for vectors.
void schedule_reduction_output(Writer& w, const std::string& name, int64_t lanes, const CpuKnobs& knobs,
                               const CpuCaches& caches);

// ── cpu_injective_schedule.cpp ───────────────────────────────────────────────────────────────

// An element-wise stage: the last axis vectorized, its loops ordered for reuse, the outermost parallel.
void schedule_injective(Writer& w, const std::string& name, int64_t lanes, const CpuKnobs& knobs = {});

// ── cpu_padding.cpp ──────────────────────────────────────────────────────────────────────────

// The reads of each padded element, by a reduction, that make copying the padding worth it.
constexpr int64_t kReadsWorthACopy = 16;

// Whether `s` is padding that a reduction reads at least `reads_worth_a_copy` times per element.
bool is_padding_for_reduction(const ScheduleState& st, const Stage& s, int64_t reads_worth_a_copy = kReadsWorthACopy);
// Whether masked vector loads are cheap on a target with vectors of `lanes` floats.
bool cheap_masked_loads(int64_t lanes);
// Whether padding stage `pad`'s border test varies along its last axis.
bool border_varies_across_lanes(const Stage& pad);
// Padding `pad` computed per iteration of the parallel loop of `out`, one channel plane at a time.
void pad_per_parallel_iteration(Writer& w, const std::string& pad, const std::string& out, int64_t lanes);

// ── cpu_row_chain.cpp ────────────────────────────────────────────────────────────────────────

// The row reductions that output `out` reads (softmax, layer norm), or empty when it has no such shape.
std::vector<std::string> row_reductions(const ScheduleState& st, const Stage& out);
// Whether a formula calls a function (exp, tanh, ...).
bool calls_a_function(const loopir::Expr& e);
// Output `out` and its row `stages` computed one row at a time, vectorized.
void schedule_row_chain(Writer& w, const std::string& out, const std::vector<std::string>& stages, int64_t lanes);

}  // namespace tessel::schedule::cpu
