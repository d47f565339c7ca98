// Tensor-expression builders of the positional ops (index_ops.h): each output element is a
// selection or a small reduction over the inputs, written without data-dependent loops.
//
//   Trilu(x: f32[3,4], upper)        ──▶  trilu_5[i, j] = select(j - i >= k, x[i, j], 0)
//   CumSum(x: f32[5], axis 0)        ──▶  cumsum_5[i]   = sum(select(r <= i, x[r], 0), r in 0..5)
//   TopK(x: f32[6], k 2, largest)    ──▶  rank[i] = #{r: x[r] > x[i] or (x[r] == x[i] and r < i)}
//                                         values[o] = sum(select(rank[r] == o, x[r], 0))
#include "core/graph/ops/index_ops.h"
#include "core/graph/ops/te/builder_support.h"
#include "core/graph/ops/te_builders.h"

namespace tessel::ops::te_builder {

namespace {

using Index = const std::vector<Expr>&;

// The scalar (0-d or one-element) tensor's value, read at index 0 of each axis.
Expr scalar_read(const te::Tensor& t) { return te::at(t, std::vector<Expr>(t->shape.size(), make_int(0))); }

int64_t axis_of(const BuildContext& c, int64_t axis, int64_t rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) c.unsupported("axis " + std::to_string(axis) + " out of range");
  return a;
}

// Types the arithmetic builders compute in (others decline).
void require_arithmetic(const BuildContext& c, DataType t) {
  if (t != DataType::kFloat32 && t != DataType::kFloat64 && t != DataType::kInt32 && t != DataType::kInt64)
    c.unsupported(std::string(dtype_name(t)) + " elements");
}

// One reduction axis per extent, and the row-major flat position they form.
std::vector<IterVar> reduce_axes(const Shape& extents, const std::string& prefix) {
  std::vector<IterVar> r;
  for (size_t k = 0; k < extents.size(); ++k) r.push_back(te::reduce_axis(extents[k], prefix + std::to_string(k)));
  return r;
}
Expr flat_of(const std::vector<IterVar>& r, const Shape& extents) {
  Expr flat = make_int(0);
  for (size_t k = 0; k < r.size(); ++k) flat = flat * extents[k] + Expr(r[k].var);
  return flat;
}

}  // namespace

Stages trilu(BuildContext& c) {
  const bool upper = c.attrs<ops::TriluAttrs>().upper != 0;
  const te::Tensor& x = c.input(0);
  const size_t r = x->shape.size();
  return {te::compute(c.stage(), c.shape(), [&](Index p) {
    Expr k = c.has(1) ? convert(DataType::kInt64, scalar_read(c.in[1])) : make_int(0);
    Expr d = convert(DataType::kInt64, p[r - 1]) - convert(DataType::kInt64, p[r - 2]);
    Expr keep = upper ? loopir::ge(d, k) : loopir::le(d, k);
    return te::if_then_else(keep, te::at(x, p), num(x->dtype, 0));
  })};
}

Stages cum_sum(BuildContext& c) {
  const auto& a = c.attrs<ops::CumSumAttrs>();
  const te::Tensor& x = c.input(0);
  require_arithmetic(c, x->dtype);
  const int64_t axis = axis_of(c, c.known(1, "axis").to_int64s().at(0), static_cast<int64_t>(x->shape.size()));
  IterVar r = te::reduce_axis(x->shape[axis], "r");
  return {te::compute(c.stage(), c.shape(), [&](Index p) {
    std::vector<Expr> src = p;
    src[axis] = r.var;
    Expr q = r.var, at = convert(DataType::kInt64, p[axis]);
    Expr included = a.reverse ? (a.exclusive ? loopir::gt(q, at) : loopir::ge(q, at))
                              : (a.exclusive ? loopir::lt(q, at) : loopir::le(q, at));
    return te::sum(te::if_then_else(included, te::at(x, src), num(x->dtype, 0)), {r});
  })};
}

Stages one_hot(BuildContext& c) {
  const te::Tensor &indices = c.input(0), &values = c.input(2);
  const int64_t rank = static_cast<int64_t>(c.shape().size());
  const int64_t axis = axis_of(c, c.attrs<ops::OneHotAttrs>().axis, rank);
  const int64_t depth = c.shape()[axis];
  return {te::compute(c.stage(), c.shape(), [&](Index p) {
    std::vector<Expr> src;
    for (int64_t k = 0; k < rank; ++k)
      if (k != axis) src.push_back(p[k]);
    Expr i = convert(DataType::kInt64, te::at(indices, src));
    i = te::if_then_else(loopir::lt(i, make_int(0)), i + depth, i);
    return te::if_then_else(loopir::eq(i, convert(DataType::kInt64, p[axis])), te::at(values, {make_int(1)}),
                            te::at(values, {make_int(0)}));
  })};
}

