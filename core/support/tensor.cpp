#include "core/support/tensor.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <unordered_set>
#include <type_traits>

#include "core/support/error.h"

namespace tessel {

namespace {
std::atomic<int64_t> allocation_limit{kMaxTensorBytes};
}  // namespace

int64_t tensor_allocation_limit() { return allocation_limit.load(std::memory_order_relaxed); }
void set_tensor_allocation_limit(int64_t bytes) {
  allocation_limit.store(std::clamp<int64_t>(bytes, 0, kMaxTensorBytes), std::memory_order_relaxed);
}

void Tensor::check_allocation(DataType dtype, const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error("negative dimension in shape " + shape_str(shape));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      throw Error("tensor of shape " + shape_str(shape) + " is too large");
    n *= d;
  }
  const int64_t limit = tensor_allocation_limit();
  const int64_t element = static_cast<int64_t>(dtype_size(dtype));
  // The size in MiB is computed without multiplying first: n * element may not fit int64.
  if (n > limit / element)
    throw Error("refusing to allocate a " + std::string(dtype_name(dtype)) + shape_str(shape) + " tensor (" +
                std::to_string(n / (int64_t{1} << 20) * element) + " MiB exceeds the " +
                (limit == kMaxTensorBytes ? std::string("8 GiB") : std::to_string(limit >> 20) + " MiB") + " limit)");
}

Tensor::Tensor(DataType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  check_allocation(dtype_, shape_);
  size_t bytes = std::max<size_t>(static_cast<size_t>(shape_numel(shape_)) * dtype_size(dtype), 1);
  // 64-byte aligned, like device data space: generated kernels use aligned vector loads on it.
  auto* data = static_cast<std::byte*>(::operator new[](bytes, std::align_val_t{kTensorAlignment}));
  std::memset(data, 0, bytes);
  storage_ = std::shared_ptr<std::byte[]>(data, [](std::byte* p) { ::operator delete[](p, std::align_val_t{kTensorAlignment}); });
}

Tensor Tensor::view(DataType dtype, Shape shape, std::byte* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.storage_ = std::shared_ptr<std::byte[]>(data, [](std::byte*) {});
  return t;
}

void Tensor::check_type(DataType expected) const {
  if (expected != dtype_)
    throw Error("tensor has type " + std::string(dtype_name(dtype_)) + ", accessed as " +
                std::string(dtype_name(expected)));
}

double Tensor::get_double(int64_t i) const {
  return dispatch_dtype(dtype_, [&]<class T>() { return to_double(reinterpret_cast<const T*>(raw_data())[i]); });
}

void Tensor::set_double(int64_t i, double v) {
  dispatch_dtype(dtype_, [&]<class T>() { reinterpret_cast<T*>(raw_data())[i] = from_double<T>(v); });
}

std::vector<int64_t> Tensor::to_int64s() const {
  if (!dtype_is_integer(dtype_))
    throw Error("expected an integer tensor, got " + std::string(dtype_name(dtype_)));
  std::vector<int64_t> out(static_cast<size_t>(numel()));
  // Integer to integer, never through double: a double of an int64 near 2^63 does not convert back.
  dispatch_dtype(dtype_, [&]<class T>() {
    if constexpr (std::is_integral_v<T>) {
      const T* data = reinterpret_cast<const T*>(raw_data());
      for (int64_t i = 0; i < numel(); ++i) out[static_cast<size_t>(i)] = static_cast<int64_t>(data[i]);
    }
  });
  return out;
}

const std::string* intern_string(std::string_view s) {
  static std::mutex mutex;
  static std::unordered_set<std::string> pool;  // node-based: an element never moves
  std::lock_guard lock(mutex);
  return &*pool.emplace(s).first;
}

Tensor Tensor::from_strings(Shape shape, const std::vector<std::string>& values) {
  Tensor t(DataType::kString, std::move(shape));
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw Error(std::to_string(values.size()) + " strings for a tensor of shape " + shape_str(t.shape()));
  for (size_t i = 0; i < values.size(); ++i) t.set_string(static_cast<int64_t>(i), values[i]);
  return t;
}

std::string_view Tensor::string_at(int64_t i) const {
  check_type(DataType::kString);
  const std::string* s = reinterpret_cast<const std::string* const*>(raw_data())[i];
  return s ? std::string_view(*s) : std::string_view();
}

void Tensor::set_string(int64_t i, std::string_view value) {
  check_type(DataType::kString);
  reinterpret_cast<const std::string**>(raw_data())[i] = value.empty() ? nullptr : intern_string(value);
}

std::vector<std::string> Tensor::strings() const {
  std::vector<std::string> out;
  for (int64_t i = 0; i < numel(); ++i) out.emplace_back(string_at(i));
  return out;
}

Tensor Tensor::clone() const {
  Tensor t(dtype_, shape_);
  std::memcpy(t.raw_data(), raw_data(), nbytes());
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  if (shape_numel(shape) != numel())
    throw Error("cannot reshape " + shape_str(shape_) + " to " + shape_str(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::cast(DataType to) const {
  Tensor out(to, shape_);
  int64_t n = numel();
  dispatch_dtype(dtype_, [&]<class S>() {
    const S* src = reinterpret_cast<const S*>(raw_data());
    dispatch_dtype(to, [&]<class D>() {
      D* dst = reinterpret_cast<D*>(out.raw_data());
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<S, D>) {
          dst[i] = src[i];
        } else if constexpr (std::is_integral_v<D> && !std::is_same_v<D, bool> && std::is_integral_v<S>) {
          dst[i] = static_cast<D>(src[i]);  // integer → integer keeps exact 64-bit values
        } else {
          double v = to_double(src[i]);
          if constexpr (std::is_integral_v<D> && !std::is_same_v<D, bool>) {
            if (std::isnan(v)) v = 0;
            v = std::trunc(v);
          }
          dst[i] = from_double<D>(v);
        }
      }
    });
  });
  return out;
}

std::string Tensor::summary() const {
  std::string s = std::string(dtype_name(dtype_)) + shape_str(shape_) + " {";
  int64_t n = std::min<int64_t>(numel(), 6);
  if (dtype_ == DataType::kString) {
    for (int64_t i = 0; i < n; ++i) s += (i ? ", \"" : "\"") + std::string(string_at(i)) + "\"";
    return s + (numel() > n ? ", ...}" : "}");
  }
  for (int64_t i = 0; i < n; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%g", i ? ", " : "", get_double(i));
    s += buf;
  }
  return s + (numel() > n ? ", ...}" : "}");
}

}  // namespace tessel
