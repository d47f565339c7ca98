#pragma once
// The register tile of a product on a CPU with vectors of `lanes` floats: how many rows of the
// output by how many vectors of its columns one micro-kernel keeps in registers. The default
// schedules tile every register-blocked reduction with it, and transform_layout packs a MatMul's
// constant weights in panels exactly one tile wide (matmul_packed), so both ask here.
//
//        x (columns, vectors * lanes wide)
//      ┌──────────────┐
//   y  │ acc acc acc  │  rows x vectors accumulators; per k: one broadcast of A per row,
//      │ acc acc acc  │  `vectors` loads of B, rows * vectors FMAs
//      └──────────────┘
#include <cstdint>

namespace tessel {

// `rows` of y by `vectors` vectors of x. The accumulators (rows x vectors registers of `lanes`
// floats) must fit the vector registers with room for the loaded operands; a tile that divides the
// extent avoids tail loops.
struct RegisterTile {
  int64_t rows = 1, vectors = 1, lanes = 1;  // x tile = vectors * lanes
  int rows_axis = -1;                        // which data-parallel axis the rows run along
  bool usable = false;
  int64_t width() const { return vectors * lanes; }
};

// The vector registers of an x86 core with vectors of `lanes` floats: AVX-512's 32, AVX2's 16.
int64_t vector_registers(int64_t lanes);

// Rows of the tile for an extent of y and a budget of rows (see register_tile.cpp).
int64_t rows_for(int64_t extent, int64_t budget);

// The tile for an output of y_extent rows by x_extent columns; usable = false when it is too narrow
// to vectorize (rows_axis is left for the caller).
RegisterTile choose_register_tile(int64_t y_extent, int64_t x_extent, int64_t lanes);

}  // namespace tessel
