#include "core/graph/ops/nn_spatial.h"

#include <algorithm>

namespace tessel::ops::nn {

namespace {

std::string str(const char* op) { return std::string(op); }

}  // namespace

AutoPad parse_auto_pad(const std::string& s) {
  if (s == "SAME_UPPER") return AutoPad::kSameUpper;
  if (s == "SAME_LOWER") return AutoPad::kSameLower;
  if (s == "VALID") return AutoPad::kValid;
  if (s == "NOTSET" || s.empty()) return AutoPad::kNotSet;
  throw Error("auto_pad '" + s + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
}

Shape per_axis(const char* op, const char* field, const std::vector<int64_t>& values, size_t rank, int64_t fill) {
  if (values.empty()) return Shape(rank, fill);
  if (values.size() != rank)
    throw Error(str(op) + ": " + field + " has " + std::to_string(values.size()) + " values; the input has " +
                std::to_string(rank) + " spatial axes");
  return values;
}

void split_pads(const char* op, const std::vector<int64_t>& pads, size_t rank, Shape& begin, Shape& end) {
  begin.assign(rank, 0);
  end.assign(rank, 0);
  if (pads.empty()) return;
  if (pads.size() != 2 * rank)
    throw Error(str(op) + ": pads has " + std::to_string(pads.size()) + " values; expected " +
                std::to_string(2 * rank) + " (begin and end for each of " + std::to_string(rank) + " spatial axes)");
  for (size_t i = 0; i < rank; ++i) {
    begin[i] = pads[i];
    end[i] = pads[rank + i];
  }
}

WindowGeometry resolve_window(const char* op, const Shape& input_spatial, const Shape& kernel, const WindowAttrs& a) {
  const size_t rank = input_spatial.size();
  if (kernel.size() != rank)
    throw Error(str(op) + ": kernel has " + std::to_string(kernel.size()) + " spatial axes; the input has " +
                std::to_string(rank));
  WindowGeometry g;
  g.input = input_spatial;
  g.kernel = kernel;
  g.stride = per_axis(op, "strides", a.strides, rank, 1);
  g.dilation = per_axis(op, "dilations", a.dilations, rank, 1);
  g.output.assign(rank, 0);
  const AutoPad mode = parse_auto_pad(a.auto_pad);
  if (mode != AutoPad::kNotSet && std::any_of(a.pads.begin(), a.pads.end(), [](int64_t p) { return p != 0; }))
    throw Error(str(op) + ": explicit pads cannot be combined with auto_pad=" + a.auto_pad);
  split_pads(op, mode == AutoPad::kNotSet ? a.pads : std::vector<int64_t>{}, rank, g.pad_begin, g.pad_end);

  for (size_t i = 0; i < rank; ++i) {
    const int64_t in = g.input[i], s = g.stride[i], ek = g.effective_kernel(i);
    if (g.kernel[i] < 1)
      throw Error(str(op) + ": kernel size " + std::to_string(g.kernel[i]) + " on spatial axis " + std::to_string(i) +
                  " must be at least 1");
    switch (mode) {
      case AutoPad::kSameUpper:
      case AutoPad::kSameLower: {
        // Output covers ceil(in / s) positions; the padding that takes, if odd, has its extra
        // element at the end (UPPER) or at the start (LOWER).
        g.output[i] = (in + s - 1) / s;
        const int64_t total = std::max<int64_t>(0, (g.output[i] - 1) * s + ek - in);
        g.pad_begin[i] = mode == AutoPad::kSameUpper ? total / 2 : total - total / 2;
        g.pad_end[i] = total - g.pad_begin[i];
        continue;
      }
      case AutoPad::kValid:
      case AutoPad::kNotSet:
        break;
    }
    const int64_t span = in + g.pad_begin[i] + g.pad_end[i] - ek;
    if (span < 0)
      throw Error(str(op) + ": the window (kernel " + std::to_string(g.kernel[i]) + ", dilation " +
                  std::to_string(g.dilation[i]) + ") is larger than the padded input (" +
                  std::to_string(in + g.pad_begin[i] + g.pad_end[i]) + ") on spatial axis " + std::to_string(i));
    int64_t out = (a.ceil_mode ? (span + s - 1) / s : span / s) + 1;
    // Like PyTorch and ONNX opset 19: a last window that would start inside the end padding is dropped.
    if (a.ceil_mode && (out - 1) * s >= in + g.pad_begin[i]) --out;
    g.output[i] = out;
  }
  return g;
}

AxisTaps forward_axis_taps(const WindowGeometry& g, size_t axis) {
  AxisTaps taps(static_cast<size_t>(g.output[axis]));
  for (int64_t o = 0; o < g.output[axis]; ++o)
    for (int64_t j = 0; j < g.kernel[axis]; ++j) {
      const int64_t x = o * g.stride[axis] - g.pad_begin[axis] + j * g.dilation[axis];
      if (x >= 0 && x < g.input[axis]) taps[o].emplace_back(j, x);
    }
  return taps;
}

AxisTaps transposed_axis_taps(const WindowGeometry& g, size_t axis) {
  AxisTaps taps(static_cast<size_t>(g.output[axis]));
  for (int64_t o = 0; o < g.output[axis]; ++o)
    for (int64_t j = 0; j < g.kernel[axis]; ++j) {
      const int64_t t = o + g.pad_begin[axis] - j * g.dilation[axis];  // = x * stride
      if (t < 0 || t % g.stride[axis] != 0) continue;
      const int64_t x = t / g.stride[axis];
      if (x < g.input[axis]) taps[o].emplace_back(j, x);
    }
  return taps;
}

void for_each_window(const Shape& output, const Shape& kernel, const Shape& input, const std::vector<AxisTaps>& axes,
                     const std::function<void(int64_t, const int64_t*, const WindowTaps&)>& fn) {
  const size_t rank = output.size();
  const Shape kernel_strides = contiguous_strides(kernel), input_strides = contiguous_strides(input);
  const int64_t total = shape_numel(output);
  Shape coord(rank, 0);
  std::vector<size_t> pick(rank, 0);
  WindowTaps taps;
  for (int64_t o = 0; o < total; ++o) {
    taps.kernel_index.clear();
    taps.input_offset.clear();
    bool empty = false;
    for (size_t i = 0; i < rank; ++i) empty = empty || axes[i][coord[i]].empty();
    if (!empty) {
      // Cartesian product of this position's per-axis taps, odometer style.
      std::fill(pick.begin(), pick.end(), 0);
      while (true) {
        int64_t k = 0, x = 0;
        for (size_t i = 0; i < rank; ++i) {
          const auto& [j, xi] = axes[i][coord[i]][pick[i]];
          k += j * kernel_strides[i];
          x += xi * input_strides[i];
        }
        taps.kernel_index.push_back(k);
        taps.input_offset.push_back(x);
        size_t d = rank;
        while (d-- > 0) {
          if (++pick[d] < axes[d][coord[d]].size()) break;
          pick[d] = 0;
        }
        if (d == SIZE_MAX) break;
      }
    }
    fn(o, coord.data(), taps);
    for (size_t d = rank; d-- > 0;) {
      if (++coord[d] < output[d]) break;
      coord[d] = 0;
    }
  }
}

void require_dtype(const char* op, const char* what, DataType t, std::initializer_list<DataType> allowed) {
  for (DataType a : allowed)
    if (a == t) return;
  std::string list;
  for (DataType a : allowed) list += (list.empty() ? "" : ", ") + std::string(dtype_name(a));
  throw Error(str(op) + ": " + what + " has dtype " + std::string(dtype_name(t)) + "; allowed: " + list);
}

std::vector<double> to_doubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  dispatch_dtype(t.dtype(), [&]<class T>() {
    const T* p = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = to_double(p[i]);
  });
  return out;
}

void store_doubles(Tensor& t, const std::vector<double>& values) {
  dispatch_dtype(t.dtype(), [&]<class T>() {
    T* p = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = from_double<T>(values[i]);
  });
}

std::vector<int64_t> to_exact_int64s(const Tensor& t) {
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  dispatch_dtype(t.dtype(), [&]<class T>() {
    const T* p = t.data<T>();
    if constexpr (std::is_integral_v<T>) {
      for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int64_t>(p[i]);
    } else {
      for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int64_t>(to_double(p[i]));
    }
  });
  return out;
}

void store_int64s(Tensor& t, const std::vector<int64_t>& values) {
  dispatch_dtype(t.dtype(), [&]<class T>() {
    T* p = t.data<T>();
    if constexpr (std::is_integral_v<T>) {
      for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<T>(values[i]);
    } else {
      for (size_t i = 0; i < values.size(); ++i) p[i] = from_double<T>(static_cast<double>(values[i]));
    }
  });
}

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < std::min(to, s.size()); ++i) p *= s[i];
  return p;
}

