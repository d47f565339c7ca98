#pragma once
// K blocking of a register-blocked GEMM (GotoBLAS's kc), one of the default CPU schedule's choices
// (CpuKnobs::k_block, default_schedule.h):
//
//   C[.., i, j] = sum(A[.., i, k] * B[.., k, j], k)
//
//   split(C.k, kc); rfactor(C.k.outer)         the partial sums of one block of k, and their sum:
//     C_rf[ko, .., i, j] = sum(A[.., i, ko*kc + ki] * B[.., ko*kc + ki, j], ki)     (local)
//     C[.., i, j]        = sum(C_rf[ko, .., i, j], ko)
//
//   for j.outer                       tile columns (W = vectors x lanes wide), parallel
//     C[:, tile column] = 0           C's own init, at its first reduce loop
//     for ko                          blocks of k       (k_outer: ko outside j.outer instead)
//       B_global[kc][W] = B[ko*kc.., j.outer*W..]       the panel, packed per block and column
//       for i.outer                   row tiles
//         C_rf[rows][W] = 0; for ki (unrolled by k_unroll), rows, vectors (unrolled), lanes:
//           C_rf += A[i, ko*kc + ki] * B_global[ki, ..]      accumulators in vector registers
//         C[tile] += C_rf             once per block: rows x vectors loads, adds and stores
//
// Without the blocking (register_blocked in cpu_register_blocking.cpp) the panel a row tile streams is
// K x W: 256 KiB at K = 1024, W = 64, which lives in L2; blocked, it is kc x W (32 KiB at kc =
// 128), which the micro-kernel reads from L1, and A's rows are read kc floats at a time. The price
// is C read and written K / kc times instead of once, and nothing prefetches those tiles of C
// (GotoBLAS's kernels do): each pass over a C that does not fit L2 costs about as much as a
// quarter of the multiply-adds of a 128-deep block (session 10, tests/bench/RESULTS.md). So it pays
// for a long K against a short M (128 x 768 x 3072, the block loop outside), where A's rows outgrow
// L2, not at 1024^3, where the default's K x W panel in L2 is faster.
#include <cstdint>
#include <string>

#include "core/schedule/schedule_writer.h"

namespace tessel::schedule {

struct KBlocking {
  int64_t rows = 1, vectors = 1, lanes = 1;  // the register tile: rows x (vectors * lanes)
  int64_t k_block = 0;                       // kc: a divisor of K, below K
  int64_t k_unroll = 4;                      // the block's k loop split by this and unrolled (1: neither)
  bool k_outer = false;                      // the block loop outside the tile columns
  std::string packed;                        // the operand packed per block and tile column ("": none)
};

// Whether C (a computed stage, untouched by any step yet) is a GEMM that k blocking by `k_block`
// applies to: one reduce axis whose extent `k_block` divides with at least two blocks, rank >= 2.
bool k_blocking_applies(const Stage& c, int64_t k_block);

// Writes the schedule above for output stage `c` (k_blocking_applies must hold). The batch axes or
// else the tile columns run in parallel (when the writer allows parallel loops).
void k_blocked_gemm(ScheduleWriter& w, const std::string& c, const KBlocking& b);

}  // namespace tessel::schedule
