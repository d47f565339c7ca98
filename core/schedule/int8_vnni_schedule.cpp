#include "core/schedule/int8_vnni_schedule.h"

#include <algorithm>

#include "core/schedule/parallel_work.h"
#include "core/te/int8_dot_product.h"

namespace tessel::schedule {

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The largest of `choices` (descending) that divides `extent`.
int64_t dividing(int64_t extent, std::initializer_list<int64_t> choices) {
  for (int64_t c : choices)
    if (extent % c == 0) return c;
  return 1;
}

}  // namespace

std::optional<Schedule> int8_vnni_schedule(const te::ComputeDag& dag, bool dot_instruction) {
  auto is_dot = [](const te::Tensor& t) { return ends_with(t->name, te::kVnniDotSuffix); };
  if (std::none_of(dag.ops.begin(), dag.ops.end(), is_dot)) return std::nullopt;
  std::string text;
  const bool parallel = worth_parallel(dag);  // parallel_work.h: a small kernel stays serial
  auto line = [&](const std::string& s) {
    if (parallel || s.rfind("parallel(", 0) != 0) text += s + "\n";
  };
  // The 16 lanes × 4 depths: the dot step innermost, or, without it, the 4 depths outside the
  // register tile (one strided load of 16 weights per depth serves every row of the tile) and
  // the 16 lanes a vector.
  auto tile_steps = [&](const std::string& outside, const std::string& tile, const std::string& lanes,
                        const std::string& depths) {
    if (dot_instruction) {
      line("reorder(" + outside + ", " + tile + ", " + lanes + ", " + depths + ")");
      line("tensorize(" + lanes + ", dot_16x4_u8i8_i32)");
    } else {
      line("reorder(" + outside + ", " + depths + ", " + tile + ", " + lanes + ")");
      line("unroll(" + depths + ")");
      line("vectorize(" + lanes + ")");
    }
  };
  for (const te::Tensor& t : dag.ops) {
    if (t->is_placeholder) continue;
    const std::string& s = t->name;
    const bool output = std::find(dag.outputs.begin(), dag.outputs.end(), t) != dag.outputs.end();
    if (is_dot(t) && t->shape.size() == 5) {  // a convolution's: n, mo, y, x, mi
      const int64_t columns = dividing(t->shape[3], {8, 7, 4, 2}), blocks = dividing(t->shape[1], {2});
      line("split(" + s + ".mo, " + std::to_string(blocks) + ")");
      line("split(" + s + ".x, " + std::to_string(columns) + ")");
      tile_steps(s + ".n, " + s + ".mo.outer, " + s + ".y, " + s + ".x.outer, " + s + ".co, " + s + ".ry, " + s + ".rx",
                 s + ".mo.inner, " + s + ".x.inner", s + ".mi", s + ".ci");
      if (blocks > 1) line("unroll(" + s + ".mo.inner)");
      if (columns > 1) line("unroll(" + s + ".x.inner)");
      line("fuse(" + s + ".n, " + s + ".mo.outer)");
      line("parallel(" + s + ".n.mo.outer.fused)");
    } else if (is_dot(t)) {
      const int64_t rows = dividing(t->shape[0], {4, 2}), blocks = dividing(t->shape[1], {2});
      line("tile(" + s + ".i, " + s + ".jo, " + std::to_string(rows) + ", " + std::to_string(blocks) + ")");
      tile_steps(s + ".i.outer, " + s + ".jo.outer, " + s + ".ko", s + ".i.inner, " + s + ".jo.inner", s + ".ji",
                 s + ".ki");
      if (rows > 1) line("unroll(" + s + ".i.inner)");
      if (blocks > 1) line("unroll(" + s + ".jo.inner)");
      line("parallel(" + s + ".i.outer)");
    } else if (output || t->reduction() || ends_with(s, "_vnni_a") || ends_with(s, "_vnni_b")) {
      if (!t->axes.empty()) line("parallel(" + s + "." + t->axes[0].var->name + ")");
    } else {
      line("compute_inline(" + s + ")");
    }
  }
  return parse_schedule(text);
}

}  // namespace tessel::schedule
