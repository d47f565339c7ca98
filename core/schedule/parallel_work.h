#pragma once
// Whether a kernel is worth running on several threads.
//
// Handing a parallel loop to the thread pool and waiting for every share costs a few
// microseconds on this machine kind even with the workers awake and spinning: the loop's
// description and the finish counter cross between cores, and the output's cache lines written
// by a worker move back to the core that reads them next. A kernel whose whole work takes about
// that long on one thread only gets slower with two, so the default schedules keep it serial.
//
// The work is counted in element evaluations: each stage's elements times its reduction's extent
// (one multiply-add of a matmul or conv, one element of an element-wise op), plus
// kWorkPerElementMoved for every element of the kernel's inputs and outputs. The threshold was set
// by measuring at 2 threads (tests/bench/RESULTS.md, session 9):
//
//                                            multiply-adds  + moved × 8  = work (about)
//   mlp's Gemm 4×64 by 64                          16 K        37 K        53 K   serial
//   qdq_resnet's 3×3 conv 8@16×16                 147 K        42 K       190 K   serial
//   mobilenet_block's 1×1 conv 16→64@16×16        262 K       168 K       430 K   serial
//   resnet_block's 3×3 conv 16@16×16              590 K        92 K       682 K   serial (0.015 ms
//                                                                                  on 1 thread,
//                                                                                  0.019 on 2)
//   MobileNetV2's depthwise 3×3 576@14×14         1.0 M       1.9 M       2.9 M   parallel (gains)
//   ResNet-18's 3×3 conv 64@56×56                 116 M       3.5 M       120 M   parallel
//
// Compiled by hand (a schedule from the editor, a tuning record), a `parallel` step is kept as
// written: this is only the default schedules' choice.
#include <cstdint>

#include "core/te/tensor.h"

namespace tessel::schedule {

// A kernel's work: element evaluations of every computed stage, plus kWorkPerElementMoved for each
// element of its inputs and outputs (a depthwise conv does few multiply-adds per byte it moves, and
// its time is the moving).
int64_t kernel_work(const te::ComputeDag& dag);
constexpr int64_t kWorkPerElementMoved = 8;

// The least work for which the default schedules run a kernel's outer loop in parallel.
constexpr int64_t kParallelWorkMin = 1024 * 1024;

inline bool worth_parallel(const te::ComputeDag& dag) { return kernel_work(dag) >= kParallelWorkMin; }

}  // namespace tessel::schedule
