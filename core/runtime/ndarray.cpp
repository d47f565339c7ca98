#include "core/runtime/ndarray.h"

#include "core/support/error.h"

namespace tessel {

NDArray NDArray::empty(DataType dtype, Shape shape, Device device) {
  Tensor::check_allocation(dtype, shape);  // refuses absurd sizes with the same message as host tensors
  NDArray a;
  a.dtype_ = dtype;
  a.shape_ = std::move(shape);
  a.device_ = device;
  a.api_ = &DeviceAPIRegistry::global().get(device.type);
  a.data_ = a.api_->alloc_data_space(device.id, std::max<size_t>(a.nbytes(), 1), 64);
  return a;
}

NDArray NDArray::from_host(const Tensor& t, Device device) {
  NDArray a = empty(t.dtype(), t.shape(), device);
  a.copy_from(t);
  return a;
}

NDArray NDArray::view(DataType dtype, Shape shape, Device device, DataSpace data) {
  NDArray a;
  a.dtype_ = dtype;
  a.shape_ = std::move(shape);
  a.device_ = device;
  a.api_ = &DeviceAPIRegistry::global().get(device.type);
  a.data_ = data;
  a.owns_ = false;
  return a;
}

NDArray& NDArray::operator=(NDArray&& o) noexcept {
  if (this != &o) {
    if (data_ && owns_) api_->free_data_space(device_.id, data_);
    dtype_ = o.dtype_;
    shape_ = std::move(o.shape_);
    device_ = o.device_;
    api_ = o.api_;
    data_ = o.data_;
    owns_ = o.owns_;
    o.data_ = nullptr;
  }
  return *this;
}

NDArray::~NDArray() {
  if (data_ && owns_) api_->free_data_space(device_.id, data_);
}

void NDArray::copy_from(const Tensor& host, Stream stream) {
  if (host.dtype() != dtype_ || host.shape() != shape_)
    throw Error("copy into " + std::string(dtype_name(dtype_)) + shape_str(shape_) + " on " + device_str(device_) +
                " from a " + std::string(dtype_name(host.dtype())) + shape_str(host.shape()) + " tensor");
  api_->copy_host_to_device(host.raw_data(), data_, 0, nbytes(), device_, stream);
}

Tensor NDArray::to_host(Stream stream) const {
  Tensor t(dtype_, shape_);
  api_->copy_device_to_host(data_, 0, t.raw_data(), nbytes(), device_, stream);
  api_->stream_sync(device_.id, stream);
  return t;
}

void NDArray::copy_from(const NDArray& other, Stream stream) {
  if (other.dtype_ != dtype_ || other.shape_ != shape_ || other.device_.type != device_.type)
    throw Error("device copy between mismatched arrays");
  api_->copy_device_to_device(other.data_, 0, data_, 0, nbytes(), device_, stream);
}

}  // namespace tessel
