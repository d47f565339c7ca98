// Inference and reference kernels of the positional ops (index_ops.h).
#include "core/graph/ops/index_ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <numeric>

#include "core/graph/ops/elementwise_support.h"

namespace tessel::ops {

namespace {

int64_t axis_in(int64_t axis, int64_t rank, const char* op) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw Error(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for rank " +
                std::to_string(rank));
  return a;
}

void require_int_indices(const char* op, const char* what, DataType t) {
  if (t != DataType::kInt64 && t != DataType::kInt32)
    throw Error(std::string(op) + ": " + what + " has dtype " + std::string(dtype_name(t)) + "; allowed: i32, i64");
}

// A scalar (or one-element) input's value as an integer.
int64_t scalar_int(const Tensor& t, const char* op, const char* what) {
  if (t.numel() != 1)
    throw Error(std::string(op) + ": " + what + " must hold one value, not " + std::to_string(t.numel()));
  return t.to_int64s()[0];
}

// Copies element `from` of src to element `to` of dst (same dtype), as bytes.
void copy_element(const Tensor& src, int64_t from, Tensor& dst, int64_t to) {
  const size_t n = dtype_size(src.dtype());
  std::memcpy(dst.raw_data() + to * static_cast<int64_t>(n), src.raw_data() + from * static_cast<int64_t>(n), n);
}

// Splits a shape at `axis` into (outer, extent, inner) element counts.
struct AxisSplit {
  int64_t outer = 1, extent = 1, inner = 1;
};
AxisSplit split_at(const Shape& s, int64_t axis) {
  AxisSplit r;
  for (int64_t k = 0; k < static_cast<int64_t>(s.size()); ++k) {
    if (k < axis)
      r.outer *= s[k];
    else if (k == axis)
      r.extent = s[k];
    else
      r.inner *= s[k];
  }
  return r;
}

}  // namespace

// ---------------------------------------------------------------- Trilu

void TriluOp::infer(const Attrs&, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (x.shape.size() < 2) throw Error("Trilu: the input needs rank >= 2, it has " + shape_str(x.shape));
  if (ctx.has_input(1)) {
    require_int_indices("Trilu", "k", ctx.input(1).dtype);
    if (shape_numel(ctx.input(1).shape) != 1)
      throw Error("Trilu: k must be a scalar, it has shape " + shape_str(ctx.input(1).shape));
  }
  infer_like_input(ctx);
}

void TriluOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  Tensor& y = args.out(0);
  const int64_t k = args.has(1) ? scalar_int(args.in(1), "Trilu", "k") : 0;
  const int64_t rows = x.shape()[x.rank() - 2], cols = x.shape()[x.rank() - 1];
  for (int64_t e = 0; e < x.numel(); ++e) {
    const int64_t j = e % cols, i = (e / cols) % rows;
    const bool keep = a.upper ? j - i >= k : j - i <= k;
    if (keep) copy_element(x, e, y, e);  // the rest stays zero
  }
}

// ---------------------------------------------------------------- CumSum

void CumSumOp::infer(const Attrs&, InferContext& ctx) {
  require_dtype("CumSum", "input 0", ctx.input(0).dtype, kFloatTypes | kIntTypes);
  require_int_indices("CumSum", "axis", ctx.input(1).dtype);
  axis_in(scalar_int(ctx.require_value(1, "axis"), "CumSum", "axis"), static_cast<int64_t>(ctx.input(0).shape.size()),
          "CumSum");
  infer_like_input(ctx);
}

void CumSumOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  Tensor& y = args.out(0);
  const int64_t axis = axis_in(scalar_int(args.in(1), "CumSum", "axis"), x.rank(), "CumSum");
  const AxisSplit s = split_at(x.shape(), axis);
  dispatch_dtype(x.dtype(), [&]<class T>() {
    const T* px = x.data<T>();
    T* py = y.data<T>();
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t in = 0; in < s.inner; ++in) {
        Compute<T> acc{};
        for (int64_t step = 0; step < s.extent; ++step) {
          const int64_t p = a.reverse ? s.extent - 1 - step : step;
          const int64_t e = (o * s.extent + p) * s.inner + in;
          if (a.exclusive) {
            py[e] = store<T>(acc);
            acc = acc + load(px[e]);
          } else {
            acc = acc + load(px[e]);
            py[e] = store<T>(acc);
          }
        }
      }
  });
}

