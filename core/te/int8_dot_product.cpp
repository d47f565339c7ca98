#include "core/te/int8_dot_product.h"

namespace tessel::te {
using namespace loopir;

namespace {

constexpr int64_t kLanes = 16, kDepth = 4;

Expr i32(int64_t v) { return make_int(v, DataType::kInt32); }
Expr to_i32(const Expr& e) { return cast(DataType::kInt32, e); }
int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

}  // namespace

std::string why_not_int8_dot_product(const Int8ProductOperands& p) {
  auto byte = [](DataType t) { return t == DataType::kUInt8 || t == DataType::kInt8; };
  if (p.a->shape.size() != 2 || p.b->shape.size() != 2) return "the operands are not both matrices";
  if (!byte(p.a->dtype) || !byte(p.b->dtype)) return "the operands are not 8-bit";
  if (p.a->shape[1] != p.b->shape[0]) return "the inner extents differ";
  return {};
}

Tensor int8_dot_product(const Int8ProductOperands& p, const std::string& name) {
  const Tensor &a = p.a, &b = p.b;
  const int64_t m = a->shape[0], k = a->shape[1], n = b->shape[1];
  const int64_t k4 = round_up(k, kDepth), n16 = round_up(n, kLanes);
  const int64_t sa = a->dtype == DataType::kInt8 ? 128 : 0, sb = b->dtype == DataType::kUInt8 ? 128 : 0;

  // A' is A itself when it is already u8 with whole depth groups.
  Tensor rows = a;
  if (sa != 0 || k4 != k) {
    rows = compute(name + "_vnni_a", {m, k4}, [&](const std::vector<Expr>& i) {
      Expr v = cast(DataType::kUInt8, to_i32(at(a, {i[0], min(i[1], make_int(k - 1))})) + i32(sa));
      return k4 == k ? v : if_then_else(lt(i[1], make_int(k)), v, make_const(DataType::kUInt8, 0));
    });
  }
  Tensor packed =
      compute(name + "_vnni_b", {n16 / kLanes, k4 / kDepth, kLanes, kDepth}, [&](const std::vector<Expr>& i) {
        Expr depth = i[1] * kDepth + i[3], column = i[0] * kLanes + i[2];
        Expr v =
            cast(DataType::kInt8, to_i32(at(b, {min(depth, make_int(k - 1)), min(column, make_int(n - 1))})) - i32(sb));
        if (k4 == k && n16 == n) return v;
        return if_then_else(logical_and(lt(depth, make_int(k)), lt(column, make_int(n))), v,
                            make_const(DataType::kInt8, 0));
      });
  IterVar ko = reduce_axis(k4 / kDepth, "ko"), ki = reduce_axis(kDepth, "ki");
  Tensor dot = compute(name + kVnniDotSuffix, {m, n16 / kLanes, kLanes},
                       [&](const std::vector<Expr>& i) {
                         return sum(to_i32(at(rows, {i[0], ko.var * kDepth + ki.var})) *
                                        to_i32(at(packed, {i[1], ko.var, i[2], ki.var})),
                                    {ko, ki});
                       },
                       {"i", "jo", "ji"});

  auto a_zero = [&](const Expr& row) { return p.a_zero ? p.a_zero(row) : i32(0); };
  auto b_zero = [&](const Expr& column) { return p.b_zero ? p.b_zero(column) : i32(0); };
  const bool row_sums = sb != 0 || p.b_zero, column_sums = sa != 0 || p.a_zero;
  Tensor row_sum, column_sum;
  if (row_sums) {
    IterVar r = reduce_axis(k, "k");
    row_sum = compute(name + "_vnni_rows", {m}, [&](const std::vector<Expr>& i) {
      return sum(to_i32(at(a, {i[0], r.var})), {r});
    });
  }
  if (column_sums) {
    IterVar r = reduce_axis(k, "k");
    column_sum = compute(name + "_vnni_columns", {n}, [&](const std::vector<Expr>& i) {
      return sum(to_i32(at(b, {r.var, i[0]})), {r});
    });
  }
  return compute(name, {m, n}, [&](const std::vector<Expr>& i) {
    Expr v = at(dot, {i[0], i[1] / kLanes, i[1] % kLanes});
    if (row_sums) v = v + (i32(sb) - b_zero(i[1])) * at(row_sum, {i[0]});
    if (column_sums) v = v - (i32(sa) + a_zero(i[0])) * at(column_sum, {i[1]});
    if (sa * sb != 0 || (p.a_zero && p.b_zero)) v = v + i32(k) * (i32(sa * sb) + a_zero(i[0]) * b_zero(i[1]));
    return v;
  });
}

}  // namespace tessel::te
