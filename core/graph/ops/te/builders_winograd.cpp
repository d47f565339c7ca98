// Tensor-expression builders of the Winograd transforms (core/graph/ops/winograd_ops.h). Each
// element is a sum over its tile written out term by term; a term's coefficient depends on the
// element's position in the tile (a loop index), so it is a select over the matrix column:
//
//   V[e, t, c] = Σ_{r1, r2} Bᵀ[e/A][r1] · Bᵀ[e%A][r2] · X[tile t's row r1, column r2, channel c]
//                └ select(e/A == 0, 4, select(e/A == 2, ...)) ┘
//
// The selects depend on the outer loops only; the vectorized channel loop inside sees constants.
#include "core/graph/ops/te/builder_support.h"
#include "core/graph/ops/te_builders.h"
#include "core/graph/ops/winograd_ops.h"

namespace tessel::ops::te_builder {

namespace {

// matrix(row, col) for `index` in [0, rows), `col` fixed: a select over the rows whose entry is
// not zero; nullptr when the whole column is zero.
template <class Entry>
Expr select_column(DataType t, int64_t rows, const Entry& entry, const Expr& index) {
  Expr out;
  for (int64_t r = rows - 1; r >= 0; --r) {
    const double v = entry(r);
    if (v == 0) continue;
    out = out ? te::if_then_else(loopir::eq(index, make_int(r)), num(t, v), out)
              : te::if_then_else(loopir::eq(index, make_int(r)), num(t, v), num(t, 0));
  }
  return out;
}

// Whether matrix(index, col) is not zero, as a condition on `index` (nullptr: never zero).
template <class Entry>
Expr nonzero_at(int64_t rows, const Entry& entry, const Expr& index) {
  Expr any;
  bool all = true;
  for (int64_t r = 0; r < rows; ++r) {
    if (entry(r) == 0) {
      all = false;
      continue;
    }
    const Expr hit = loopir::eq(index, make_int(r));
    any = any ? loopir::logical_or(any, hit) : hit;
  }
  return all ? Expr() : any;
}

// coefficient · value where the coefficient is not zero, else 0: once the schedule unrolls the
// loop that picks the coefficient, the select folds and a zero term disappears from the sum
// (x · 0 itself cannot fold: NaN · 0 is NaN).
Expr guarded_term(DataType t, const Expr& a_nonzero, const Expr& b_nonzero, const Expr& term) {
  Expr cond = a_nonzero && b_nonzero ? loopir::logical_and(a_nonzero, b_nonzero) : (a_nonzero ? a_nonzero : b_nonzero);
  return cond ? te::if_then_else(cond, term, num(t, 0)) : term;
}

// Σ terms as a balanced tree: floats do not reassociate, and a chain of 36 dependent adds would
// wait on the FMA latency at every term (about 5 cycles each) where a tree of depth 6 does not.
Expr balanced_sum(std::vector<Expr> terms) {
  while (terms.size() > 1) {
    std::vector<Expr> next;
    for (size_t i = 0; i + 1 < terms.size(); i += 2) next.push_back(terms[i] + terms[i + 1]);
    if (terms.size() % 2) next.push_back(terms.back());
    terms = std::move(next);
  }
  return terms.front();
}

// One element of a two-sided product with a small matrix M (Bᵀ·X·B for the input, Aᵀ·Y·A for the
// output), the element's position in the tile picked by the loop indices `row` and `col`:
//
//   out[row, col] = Σ_{p, q < depth} M[row][p] · M[col][q] · value(p, q)      M: `rows` x `depth`
//
// entry(r, p) is M[r][p]. A (p, q) whose coefficients are zero for every row or column is left out;
// the rest are guarded (guarded_term) and summed as a balanced tree.
template <class Entry, class Value>
Expr two_sided_product(DataType t, int64_t rows, int64_t depth, const Entry& entry, const Expr& row,
                       const Expr& col, const Value& value) {
  std::vector<Expr> terms;
  for (int64_t p = 0; p < depth; ++p) {
    const auto column_p = [&](int64_t r) { return entry(r, p); };
    const Expr row_coef = select_column(t, rows, column_p, row);
    for (int64_t q = 0; q < depth; ++q) {
      const auto column_q = [&](int64_t r) { return entry(r, q); };
      const Expr col_coef = select_column(t, rows, column_q, col);
      if (!row_coef || !col_coef) continue;
      terms.push_back(guarded_term(t, nonzero_at(rows, column_p, row), nonzero_at(rows, column_q, col),
                                   row_coef * col_coef * value(p, q)));
    }
  }
  return balanced_sum(std::move(terms));
}

}  // namespace

Stages winograd_input_transform(BuildContext& c) {
  const DataType t = float_operand(c);
  const auto& a = c.attrs<ops::WinogradInputAttrs>();
  const ops::WinogradMatrices& w = ops::winograd_matrices(a.tile);
  const te::Tensor& x = c.input(0);
  const int64_t h = x->shape[2], width = x->shape[3], b = x->shape[4];
  const int64_t th = ops::winograd_tiles(a.out_height, w.m), tw = ops::winograd_tiles(a.out_width, w.m);
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
    const Expr e1 = i[0] / w.a, e2 = i[0] % w.a;
    const Expr n = i[1] / (th * tw), ty = i[1] / tw % th, tx = i[1] % tw;
    const Expr cb = i[2] / b, ci = i[2] % b;
    const auto bt_entry = [&](int64_t e, int64_t r) { return w.BT(e, r); };
    return two_sided_product(t, w.a, w.a, bt_entry, e1, e2, [&](int64_t r1, int64_t r2) {
      const Expr y = ty * w.m + (r1 - a.pad_top), xx = tx * w.m + (r2 - a.pad_left);
      const Expr inside = loopir::logical_and(loopir::logical_and(loopir::ge(y, make_int(0)), loopir::lt(y, make_int(h))),
                                              loopir::logical_and(loopir::ge(xx, make_int(0)), loopir::lt(xx, make_int(width))));
      return te::if_then_else(inside, te::at(x, {n, cb, y, xx, ci}), num(t, 0));
    });
  }, {"e", "t", "c"})};
}

Stages winograd_output_transform(BuildContext& c) {
  const DataType t = float_operand(c);
  const auto& a = c.attrs<ops::WinogradOutputAttrs>();
  const ops::WinogradMatrices& w = ops::winograd_matrices(a.tile);
  const te::Tensor& m = c.input(0);
  const int64_t th = ops::winograd_tiles(a.out_height, w.m), tw = ops::winograd_tiles(a.out_width, w.m);
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& i) {
    const Expr tile = (i[0] * th + i[2] / w.m) * tw + i[3] / w.m;
    const Expr k = i[1] * a.block + i[4];
    const Expr row = i[2] % w.m, col = i[3] % w.m;
    const auto at_entry = [&](int64_t r, int64_t e) { return w.AT(r, e); };
    const Expr sum = two_sided_product(t, w.m, w.a, at_entry, row, col, [&](int64_t e1, int64_t e2) {
      return te::at(m, {make_int(e1 * w.a + e2), tile, k});
    });
    return c.has(1) ? sum + te::at(c.in[1], {i[1], i[4]}) : sum;
  }, {"n", "f", "y", "x", "fb"})};
}

}  // namespace tessel::ops::te_builder
