#pragma once
// A dense, row-major host tensor. Copies share the buffer (like a handle); `clone` copies data.
// Immutable snapshots hold `Tensor` freely: nothing writes through a shared buffer after it is
// published, by convention of every pass and kernel (outputs are always freshly allocated).
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/dtype.h"
#include "core/support/shape.h"

namespace tessel {

class Tensor {
 public:
  Tensor() = default;
  Tensor(DataType dtype, Shape shape);  // zero-filled; throws Error on absurd sizes
  // Throws the Error the constructor would for a negative, overflowing or too large shape.
  static void check_allocation(DataType dtype, const Shape& shape);

  template <class T> static Tensor from_values(Shape shape, std::span<const T> values) {
    Tensor t(DataTypeOf<T>::value, std::move(shape));
    if (t.nbytes() > 0) std::memcpy(t.raw_data(), values.data(), t.nbytes());  // an empty span may have no data pointer
    return t;
  }
  template <class T> static Tensor scalar(T v) {
    return from_values<T>({}, std::span<const T>(&v, 1));
  }
  static Tensor from_int64s(Shape shape, const std::vector<int64_t>& v) {
    return from_values<int64_t>(std::move(shape), v);
  }

  // A tensor over memory it does not own (a kernel argument); the caller keeps `data` alive.
  static Tensor view(DataType dtype, Shape shape, std::byte* data);

  bool defined() const { return storage_ != nullptr; }
  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return shape_numel(shape_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }

  std::byte* raw_data() { return storage_.get(); }
  const std::byte* raw_data() const { return storage_.get(); }
  template <class T> T* data() { check_type(DataTypeOf<T>::value); return reinterpret_cast<T*>(raw_data()); }
  template <class T> const T* data() const {
    check_type(DataTypeOf<T>::value);
    return reinterpret_cast<const T*>(raw_data());
  }
  template <class T> std::span<const T> values() const { return {data<T>(), static_cast<size_t>(numel())}; }

  // Element i converted through double (any dtype); used by kernels that are not type-specialised.
  double get_double(int64_t i) const;
  void set_double(int64_t i, double v);
  // Reads an integer tensor (any integer dtype) as int64 values: shapes, axes, pads, indices.
  std::vector<int64_t> to_int64s() const;

  // String tensors (dtype kString), see the note below.
  static Tensor from_strings(Shape shape, const std::vector<std::string>& values);
  std::string_view string_at(int64_t i) const;
  void set_string(int64_t i, std::string_view value);
  std::vector<std::string> strings() const;

  Tensor clone() const;
  // Same bytes, new shape (numel must match). Shares storage.
  Tensor reshaped(Shape shape) const;
  // Elementwise conversion (ONNX Cast semantics through double; float → int truncates).
  Tensor cast(DataType to) const;
  std::string summary() const;  // "f32[2,3] {1, 2, 3, ...}"

 private:
  void check_type(DataType expected) const;
  DataType dtype_ = DataType::kFloat32;
  Shape shape_;
  std::shared_ptr<std::byte[]> storage_;
};

// String tensors
// --------------
// Strings reach Tessel only where an op needs them (Cast to and from string, StringNormalizer), and
// such ops run on the reference kernels. So the numeric core keeps its one representation, bytes
// of fixed-size elements, and a string element is a fixed-size handle: the address of a string
// interned in a process-wide pool that only grows. Zero bytes are the empty string.
//
//   Tensor kString [3]: 8-byte handles           intern pool (append-only, never moves a string)
//   ┌──────────┬──────────┬──────────┐           ┌──────────┐
//   │ ●────────┼──────────┼──●       │ nullptr   │ "monday" │◀── both handles: equal strings share
//   └──────────┴──────────┴──────────┘ = ""      └──────────┘    one entry
//
// Everything that moves bytes (Identity, Reshape, the memory plan's arena, copies between
// executors) moves strings unchanged; everything that computes refuses them (dispatch_dtype throws,
// the tensor-expression builders decline string values, so their groups run on the reference path).
// The pool is never freed: it holds the distinct strings a process has seen, which for models
// and their test inputs stays small.
const std::string* intern_string(std::string_view s);

// Alignment of every tensor's storage in bytes (one AVX-512 register, one cache line).
constexpr size_t kTensorAlignment = 64;

// The largest tensor Tessel agrees to allocate (refuses absurd sizes from corrupt models before
// allocating).
constexpr int64_t kMaxTensorBytes = int64_t{8} << 30;

// The limit Tensor::check_allocation applies in this process: kMaxTensorBytes unless lowered. The
// fuzz targets (tests/fuzz) lower it so that a legal but huge constant is refused at once, through
// the same check, instead of costing each input seconds and gigabytes.
int64_t tensor_allocation_limit();
void set_tensor_allocation_limit(int64_t bytes);  // clamped to [0, kMaxTensorBytes]

}  // namespace tessel