// ---------------------------------------------------------------- OneHot

void OneHotOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& indices = ctx.input(0);
  require_dtype("OneHot", "indices", indices.dtype, kNumericTypes);
  const int64_t depth = float_to_int64(ctx.require_value(1, "depth").get_double(0));
  if (shape_numel(ctx.input(1).shape) != 1) throw Error("OneHot: depth must hold one value");
  if (depth < 1) throw Error("OneHot: depth " + std::to_string(depth) + " must be at least 1");
  if (shape_numel(ctx.input(2).shape) != 2)
    throw Error("OneHot: values must hold two elements [off, on], it has shape " + shape_str(ctx.input(2).shape));
  const int64_t rank = static_cast<int64_t>(indices.shape.size()) + 1;
  const int64_t axis = axis_in(a.axis, rank, "OneHot");
  Shape out = indices.shape;
  out.insert(out.begin() + axis, depth);
  ctx.set_output(0, ctx.input(2).dtype, out);
}

void OneHotOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& indices = args.in(0);
  const Tensor& values = args.in(2);
  Tensor& y = args.out(0);
  const int64_t depth = float_to_int64(args.in(1).get_double(0));
  const int64_t axis = axis_in(a.axis, y.rank(), "OneHot");
  const AxisSplit s = split_at(y.shape(), axis);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t d = 0; d < depth; ++d)
      for (int64_t in = 0; in < s.inner; ++in) {
        int64_t index = float_to_int64(indices.get_double(o * s.inner + in));
        if (index < 0) index += depth;
        copy_element(values, index == d ? 1 : 0, y, (o * depth + d) * s.inner + in);
      }
}

// ---------------------------------------------------------------- EyeLike

void EyeLikeOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (x.shape.size() != 2) throw Error("EyeLike: the input must be 2-D, it has shape " + shape_str(x.shape));
  ctx.set_output(0, a.dtype == 0 ? x.dtype : dtype_from_onnx(a.dtype), x.shape);
}

void EyeLikeOp::reference(const Attrs& a, const KernelArgs& args) {
  Tensor& y = args.out(0);
  const int64_t rows = y.shape()[0], cols = y.shape()[1];
  for (int64_t i = 0; i < rows; ++i)
    if (i + a.k >= 0 && i + a.k < cols) y.set_double(i * cols + i + a.k, 1.0);
}

// ---------------------------------------------------------------- GatherND

void GatherNDOp::infer(const Attrs& a, InferContext& ctx) {
  const Shape& data = ctx.input(0).shape;
  const Shape& idx = ctx.input(1).shape;
  require_int_indices("GatherND", "indices", ctx.input(1).dtype);
  const int64_t b = a.batch_dims, r = static_cast<int64_t>(data.size()), q = static_cast<int64_t>(idx.size());
  if (q < 1 || r < 1) throw Error("GatherND: data and indices need rank >= 1");
  if (b >= std::min(q, r)) throw Error("GatherND: batch_dims " + std::to_string(b) + " must be less than both ranks");
  for (int64_t k = 0; k < b; ++k)
    if (data[k] != idx[k])
      throw Error("GatherND: batch axis " + std::to_string(k) + " differs: data " + shape_str(data) + ", indices " +
                  shape_str(idx));
  const int64_t last = idx.back();
  if (last < 1 || last > r - b)
    throw Error("GatherND: the last axis of indices (" + std::to_string(last) + ") must lie in [1, " +
                std::to_string(r - b) + "]");
  Shape out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), data.begin() + b + last, data.end());
  ctx.set_output(0, ctx.input(0).dtype, out);
}