Stages eye_like(BuildContext& c) {
  const int64_t k = c.attrs<ops::EyeLikeAttrs>().k;
  const DataType t = c.dtype();
  return {te::compute(c.stage(), c.shape(), [&](Index p) {
    Expr d = convert(DataType::kInt64, p[1]) - convert(DataType::kInt64, p[0]);
    return te::if_then_else(loopir::eq(d, make_int(k)), num(t, 1), num(t, 0));
  })};
}

Stages gather_nd(BuildContext& c) {
  const int64_t b = c.attrs<ops::GatherNDAttrs>().batch_dims;
  const te::Tensor &data = c.input(0), &indices = c.input(1);
  const Shape &D = data->shape, &I = indices->shape;
  const int64_t q = static_cast<int64_t>(I.size()), last = I.back();
  return {te::compute(c.stage(), c.shape(), [&](Index p) {
    std::vector<Expr> src(p.begin(), p.begin() + b);  // the batch axes
    std::vector<Expr> tuple(p.begin(), p.begin() + (q - 1));
    tuple.push_back(nullptr);
    for (int64_t m = 0; m < last; ++m) {
      tuple.back() = make_int(m);
      Expr raw = convert(DataType::kInt64, te::at(indices, tuple));
      src.push_back(checked_index(c, 1, raw, D[b + m], b + m));
    }
    src.insert(src.end(), p.begin() + (q - 1), p.end());  // the slice axes
    return te::at(data, src);
  })};
}

// Every output element searches all coordinate tuples for those that address it.
Stages scatter_nd(BuildContext& c) {
  const std::string& reduction = c.attrs<ops::ScatterNDAttrs>().reduction;
  const te::Tensor &data = c.input(0), &indices = c.input(1), &updates = c.input(2);
  const Shape &D = data->shape, &I = indices->shape;
  const Shape lead(I.begin(), I.end() - 1);  // one tuple per position of these axes
  const int64_t last = I.back();
  for (int64_t e : lead)
    if (e == 0) c.unsupported("empty indices");
  const DataType t = c.dtype();
  if (reduction != "none") require_arithmetic(c, t);

  // Whether the tuple at reduction position r addresses output position p, and where its update is.
  auto matches = [&](Index p, const std::vector<IterVar>& r) {
    Expr all;
    std::vector<Expr> at;
    for (const IterVar& v : r) at.push_back(v.var);
    at.push_back(nullptr);
    for (int64_t m = 0; m < last; ++m) {
      at.back() = make_int(m);
      Expr v = checked_index(c, 1, convert(DataType::kInt64, te::at(indices, at)), D[m], m);
      Expr eq = loopir::eq(v, convert(DataType::kInt64, p[m]));
      all = all ? loopir::logical_and(all, eq) : eq;
    }
    return all;
  };
  auto update_at = [&](Index p, std::vector<Expr> lead_index) {
    lead_index.insert(lead_index.end(), p.begin() + last, p.end());
    return te::at(updates, lead_index);
  };

  if (reduction == "none") {
    std::vector<IterVar> r = reduce_axes(lead, "q");
    te::Tensor winner = te::compute(c.stage("last"), D, [&](Index p) {
      return te::max_reduce(te::if_then_else(matches(p, r), flat_of(r, lead), make_int(-1)), r);
    });
    return {te::compute(c.stage(), D, [&](Index p) {
      Expr w = te::at(winner, p);
      Expr flat = loopir::max(w, make_int(0));
      std::vector<Expr> lead_index(lead.size());
      for (size_t k = lead.size(); k-- > 0;) {
        lead_index[k] = flat % lead[k];
        flat = flat / lead[k];
      }
      return te::if_then_else(loopir::ge(w, make_int(0)), update_at(p, lead_index), te::at(data, p));
    })};
  }
  if (reduction != "add" && reduction != "mul") c.unsupported("reduction " + reduction);
  const bool add = reduction == "add";
  std::vector<IterVar> r = reduce_axes(lead, "q");
  te::Reducer product = te::make_reducer(
      "prod", t, [](Expr a, Expr b) { return a * b; }, num(t, 1));
  te::Tensor combined = te::compute(c.stage("updates"), D, [&](Index p) {
    std::vector<Expr> lead_index;
    for (const IterVar& v : r) lead_index.push_back(v.var);
    Expr u = te::if_then_else(matches(p, r), update_at(p, lead_index), num(t, add ? 0 : 1));
    return add ? te::sum(u, r) : te::reduce(product, u, r);
  });
  return {te::compute(c.stage(), D, [&](Index p) {
    return add ? te::at(data, p) + te::at(combined, p) : te::at(data, p) * te::at(combined, p);
  })};
}

