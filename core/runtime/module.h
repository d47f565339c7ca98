#pragma once
// A runtime Module: what a code generator returns. Every kernel is callable by name with typed
// arguments (one buffer per parameter of the lowered function, inputs then outputs), and the
// module can hand back its artifacts (LLVM IR, assembly, C source) as text for the studio.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/runtime/ndarray.h"
#include "core/support/error.h"

namespace tessel {

namespace loopir {
struct Func;  // core/loopir/ir.h
}
struct DeviceLanes;  // core/runtime/device_lanes.h

struct KernelParam {
  std::string name;
  DataType dtype = DataType::kFloat32;
  Shape shape;
};

struct KernelSignature {
  std::string name;
  std::vector<KernelParam> params;
  std::vector<std::string> checks;  // the messages of its run-time checks (loopir::check_messages)
};

// A lowered function's signature: its name, its parameters' names, types and shapes, in order, and
// its checks' messages (what every backend's module registers for each kernel it compiled).
KernelSignature kernel_signature(const loopir::Func& f);

// The device's own clock for the last run of a kernel (its events: queued, submitted to the
// device, started, ended), in ms from the moment it was queued.
struct LaunchTimes {
  double submit_ms = 0, start_ms = 0, end_ms = 0;
  double run_ms() const { return end_ms - start_ms; }
};

class Module {
 public:
  virtual ~Module() = default;
  virtual std::string target_kind() const = 0;
  // Artifact name → text: "llvm_ir", "asm", "c", "loopir" (whatever the backend has).
  virtual std::map<std::string, std::string> artifacts() const { return {}; }

  // Writes every kernel as relocatable, position-independent object code for the host to `path`,
  // kernel k under the linker symbol kernel_symbol(k) with the calling convention
  // `void symbol(void** args)` (args: the buffers, then a loopir::CheckRecord*). This is what `tessel build` links into
  // a shared library. A backend without object code (the interpreter) throws Error saying so; an unwritable path throws
  // Error naming it.
  virtual void save_object(const std::string& path) const;
  // The linker symbol of kernel k: its name, unless the backend had to mangle it (C identifiers).
  virtual std::string kernel_symbol(size_t index) const { return kernels_.at(index).name; }

  const std::vector<KernelSignature>& kernels() const { return kernels_; }
  bool has_kernel(const std::string& name) const;
  const KernelSignature& signature(const std::string& name) const;  // throws Error listing kernels

  // Checks every argument against the signature (count, dtype, shape), then runs the kernel. A
  // check that fails inside it (a gather's index out of range) throws Error "kernel 'K': <message>".
  void call(const std::string& name, const std::vector<const NDArray*>& args) const;
  // Host tensors, for CPU modules: arguments are written in place (outputs must be allocated).
  void call_host(const std::string& name, const std::vector<Tensor*>& args) const;
  // The device's timing of the last call, from a backend whose device records events (opencl);
  // none from host backends, whose time is the host clock's.
  virtual std::optional<LaunchTimes> last_launch_times() const { return std::nullopt; }
  // What a simulated device counted in the last call, by name ("cycles", "compute_busy",
  // "dram_read_bytes", ...: accel-sim); empty for everything else.
  virtual std::vector<std::pair<std::string, double>> last_call_counters() const { return {}; }
  // What each of a simulated device's units did in the last call (accel-sim: its load, compute
  // and store lanes, bounded: device_lanes.h); null for everything else.
  virtual std::shared_ptr<const DeviceLanes> last_call_lanes() const { return nullptr; }

 protected:
  // args[k] is the data space of parameter k; args[params.size()] is the loopir::CheckRecord the
  // kernel's failed checks are written to (zeroed by the caller).
  virtual void invoke(size_t kernel_index, void* const* args) const = 0;
  // The same with host pointers (call_host). A module whose memory is not the host's copies the
  // buffers in, invokes and copies them back; host backends keep this default.
  virtual void invoke_host(size_t kernel_index, void* const* args) const { invoke(kernel_index, args); }
  void add_kernel(KernelSignature sig) { kernels_.push_back(std::move(sig)); }

 private:
  size_t index_of(const std::string& name) const;
  template <class Describe>
  void checked_invoke(const std::string& name, size_t count, bool host, const Describe& describe) const;
  void check_arg(const KernelSignature& sig, size_t k, DataType dtype, const Shape& shape) const;
  std::vector<KernelSignature> kernels_;
};

}  // namespace tessel
