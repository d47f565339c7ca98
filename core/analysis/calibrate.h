#pragma once
// Machine ceilings for the roofline, measured by kernels Tessel itself generates (through the
// target's code generator), and cached per machine and target.
//
//   peak FLOP/s:  many independent FMA chains in registers, at 1 (scalar), 8 (256-bit) and
//                 16 (512-bit) float lanes
//   bandwidth:    a streaming sum over a buffer larger than the caches (DRAM) and over one that
//                 fits in L2 (cache), repeated
//
//   GFLOP/s ▲          ________________ 512-bit FMA peak
//           │         /________________ 256-bit FMA peak
//           │   DRAM /
//           │  slope/
//           └──────────────────────────▶ FLOP/byte
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/target/target.h"

namespace tessel::analysis {

struct Ceiling {
  std::string name;   // "fma_512", "fma_256", "scalar_fma", "dram", "l2"
  double value = 0;   // GFLOP/s for compute ceilings, GB/s for bandwidths
};

struct MachineCeilings {
  std::string machine;                 // CPU model name
  std::string target;                  // the target string it was measured with
  int threads = 1;
  std::vector<Ceiling> compute;        // GFLOP/s, highest first
  std::vector<Ceiling> bandwidth;      // GB/s, highest first
  double peak_gflops() const { return compute.empty() ? 0 : compute.front().value; }
  double dram_gbps() const;            // the DRAM bandwidth (0 if not measured)
  // The roofline: min(peak, intensity × DRAM bandwidth), and the name of the binding ceiling.
  double attainable(double intensity, std::string* bound) const;
};

nlohmann::json ceilings_json(const MachineCeilings& c);
MachineCeilings ceilings_from_json(const nlohmann::json& j);

struct CalibrateOptions {
  bool quick = false;  // smaller buffers and fewer repeats (tests, smoke runs)
};

// Measures with the target's code generator; throws Error if it has none.
MachineCeilings calibrate(const Target& target, const CalibrateOptions& options = {});

// ~/.cache/tessel/ceilings.json (or $TESSEL_CACHE_DIR), keyed by machine + target.
std::string ceilings_cache_path();
std::optional<MachineCeilings> load_cached_ceilings(const Target& target);
void save_cached_ceilings(const MachineCeilings& c);

}  // namespace tessel::analysis
