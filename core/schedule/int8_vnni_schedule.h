#pragma once
// The default CPU schedule for a kernel holding an int8 product in the VNNI form
// (core/te/int8_dot_product.h), for targets whose CPU has the dot instruction:
//
//   NAME_vnni_dot[i, jo, ji] = Σ_{ko, ki} A'[i, 4·ko + ki] · B'[jo, ko, ji, ki]
//
//   tile(dot.i, dot.jo, R, J)            R rows × J column blocks of 16 accumulators per tile,
//   reorder(i.o, jo.o, ko, i.i, jo.i, ji, ki)   the depth loop outside the tile, so each
//   unroll(i.i), unroll(jo.i)            accumulator vector stays in a register across ko
//   tensorize(ji, dot_16x4_u8i8_i32)     one vpdpbusd per (row, column block, 4 depths)
//   parallel(i.o)
//
// The packing stages (A', B') and the row and column sums are computed once, parallel over their
// first axis; other intermediates that are element-wise are inlined into the output (the
// requantization), which runs parallel over its first axis.
#include <optional>

#include "core/schedule/schedule.h"

namespace tessel::schedule {

// nullopt when `dag` holds no stage in the VNNI form. Without `dot_instruction` (a CPU without
// VNNI, or a backend without the step) the same tiles compute the 16 lanes as a vector and the 4
// depths unrolled: the packed layout stays, only the innermost step differs.
std::optional<Schedule> int8_vnni_schedule(const te::ComputeDag& dag, bool dot_instruction = true);

}  // namespace tessel::schedule
