#pragma once
// The schedules `tessel tune` searches for one kernel on one target: the default schedule of the
// target's kind with its own decisions opened up to every value that fits the kernel's shapes, so
// every candidate is an ordinary schedule (steps as data) the studio can show and edit.
//
// Which knobs a kernel has follows from the target's device class (its TargetTraits, from which
// schedule::default_schedule_for picks the default too) and from the kernel's tensor expression:
//
//   an accelerator (DeviceClass::kAccelerator:  schedule::AccelKnobs (default_accel_schedule); the
//   a GEMM core, accel-sim)                     scratchpad scopes and the GEMM intrinsic are the
//                                               core's own, so they are not knobs
//        vthreads       1 2 4 (divides the row or column tiles)   accumulator tiles interleaved
//        k_tiles        1 2 4 8 16 (divides K / n)                GEMMs per LOAD of the reduction
//      A kernel that does not tensorize runs on the host: it has no space (unsupported() says why).
//
//   a GPU (DeviceClass::kGpu: opencl, cuda)     default_gpu_schedule's arguments
//
//        tile           4 16 32 (≤ the output's last two axes)    blocks of tile × tile threads,
//                                                                 the inputs cached in shared memory
//        threads        32 128 256                                threads per block of an
//                                                                 element-wise output or a row
//
//   a CPU kind                                  schedule::CpuKnobs (default_cpu_schedule)
//        tile_rows      1 2 3 4 6 8 12 (≤ rows)          register tile of a reduction output
//        tile_vectors   1 2 4 8 (× lanes ≤ last axis)
//        k_unroll       1 2 4 8 (divides a lone k)
//        reduce_split   4 8 16 32 64 (divides the main    the longest reduce axis (k, a conv's rc)
//                       reduce axis, at most half of it)  split into a block loop and its inner part
//        reduce_order   main outer, window outer,         the reduce loops' order, when another
//                       split around                      reduce axis is longer than 1 (a conv's
//                                                         ry, rx)
//        panel          0 2 4 8 16 (< tile columns)       second tiling level: cache panels
//        pack           0 1 (a lone k)                    the vector operand packed per tile column
//        prefetch       0 1 (a conv)                      the next output-channel block's weights
//                                                         hinted into L2 (inject_prefetch.h)
//        k_block        32 64 128 256 512 (divides a      k in blocks, the product accumulating per
//                       lone k, at least two blocks;      block (k_blocked_gemm.h): the panel the
//                       the product is the output or      micro-kernel streams is k_block deep
//                       has an element-wise epilogue)
//        k_block_outer  0 1 (with k_block)                the block loop outside the tile columns
//        parallel_loops 1 2                               one loop, or the two outermost fused
//        vector_split   lanes 2·lanes 4·lanes             element-wise outputs
//      A kernel the int8 dot-product schedule takes (int8_vnni_schedule) has no space.
//
//   Candidate = one value index per knob ──schedule_of──▶ Schedule
//
// Candidate 0 (every index 0 = "the default's choice") is the default schedule itself, the one
// schedule::default_schedule_for gives (tests/views/test_target_policy.cpp checks it for every
// kernel of the sample models), so a search always measures the schedule it has to beat.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/schedule/default_schedule.h"
#include "core/schedule/schedule.h"
#include "core/schedule/target_default.h"
#include "core/target/target_traits.h"
#include "core/te/tensor.h"

namespace tessel::tune {

struct Knob {
  std::string name;
  std::vector<int64_t> values;  // values[0] is -1: "the default's own choice"
};

using Candidate = std::vector<int>;  // an index into each knob's values

class SearchSpace {
 public:
  SearchSpace(te::ComputeDag dag, const TargetTraits& target);

  const te::ComputeDag& dag() const { return dag_; }
  const TargetTraits& target() const { return target_; }
  const std::vector<Knob>& knobs() const { return knobs_; }
  // Why the kernel has no schedules to search on this target ("accel: ... the kernel runs on the
  // host"); empty when it has (even with no knob: its default schedule is then the only one).
  const std::string& unsupported() const { return unsupported_; }
  // The number of distinct candidates (product of the knobs' sizes).
  double size() const;

  // The candidate's decisions for each kind of target (knobs of the other kinds are ignored).
  schedule::CpuKnobs cpu_knobs_of(const Candidate& c) const;
  schedule::AccelKnobs accel_knobs_of(const Candidate& c) const;
  std::pair<int64_t, int64_t> gpu_tile_and_threads_of(const Candidate& c) const;
  // The candidate's schedule; nullopt when its steps do not apply to the DAG (never for candidate 0
  // of a supported kernel).
  std::optional<schedule::Schedule> schedule_of(const Candidate& c) const;

  Candidate default_candidate() const { return Candidate(knobs_.size(), 0); }
  Candidate random_candidate(std::mt19937_64& rng) const;
  // One knob moved to another value.
  Candidate mutate(const Candidate& c, std::mt19937_64& rng) const;
  // Each knob from one parent or the other.
  Candidate crossover(const Candidate& a, const Candidate& b, std::mt19937_64& rng) const;
  // "tile_rows=6 tile_vectors=4 panel=default ..." for logs and progress lines.
  std::string describe(const Candidate& c) const;

 private:
  void add_cpu_knobs();
  void add_gpu_knobs();
  void add_accelerator_knobs();
  bool prefetch_applies() const;
  schedule::CpuCaches caches() const { return schedule::cpu_caches_of(target_); }  // whether CpuKnobs::prefetch changes this kernel's schedule
  schedule::Schedule default_schedule() const;
  schedule::Schedule build(const Candidate& c) const;  // throws Error when the steps do not apply
  // The value of the knob named `name` in `c`; nullopt for "the default's choice" or no such knob.
  std::optional<int64_t> value(const Candidate& c, std::string_view name) const;

  te::ComputeDag dag_;
  TargetTraits target_;
  std::vector<Knob> knobs_;
  std::string unsupported_;
};

}  // namespace tessel::tune
