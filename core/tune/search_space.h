#pragma once
// The schedules `tessel tune` searches for one kernel: the default CPU schedule's own decisions
// (core/schedule/default_schedule.h, CpuKnobs) opened up to every value that fits the kernel's
// shapes, so every candidate is an ordinary schedule (steps as data) the studio can show and edit.
//
//   ComputeDag ──knob_space──▶ knobs and their values, from the stages' extents:
//        tile_rows      1 2 3 4 6 8 12 (≤ rows)          register tile of a reduction output
//        tile_vectors   1 2 4 8 (× lanes ≤ last axis)
//        k_unroll       1 2 4 8 (divides a lone k)
//        panel          0 2 4 8 16 (< tile columns)      second tiling level: cache panels
//        pack           0 1 (a lone k)                   the vector operand packed per tile column
//        parallel_loops 1 2                              one loop, or the two outermost fused
//        vector_split   lanes 2·lanes 4·lanes            element-wise outputs
//   Candidate = one value index per knob ──schedule_of──▶ Schedule (default_cpu_schedule(dag, lanes, knobs))
//
// Candidate 0 (every index 0 = "the default's choice") is the default schedule itself, so a search
// always measures the schedule it has to beat.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/schedule/default_schedule.h"
#include "core/schedule/schedule.h"
#include "core/te/tensor.h"

namespace tessel::tune {

struct Knob {
  std::string name;
  std::vector<int64_t> values;  // values[0] is -1: "the default's own choice"
};

using Candidate = std::vector<int>;  // an index into each knob's values

class SearchSpace {
 public:
  SearchSpace(te::ComputeDag dag, int64_t vector_lanes);

  const te::ComputeDag& dag() const { return dag_; }
  const std::vector<Knob>& knobs() const { return knobs_; }
  // The number of distinct candidates (product of the knobs' sizes).
  double size() const;

  schedule::CpuKnobs knobs_of(const Candidate& c) const;
  // The candidate's schedule; nullopt when its steps do not apply to the DAG (never for candidate 0).
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
  te::ComputeDag dag_;
  int64_t lanes_;
  std::vector<Knob> knobs_;
};

}  // namespace tessel::tune