namespace {

// Shared by GatherND and ScatterND: for every coordinate tuple n (indices viewed as [N, last]),
// the flat offset of the slice it addresses in data, batch axes included. Throws on an index out
// of range.
std::vector<int64_t> slice_offsets(const char* op, const Shape& data, const Tensor& indices, int64_t batch_dims,
                                   int64_t* slice_size) {
  const Shape& is = indices.shape();
  const int64_t last = is.back();
  const std::vector<int64_t> idx = indices.to_int64s();
  const Shape strides = contiguous_strides(data);
  *slice_size = 1;
  for (size_t k = static_cast<size_t>(batch_dims + last); k < data.size(); ++k) *slice_size *= data[k];
  int64_t per_batch = 1;  // tuples in one batch
  for (size_t k = static_cast<size_t>(batch_dims); k + 1 < is.size(); ++k) per_batch *= is[k];
  const int64_t tuples = static_cast<int64_t>(idx.size()) / last;
  std::vector<int64_t> out(static_cast<size_t>(tuples));
  for (int64_t n = 0; n < tuples; ++n) {
    int64_t batch = n / per_batch, offset = 0;
    for (int64_t k = batch_dims; k-- > 0;) {  // the batch coordinates, last axis first
      offset += (batch % data[k]) * strides[k];
      batch /= data[k];
    }
    for (int64_t m = 0; m < last; ++m) {
      const int64_t extent = data[batch_dims + m];
      int64_t v = idx[n * last + m];
      if (v < -extent || v >= extent)
        throw Error(std::string(op) + ": index " + std::to_string(v) + " out of range [" + std::to_string(-extent) +
                    ", " + std::to_string(extent) + ") on axis " + std::to_string(batch_dims + m));
      if (v < 0) v += extent;
      offset += v * strides[batch_dims + m];
    }
    out[n] = offset;
  }
  return out;
}

}  // namespace

void GatherNDOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& data = args.in(0);
  Tensor& y = args.out(0);
  int64_t slice = 0;
  const std::vector<int64_t> offsets = slice_offsets("GatherND", data.shape(), args.in(1), a.batch_dims, &slice);
  for (size_t n = 0; n < offsets.size(); ++n)
    for (int64_t e = 0; e < slice; ++e) copy_element(data, offsets[n] + e, y, static_cast<int64_t>(n) * slice + e);
}

// ---------------------------------------------------------------- ScatterND

void ScatterNDOp::infer(const Attrs&, InferContext& ctx) {
  const Shape& data = ctx.input(0).shape;
  const Shape& idx = ctx.input(1).shape;
  const Shape& upd = ctx.input(2).shape;
  require_int_indices("ScatterND", "indices", ctx.input(1).dtype);
  if (ctx.input(2).dtype != ctx.input(0).dtype)
    throw Error("ScatterND: updates have dtype " + std::string(dtype_name(ctx.input(2).dtype)) + ", the data has " +
                std::string(dtype_name(ctx.input(0).dtype)));
  if (idx.empty() || data.empty()) throw Error("ScatterND: data and indices need rank >= 1");
  const int64_t last = idx.back();
  if (last < 1 || last > static_cast<int64_t>(data.size()))
    throw Error("ScatterND: the last axis of indices (" + std::to_string(last) + ") must lie in [1, " +
                std::to_string(data.size()) + "]");
  Shape expected(idx.begin(), idx.end() - 1);
  expected.insert(expected.end(), data.begin() + last, data.end());
  if (upd != expected)
    throw Error("ScatterND: updates have shape " + shape_str(upd) + ", expected " + shape_str(expected));
  infer_like_input(ctx);
}

void ScatterNDOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& data = args.in(0);
  const Tensor& updates = args.in(2);
  Tensor& y = args.out(0);
  std::memcpy(y.raw_data(), data.raw_data(), data.nbytes());
  int64_t slice = 0;
  const std::vector<int64_t> offsets = slice_offsets("ScatterND", data.shape(), args.in(1), 0, &slice);
  for (size_t n = 0; n < offsets.size(); ++n)
    for (int64_t e = 0; e < slice; ++e) {
      const int64_t to = offsets[n] + e, from = static_cast<int64_t>(n) * slice + e;
      if (a.reduction == "none")
        copy_element(updates, from, y, to);
      else if (data.dtype() == DataType::kBool)
        y.set_double(to, a.reduction == "add" ? (y.get_double(to) != 0 || updates.get_double(from) != 0)
                                              : (y.get_double(to) != 0 && updates.get_double(from) != 0));
      else
        dispatch_dtype(data.dtype(), [&]<class T>() {
          T* py = y.data<T>();
          const Compute<T> u = load(updates.data<T>()[from]), v = load(py[to]);
          if constexpr (std::is_same_v<Compute<T>, int64_t>)
            py[to] = store<T>(a.reduction == "add" ? wrap_add(v, u) : wrap_mul(v, u));
          else
            py[to] = store<T>(a.reduction == "add" ? v + u : v * u);
        });
    }
}

