#pragma once
// A tensor living in a device's data space. Owns its allocation (freed through the DeviceAPI);
// moves, does not copy. Host tensors go in and out with copy_from / to_host.
#include "core/runtime/device_api.h"
#include "core/support/tensor.h"

namespace tessel {

class NDArray {
 public:
  NDArray() = default;
  static NDArray empty(DataType dtype, Shape shape, Device device);
  static NDArray from_host(const Tensor& t, Device device);
  // A typed window on data space someone else owns (a block of a device memory plan): never freed
  // through this array. The owner must outlive it.
  static NDArray view(DataType dtype, Shape shape, Device device, DataSpace data);
  NDArray(NDArray&& o) noexcept { *this = std::move(o); }
  NDArray& operator=(NDArray&& o) noexcept;
  NDArray(const NDArray&) = delete;
  NDArray& operator=(const NDArray&) = delete;
  ~NDArray();

  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  Device device() const { return device_; }
  size_t nbytes() const { return static_cast<size_t>(shape_numel(shape_)) * dtype_size(dtype_); }
  DataSpace data() const { return data_; }

  void copy_from(const Tensor& host, Stream stream = nullptr);
  Tensor to_host(Stream stream = nullptr) const;
  void copy_from(const NDArray& other, Stream stream = nullptr);  // same device type

 private:
  DataType dtype_ = DataType::kFloat32;
  Shape shape_;
  Device device_;
  DeviceAPI* api_ = nullptr;
  DataSpace data_ = nullptr;
  bool owns_ = true;
};

}  // namespace tessel