// Ranks by counting: O(n^2) per row along the axis, no sort. Ties keep the lower index first.
Stages top_k(BuildContext& c) {
  const auto& a = c.attrs<ops::TopKAttrs>();
  const te::Tensor& x = c.input(0);
  require_arithmetic(c, x->dtype);
  const Shape& X = x->shape;
  const int64_t axis = axis_of(c, a.axis, static_cast<int64_t>(X.size()));
  IterVar r = te::reduce_axis(X[axis], "r");
  te::Tensor rank = te::compute(c.stage("rank"), X, [&](Index p) {
    std::vector<Expr> other = p;
    other[axis] = r.var;
    Expr mine = te::at(x, p), theirs = te::at(x, other);
    Expr before = a.largest ? loopir::gt(theirs, mine) : loopir::lt(theirs, mine);
    Expr tie =
        loopir::logical_and(loopir::eq(theirs, mine), loopir::lt(Expr(r.var), convert(DataType::kInt64, p[axis])));
    return te::sum(te::if_then_else(loopir::logical_or(before, tie), make_int(1), make_int(0)), {r});
  });
  auto pick = [&](const std::string& name, DataType t, const std::function<Expr(const std::vector<Expr>&)>& value) {
    IterVar s = te::reduce_axis(X[axis], "s");
    return te::compute(name, c.shape(0), [&](Index o) {
      std::vector<Expr> src = o;
      src[axis] = s.var;
      Expr hit = loopir::eq(te::at(rank, src), convert(DataType::kInt64, o[axis]));
      return te::sum(te::if_then_else(hit, value(src), num(t, 0)), {s});
    });
  };
  te::Tensor values = pick(c.stage(), x->dtype, [&](Index src) { return te::at(x, src); });
  te::Tensor indices =
      pick(c.stage("indices"), DataType::kInt64, [&](Index src) { return convert(DataType::kInt64, src[axis]); });
  return {values, indices};
}

// The condition is known when the graph is built: output position r along the axis (or of the
// flattened input) reads the r-th kept position, chosen by a chain of selects.
Stages compress(BuildContext& c) {
  const auto& a = c.attrs<ops::CompressAttrs>();
  const te::Tensor& x = c.input(0);
  const Shape& X = x->shape;
  const bool flat = a.axis == INT64_MIN;
  const int64_t axis = flat ? 0 : axis_of(c, a.axis, static_cast<int64_t>(X.size()));
  const int64_t extent = flat ? shape_numel(X) : X[axis];
  const Tensor& cond = c.known(1, "condition");
  std::vector<int64_t> keep;
  for (int64_t e = 0; e < std::min(cond.numel(), extent); ++e)
    if (cond.get_double(e) != 0) keep.push_back(e);
  if (keep.size() > 256) c.unsupported("more than 256 kept positions");
  return {te::compute(c.stage(), c.shape(), [&](Index p) {
    Expr at = convert(DataType::kInt64, p[axis]);
    Expr source = make_int(keep.empty() ? 0 : keep.back());
    for (size_t k = keep.size(); k-- > 1;)
      source = te::if_then_else(loopir::eq(at, make_int(static_cast<int64_t>(k - 1))), make_int(keep[k - 1]), source);
    if (!flat) {
      std::vector<Expr> src = p;
      src[axis] = source;
      return te::at(x, src);
    }
    std::vector<Expr> src(X.size());  // the flat position, unravelled over the input's shape
    for (size_t k = X.size(); k-- > 0;) {
      src[k] = source % X[k];
      source = source / X[k];
    }
    return te::at(x, src);
  })};
}

// Step t of sequence b reads step len - 1 - t while t < len (len read, and checked, as the kernel runs).
Stages reverse_sequence(BuildContext& c) {
  const auto& a = c.attrs<ops::ReverseSequenceAttrs>();
  const te::Tensor &x = c.input(0), &lens = c.input(1);
  return {te::compute(c.stage(), c.shape(), [&](Index p) {
    Expr len = convert(DataType::kInt64, te::at(lens, {p[a.batch_axis]}));
    Expr t = convert(DataType::kInt64, p[a.time_axis]);
    const int64_t steps = x->shape[a.time_axis];
    len = loopir::make_check(
        loopir::logical_and(loopir::ge(len, make_int(1)), loopir::le(len, make_int(steps))), len, len,
        "node '" + (c.node.name.empty() ? c.stage() : c.node.name) +
            "' (ReverseSequence): sequence length {} out of range [1, " + std::to_string(steps) + "]");
    Expr last = len - 1;
    std::vector<Expr> src = p;
    src[a.time_axis] = te::if_then_else(loopir::le(t, last), last - t, t);
    return te::at(x, src);
  })};
}

}  // namespace tessel::ops::te_builder