int64_t ScatterNDOp::flops(const Attrs& a, const OpTypes& t) {
  return a.reduction == "none" || !t.inputs[2] ? 0 : shape_numel(t.inputs[2]->shape);
}

// ---------------------------------------------------------------- TopK

void TopKOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  require_dtype("TopK", "input 0", x.dtype, kNumericTypes);
  require_int_indices("TopK", "k", ctx.input(1).dtype);
  const int64_t k = scalar_int(ctx.require_value(1, "k"), "TopK", "k");
  const int64_t axis = axis_in(a.axis, static_cast<int64_t>(x.shape.size()), "TopK");
  if (k < 0 || k > x.shape[axis])
    throw Error("TopK: k " + std::to_string(k) + " is out of range [0, " + std::to_string(x.shape[axis]) +
                "] on axis " + std::to_string(axis));
  Shape out = x.shape;
  out[axis] = k;
  ctx.set_output(0, x.dtype, out);
  ctx.set_output(1, DataType::kInt64, out);
}

void TopKOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  Tensor& values = args.out(0);
  Tensor& indices = args.out(1);
  const int64_t axis = axis_in(a.axis, x.rank(), "TopK");
  const int64_t k = values.shape()[axis];
  const AxisSplit s = split_at(x.shape(), axis);
  std::vector<int64_t> order(static_cast<size_t>(s.extent));
  int64_t* pi = indices.data<int64_t>();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t in = 0; in < s.inner; ++in) {
      auto at = [&](int64_t p) { return (o * s.extent + p) * s.inner + in; };
      std::iota(order.begin(), order.end(), 0);
      // NaN ranks above every number (largest) or below (smallest), as numpy's sort places it.
      std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
        const double u = x.get_double(at(p)), v = x.get_double(at(q));
        if (std::isnan(u) || std::isnan(v))
          return a.largest ? std::isnan(u) && !std::isnan(v) : !std::isnan(u) && std::isnan(v);
        return a.largest ? u > v : u < v;
      });
      for (int64_t r = 0; r < k; ++r) {
        const int64_t to = (o * k + r) * s.inner + in;
        copy_element(x, at(order[r]), values, to);
        pi[to] = order[r];
      }
    }
}

int64_t TopKOp::flops(const Attrs&, const OpTypes& t) {
  // About n log n comparisons per row.
  const int64_t n = t.inputs[0] ? shape_numel(t.inputs[0]->shape) : 0;
  int64_t log = 1;
  while ((int64_t{1} << log) < std::max<int64_t>(n, 2)) ++log;
  return n * log;
}

// ---------------------------------------------------------------- NonZero

namespace {
std::vector<int64_t> nonzero_positions(const Tensor& x) {
  std::vector<int64_t> out;
  for (int64_t e = 0; e < x.numel(); ++e)
    if (x.get_double(e) != 0) out.push_back(e);
  return out;
}
}  // namespace

void NonZeroOp::infer(const Attrs&, InferContext& ctx) {
  const Tensor& x = ctx.require_value(0, "the input (NonZero's output shape depends on its values)");
  const int64_t rank = std::max<int64_t>(x.rank(), 1);
  ctx.set_output(0, DataType::kInt64, {rank, static_cast<int64_t>(nonzero_positions(x).size())});
}

void NonZeroOp::reference(const Attrs&, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  Tensor& y = args.out(0);
  const std::vector<int64_t> pos = nonzero_positions(x);
  const int64_t n = static_cast<int64_t>(pos.size());
  int64_t* py = y.data<int64_t>();
  const Shape strides = contiguous_strides(x.shape());
  for (int64_t c = 0; c < n; ++c)
    for (int64_t d = 0; d < x.rank(); ++d) py[d * n + c] = (pos[c] / strides[d]) % x.shape()[d];
}

// ---------------------------------------------------------------- Compress

