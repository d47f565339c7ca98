#pragma once
// The OpenBLAS reference runs its best kernel for this CPU, whatever the environment says.
//
// OpenBLAS picks its kernel ("core") from the CPU it finds when the library loads, or from
// OPENBLAS_CORETYPE when that is set. Both go wrong on the machines these benchmarks run on:
// Debian's OpenBLAS 0.3.21 does not know newer Xeons and falls back to "Prescott" (SSE3: 25 GFLOP/s
// on GEMM 1024³ where its AVX-512 kernel gives 145), and some environments set OPENBLAS_CORETYPE
// to an older core (Haswell on an AVX-512 machine). A reference that slow would flatter every
// ratio, so before anything is measured the bench compares the core OpenBLAS runs with the best
// one for the CPU's features and, when they differ, runs itself again with OPENBLAS_CORETYPE set
// to that one (the library reads it only at load time, hence the re-exec; once).
//
//   CPU has            best core
//   avx512bf16         Cooperlake
//   avx512f            SkylakeX
//   avx2 + fma         Haswell (or Zen on an AMD CPU: the same kernels with AMD's cache sizes)
//   otherwise          whatever OpenBLAS chose
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" char* openblas_get_corename(void);

namespace tessel::bench {

inline std::string best_openblas_core() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512bf16")) return "Cooperlake";
  if (__builtin_cpu_supports("avx512f")) return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return "";
}

// Whether the core OpenBLAS runs is as good as `best`: Zen runs Haswell's kernels with blocking
// sizes for AMD's caches, so on an AMD CPU it is the better of the two.
inline bool runs_best_core(const std::string& running, const std::string& best) {
  return running == best || (best == "Haswell" && running == "Zen");
}

// Call first in main(). Returns the line to print about the core (the re-exec'd run prints it).
inline std::string use_best_openblas_core(char** argv) {
  const std::string running = openblas_get_corename();
  const std::string best = best_openblas_core();
  const char* marker = "TESSEL_BENCH_OPENBLAS_CORE";
  if (!best.empty() && !runs_best_core(running, best) && !std::getenv(marker)) {
    setenv("OPENBLAS_CORETYPE", best.c_str(), 1);
    setenv(marker, running.c_str(), 1);
    execv("/proc/self/exe", argv);
    std::perror("re-running with OPENBLAS_CORETYPE set");  // then go on with the core we have
  }
  std::string line = "OpenBLAS core: " + running;
  if (const char* before = std::getenv(marker))
    line += std::string(" (set by the bench: OpenBLAS ran ") + before + " here, not its best kernel for this CPU)";
  return line;
}

}  // namespace tessel::bench