std::vector<const TensorType*> TypesContext::pointers(const std::vector<TensorType>& types,
                                                      const std::vector<bool>& present) {
  std::vector<const TensorType*> out;
  for (size_t i = 0; i < types.size(); ++i) out.push_back(present[i] ? &types[i] : nullptr);
  return out;
}

TypesContext::TypesContext(const KernelArgs& args)
    : types_([&] {
        std::vector<TensorType> t;
        for (const Tensor* in : args.inputs) t.push_back(in ? TensorType{in->dtype(), in->shape()} : TensorType{});
        return t;
      }()),
      present_([&] {
        std::vector<bool> p;
        for (const Tensor* in : args.inputs) p.push_back(in != nullptr);
        return p;
      }()),
      ctx_(pointers(types_, present_), std::vector<const Tensor*>(types_.size(), nullptr),
           static_cast<int>(args.outputs ? args.outputs->size() : 1)) {}

TypesContext::TypesContext(const OpTypes& types)
    : types_([&] {
        std::vector<TensorType> t;
        for (const TensorType* in : types.inputs) t.push_back(in ? *in : TensorType{});
        return t;
      }()),
      present_([&] {
        std::vector<bool> p;
        for (const TensorType* in : types.inputs) p.push_back(in != nullptr);
        return p;
      }()),
      ctx_(pointers(types_, present_), std::vector<const Tensor*>(types_.size(), nullptr),
           static_cast<int>(types.outputs.size())) {}

}  // namespace tessel::ops::nn