namespace {
std::vector<int64_t> kept(const Tensor& condition, int64_t extent) {
  std::vector<int64_t> out;
  for (int64_t e = 0; e < std::min(condition.numel(), extent); ++e)
    if (condition.get_double(e) != 0) out.push_back(e);
  return out;
}
}  // namespace

void CompressOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (ctx.input(1).dtype != DataType::kBool)
    throw Error("Compress: condition has dtype " + std::string(dtype_name(ctx.input(1).dtype)) + "; allowed: bool");
  if (ctx.input(1).shape.size() != 1)
    throw Error("Compress: condition must be 1-D, it has " + shape_str(ctx.input(1).shape));
  const Tensor& cond = ctx.require_value(1, "condition (Compress's output shape depends on it)");
  if (a.axis == INT64_MIN) {
    const int64_t n = shape_numel(x.shape);
    ctx.set_output(0, x.dtype, {static_cast<int64_t>(kept(cond, n).size())});
    return;
  }
  const int64_t axis = axis_in(a.axis, static_cast<int64_t>(x.shape.size()), "Compress");
  Shape out = x.shape;
  out[axis] = static_cast<int64_t>(kept(cond, x.shape[axis]).size());
  ctx.set_output(0, x.dtype, out);
}

void CompressOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  Tensor& y = args.out(0);
  const bool flat = a.axis == INT64_MIN;
  const int64_t axis = flat ? 0 : axis_in(a.axis, x.rank(), "Compress");
  const AxisSplit s = flat ? AxisSplit{1, x.numel(), 1} : split_at(x.shape(), axis);
  const std::vector<int64_t> keep = kept(args.in(1), s.extent);
  const int64_t n = static_cast<int64_t>(keep.size());
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t r = 0; r < n; ++r)
      for (int64_t in = 0; in < s.inner; ++in)
        copy_element(x, (o * s.extent + keep[r]) * s.inner + in, y, (o * n + r) * s.inner + in);
}

// ---------------------------------------------------------------- Unique

namespace {

struct UniqueResult {
  std::vector<int64_t> first;    // per unique slice: where it first occurs
  std::vector<int64_t> inverse;  // per input slice: its unique slice
  std::vector<int64_t> counts;   // per unique slice
};

// Slices along `axis` (or elements, when flat) compared by value, lexicographically.
UniqueResult find_unique(const Tensor& x, int64_t axis, bool flat, bool sorted) {
  const Shape& s = x.shape();
  const AxisSplit split = flat ? AxisSplit{1, x.numel(), 1} : split_at(s, axis);
  auto slice = [&](int64_t p) {
    std::vector<double> v;
    for (int64_t o = 0; o < split.outer; ++o)
      for (int64_t in = 0; in < split.inner; ++in) v.push_back(x.get_double((o * split.extent + p) * split.inner + in));
    return v;
  };
  std::vector<std::vector<double>> slices;
  for (int64_t p = 0; p < split.extent; ++p) slices.push_back(slice(p));
  UniqueResult r;
  std::vector<int64_t> slot(static_cast<size_t>(split.extent));
  for (int64_t p = 0; p < split.extent; ++p) {
    int64_t found = -1;
    for (size_t u = 0; u < r.first.size() && found < 0; ++u)
      if (slices[static_cast<size_t>(r.first[u])] == slices[static_cast<size_t>(p)]) found = static_cast<int64_t>(u);
    if (found < 0) {
      found = static_cast<int64_t>(r.first.size());
      r.first.push_back(p);
      r.counts.push_back(0);
    }
    ++r.counts[static_cast<size_t>(found)];
    slot[static_cast<size_t>(p)] = found;
  }
  if (sorted) {
    std::vector<int64_t> order(r.first.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return slices[static_cast<size_t>(r.first[static_cast<size_t>(a)])] <
             slices[static_cast<size_t>(r.first[static_cast<size_t>(b)])];
    });
    std::vector<int64_t> rank(order.size()), first, counts;
    for (size_t k = 0; k < order.size(); ++k) {
      rank[static_cast<size_t>(order[k])] = static_cast<int64_t>(k);
      first.push_back(r.first[static_cast<size_t>(order[k])]);
      counts.push_back(r.counts[static_cast<size_t>(order[k])]);
    }
    r.first = first;
    r.counts = counts;
    for (int64_t& v : slot) v = rank[static_cast<size_t>(v)];
  }
  r.inverse = slot;
  return r;
}

}  // namespace

