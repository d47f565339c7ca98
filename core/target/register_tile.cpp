#include "core/target/register_tile.h"

#include <algorithm>

namespace tessel {

// The vector registers of an x86 core with vectors of `lanes` floats: AVX-512's 32 zmm, AVX2's 16
// ymm. A tile whose accumulators do not fit spills them to the stack on every multiply-add, which
// costs far more than the tile's reuse saves (AVX-512's 6 x 4-vector tile on an AVX2 core:
// tests/bench/RESULTS.md, sessions 12-13).
int64_t vector_registers(int64_t lanes) { return lanes >= 16 ? 32 : 16; }

// Rows of the register tile: the most rows (at least half the register budget) whose tiles
// cover the extent with under 3% wasted rows; otherwise the best-covering count. A tail tile is a
// second copy of the unrolled micro-kernel: compile time, and slower for a short extent.
//   1024 rows, budget 6 -> 6 (170 tiles + a 4-row tail)     56, budget 12 -> 8     28 -> 7
int64_t rows_for(int64_t extent, int64_t budget) {
  if (extent <= budget) return extent;
  int64_t best = budget;
  double best_use = 0;
  for (int64_t r = budget; r >= std::max<int64_t>(1, (budget + 1) / 2); --r) {
    double use = static_cast<double>(extent) / static_cast<double>((extent + r - 1) / r * r);
    if (use >= 0.97) return r;
    if (use > best_use) best = r, best_use = use;
  }
  return best;
}

RegisterTile choose_register_tile(int64_t y_extent, int64_t x_extent, int64_t lanes) {
  RegisterTile t;
  if (x_extent < 4 || lanes < 2) return t;  // too narrow to vectorize: the plain schedule does as well
  t.lanes = std::min(lanes, x_extent);
  t.vectors = 1;
  // Three quarters of the registers hold accumulators (24 of AVX-512's 32, 12 of AVX2's 16); the
  // rest one row of loaded vectors and a broadcast. The tile is at most an eighth of the registers
  // wide (4 vectors, or 2), so that it keeps rows enough to reuse each loaded vector. With few rows
  // (a GEMV: 1 x N) the tile widens instead, up to 16 vectors: fewer, longer contiguous streams
  // through the weights, which is what a memory-bound kernel needs.
  const int64_t registers = vector_registers(lanes), accumulators = registers * 3 / 4;
  const bool few_rows = y_extent < 4;
  for (int64_t v : {16, 8, 4, 2}) {
    if (v > registers / 8 && (!few_rows || v * y_extent > accumulators)) continue;
    if (x_extent % (v * lanes) == 0) {
      t.vectors = v;
      break;
    }
  }
  // A GEMV whose width no wide tile divides (MobileNetV2's classifier: 1000 columns) still takes the
  // widest tile, with a tail tile (loop_partition peels it off): one vector wide, each tile reads
  // 32 bytes of every weight row, a 4000-byte stride the prefetchers barely follow, and two tiles
  // share each cache line. It stays within the accumulators' budget: 16 vectors, all the registers,
  // leave the accumulators in memory (MobileNetV2's classifier: tests/bench/RESULTS.md, session 16).
  if (few_rows && t.vectors == 1 && x_extent % lanes == 0) {
    for (int64_t v : {16, 8, 4, 2})
      if (v * y_extent <= accumulators && 4 * v * lanes <= x_extent) {
        t.vectors = v;
        break;
      }
  }
  const int64_t max_rows = std::min<int64_t>(12, accumulators / t.vectors);
  t.rows = rows_for(y_extent, max_rows);
  // AVX2's 12 accumulators also make a 4 x 3-vector tile: fewer loads per FMA than 5 or 6 x 2 (7 per
  // 12 FMAs against 7 per 10 or 8 per 12). It takes over where it covers the rows exactly and the
  // two-vector tile does not (BERT's 128 rows: 5 x 2 with a 3-row tail; its products:
  // tests/bench/RESULTS.md, session 16).
  if (!few_rows && registers == 16 && t.vectors == 2 && y_extent % t.rows != 0 && y_extent % 4 == 0 &&
      x_extent % (3 * lanes) == 0) {
    t.vectors = 3;
    t.rows = 4;
  }
  // And where three vectors divide the width and two do not (a conv's 24-channel block): 4 x 3
  // instead of 8 x 1 vector: 7 loads per 12 FMAs instead of 9 per 8 (MobileNetV2's 144 -> 24
  // projections: tests/bench/RESULTS.md, session 17).
  if (!few_rows && registers == 16 && t.vectors == 1 && x_extent % (3 * lanes) == 0) {
    t.vectors = 3;
    t.rows = rows_for(y_extent, 4);
  }
  t.usable = true;
  return t;
}

}  // namespace tessel