void UniqueOp::infer(const Attrs& a, InferContext& ctx) {
  const Tensor& x = ctx.require_value(0, "the input (Unique's output shape depends on its values)");
  const bool flat = a.axis == INT64_MIN;
  const int64_t axis = flat ? 0 : axis_in(a.axis, x.rank(), "Unique");
  const UniqueResult r = find_unique(x, axis, flat, a.sorted != 0);
  const int64_t n = static_cast<int64_t>(r.first.size());
  Shape y = flat ? Shape{n} : x.shape();
  if (!flat) y[axis] = n;
  ctx.set_output(0, x.dtype(), y);
  if (ctx.num_outputs() > 1) ctx.set_output(1, DataType::kInt64, {n});
  if (ctx.num_outputs() > 2) ctx.set_output(2, DataType::kInt64, {static_cast<int64_t>(r.inverse.size())});
  if (ctx.num_outputs() > 3) ctx.set_output(3, DataType::kInt64, {n});
}

void UniqueOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  const bool flat = a.axis == INT64_MIN;
  const int64_t axis = flat ? 0 : axis_in(a.axis, x.rank(), "Unique");
  const UniqueResult r = find_unique(x, axis, flat, a.sorted != 0);
  const AxisSplit s = flat ? AxisSplit{1, x.numel(), 1} : split_at(x.shape(), axis);
  const int64_t n = static_cast<int64_t>(r.first.size());
  Tensor& y = args.out(0);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t u = 0; u < n; ++u)
      for (int64_t in = 0; in < s.inner; ++in)
        copy_element(x, (o * s.extent + r.first[static_cast<size_t>(u)]) * s.inner + in, y, (o * n + u) * s.inner + in);
  const std::vector<int64_t>* extra[] = {&r.first, &r.inverse, &r.counts};
  for (size_t k = 1; k < args.outputs->size() && k < 4; ++k)
    std::copy(extra[k - 1]->begin(), extra[k - 1]->end(), args.out(static_cast<int>(k)).data<int64_t>());
}

// ---------------------------------------------------------------- NonMaxSuppression

namespace {

struct Box {
  double y1, x1, y2, x2;
};

Box box_at(const Tensor& boxes, int64_t offset, bool center) {
  const double a = boxes.get_double(offset), b = boxes.get_double(offset + 1), c = boxes.get_double(offset + 2),
               d = boxes.get_double(offset + 3);
  if (center) return {b - d / 2, a - c / 2, b + d / 2, a + c / 2};
  return {std::min(a, c), std::min(b, d), std::max(a, c), std::max(b, d)};
}

double iou(const Box& p, const Box& q) {
  const double h = std::max(0.0, std::min(p.y2, q.y2) - std::max(p.y1, q.y1));
  const double w = std::max(0.0, std::min(p.x2, q.x2) - std::max(p.x1, q.x1));
  const double inter = h * w;
  const double uni = (p.y2 - p.y1) * (p.x2 - p.x1) + (q.y2 - q.y1) * (q.x2 - q.x1) - inter;
  return uni <= 0 ? 0.0 : inter / uni;
}

// (batch, class, box) of every selected box, in ONNX's order.
std::vector<std::array<int64_t, 3>> suppress(const NonMaxSuppressionAttrs& a, const Tensor& boxes, const Tensor& scores,
                                             const Tensor* max_boxes, const Tensor* iou_threshold,
                                             const Tensor* score_threshold) {
  const int64_t batches = scores.shape()[0], classes = scores.shape()[1], n = scores.shape()[2];
  const int64_t limit = max_boxes && max_boxes->numel() > 0 ? max_boxes->to_int64s()[0] : 0;
  const double overlap = iou_threshold && iou_threshold->numel() > 0 ? iou_threshold->get_double(0) : 0.0;
  const bool has_floor = score_threshold && score_threshold->numel() > 0;
  const double floor = has_floor ? score_threshold->get_double(0) : 0.0;
  std::vector<std::array<int64_t, 3>> out;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      std::vector<int64_t> order;
      for (int64_t i = 0; i < n; ++i)
        if (!has_floor || scores.get_double((b * classes + c) * n + i) > floor) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
        return scores.get_double((b * classes + c) * n + p) > scores.get_double((b * classes + c) * n + q);
      });
      std::vector<Box> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= limit) break;
        const Box candidate = box_at(boxes, (b * n + i) * 4, a.center_point_box != 0);
        bool keep = true;
        for (const Box& k : kept) keep = keep && iou(k, candidate) <= overlap;
        if (!keep) continue;
        kept.push_back(candidate);
        out.push_back({b, c, i});
      }
    }
  return out;
}

const Tensor* optional_value(const InferContext& ctx, int i, const char* what) {
  return ctx.has_input(i) ? &ctx.require_value(i, what) : nullptr;
}

}  // namespace

void NonMaxSuppressionOp::infer(const Attrs& a, InferContext& ctx) {
  const Shape& boxes = ctx.input(0).shape;
  const Shape& scores = ctx.input(1).shape;
  if (boxes.size() != 3 || boxes[2] != 4 || scores.size() != 3 || scores[0] != boxes[0] || scores[2] != boxes[1])
    throw Error("NonMaxSuppression: boxes " + shape_str(boxes) + " and scores " + shape_str(scores) +
                " must be [B, N, 4] and [B, C, N]");
  const auto selected = suppress(a, ctx.require_value(0, "boxes"), ctx.require_value(1, "scores"),
                                 optional_value(ctx, 2, "max_output_boxes_per_class"),
                                 optional_value(ctx, 3, "iou_threshold"), optional_value(ctx, 4, "score_threshold"));
  ctx.set_output(0, DataType::kInt64, {static_cast<int64_t>(selected.size()), 3});
}

void NonMaxSuppressionOp::reference(const Attrs& a, const KernelArgs& args) {
  auto opt = [&](int i) { return args.has(i) ? &args.in(i) : nullptr; };
  const auto selected = suppress(a, args.in(0), args.in(1), opt(2), opt(3), opt(4));
  int64_t* y = args.out(0).data<int64_t>();
  for (size_t k = 0; k < selected.size(); ++k)
    for (size_t j = 0; j < 3; ++j) y[k * 3 + j] = selected[k][j];
}

int64_t NonMaxSuppressionOp::flops(const Attrs&, const OpTypes& t) {
  if (!t.inputs[1]) return 0;
  const Shape& s = t.inputs[1]->shape;
  return shape_numel(s) * (s.size() == 3 ? s[2] : 1) * 10;  // an IoU per pair of boxes, at most
}

// ---------------------------------------------------------------- ReverseSequence

void ReverseSequenceOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (a.batch_axis == a.time_axis)
    throw Error("ReverseSequence: batch_axis and time_axis are both " + std::to_string(a.time_axis));
  if (x.shape.size() < 2) throw Error("ReverseSequence: the input needs rank >= 2, it has " + shape_str(x.shape));
  require_int_indices("ReverseSequence", "sequence_lens", ctx.input(1).dtype);
  if (ctx.input(1).shape != Shape{x.shape[a.batch_axis]})
    throw Error("ReverseSequence: sequence_lens has shape " + shape_str(ctx.input(1).shape) + ", expected [" +
                std::to_string(x.shape[a.batch_axis]) + "]");
  infer_like_input(ctx);
}

void ReverseSequenceOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  Tensor& y = args.out(0);
  const std::vector<int64_t> lens = args.in(1).to_int64s();
  const Shape strides = contiguous_strides(x.shape());
  const int64_t steps = x.shape()[a.time_axis];
  for (int64_t e = 0; e < x.numel(); ++e) {
    const int64_t b = (e / strides[a.batch_axis]) % x.shape()[a.batch_axis];
    const int64_t t = (e / strides[a.time_axis]) % steps;
    const int64_t len = lens[static_cast<size_t>(b)];
    if (len < 1 || len > steps)
      throw Error("ReverseSequence: sequence_lens[" + std::to_string(b) + "] = " + std::to_string(len) +
                  " is out of range [1, " + std::to_string(steps) + "]");
    const int64_t from = t < len ? e + (len - 1 - 2 * t) * strides[a.time_axis] : e;
    copy_element(x, from, y, e);
  }
}

}  // namespace tessel::ops
