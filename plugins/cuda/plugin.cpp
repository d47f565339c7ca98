// The cuda plugin: target kind `cuda`, its code generator (loop IR → CUDA C → PTX with NVRTC,
// loaded with cuModuleLoadData on the device the target names) and the DeviceAPI of CUDA devices.
//
//   lowered kernels ──emit_cuda──▶ CUDA C ──NVRTC──▶ PTX ──cuModuleLoadData──▶ CUfunction per root nest
//   Module::call(NDArrays on cuda:N)   the CUdeviceptrs are the kernel's arguments
//   Module::call_host(host tensors)    buffers copied in, the kernel run, written buffers copied out
//
// Why NVRTC and not LLVM's NVPTX backend: the CUDA C is the same loop-IR-to-C emitter the opencl
// plugin uses (core/codegen/gpu_kernel_c.h), so one emitter serves both GPU languages and the
// kernel source is readable in the Program pane; NVRTC ships with the toolkit that the plugin is
// built against, whereas NVPTX would tie this plugin to LLVM (which only plugins/llvm_cpu may use)
// and to a libdevice of the right version for the math functions. PTX for compute_XY runs on that
// GPU and every later one: the driver finishes the compilation for the GPU it finds.
//
// Code generation (and the PTX) needs no GPU and no driver; only loading and running do. With no
// device the module carries its source and PTX (artifacts, `tessel lower`) and refuses to run.
#include <algorithm>
#include <mutex>

#include "core/loopir/ir.h"
#include "core/plugin/plugin_api.h"
#include "plugins/cuda/cuda_device_api.h"
#include "plugins/cuda/emit_cuda.h"

namespace {

using namespace tessel;
using cuda::cu_check;
using cuda::CudaDeviceAPI;

CudaDeviceAPI* g_api = nullptr;  // owned by the DeviceAPI registry, which outlives every module

class CudaModule final : public Module {
 public:
  CudaModule(const std::vector<loopir::Func>& kernels, codegen::GpuProgram program, std::string ptx,
             std::string why_no_ptx, int device_id)
      : program_(std::move(program)), ptx_(std::move(ptx)), why_no_ptx_(std::move(why_no_ptx)), device_id_(device_id) {
    for (const auto& f : kernels) add_kernel(kernel_signature(f));
    if (!ptx_.empty() && g_api->device_count() > device_id_) load(kernels);
  }

  ~CudaModule() override {
    if (!module_) return;
    try {
      const cuda::Driver& d = g_api->bind(device_id_);
      d.stream_synchronize(g_api->kernel_stream(device_id_));
      for (auto& spaces : workspaces_)
        for (DataSpace w : spaces) g_api->free_workspace(device_id_, w);
      for (auto& buffers : host_buffers_)
        for (DataSpace b : buffers) g_api->free_data_space(device_id_, b);
      g_api->free_data_space(device_id_, record_);
      d.event_destroy(start_);
      d.event_destroy(end_);
      d.module_unload(module_);
    } catch (const Error&) {
      // The context is gone (process exit): the driver has released everything already.
    }
  }

  std::string target_kind() const override { return "cuda"; }
  std::optional<LaunchTimes> last_launch_times() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_times_;
  }
  std::map<std::string, std::string> artifacts() const override {
    std::string launches;
    for (size_t k = 0; k < kernels().size(); ++k)
      launches += kernels()[k].name + ": " + program_.functions[k].note() + "\n";
    std::map<std::string, std::string> a{{"cuda", program_.source}, {"launch", launches}};
    if (!ptx_.empty()) a["ptx"] = ptx_;
    return a;
  }

 protected:
  void invoke(size_t kernel_index, void* const* args) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    launch(kernel_index, args);
  }

  void invoke_host(size_t kernel_index, void* const* args) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    require_device(kernel_index);
    const KernelSignature& sig = kernels()[kernel_index];
    std::vector<DataSpace>& buffers = host_buffers_[kernel_index];
    if (buffers.empty())
      for (const KernelParam& p : sig.params) buffers.push_back(g_api->alloc_data_space(device_id_, bytes_of(p), 64));
    const Device dev{DeviceType::kCUDA, device_id_};
    Stream stream = g_api->kernel_stream(device_id_);
    for (size_t k = 0; k < sig.params.size(); ++k)
      g_api->copy_host_to_device(args[k], buffers[k], 0, bytes_of(sig.params[k]), dev, stream);
    std::vector<void*> device_args(buffers.begin(), buffers.end());
    device_args.push_back(args[sig.params.size()]);
    launch(kernel_index, device_args.data());
    for (size_t k = 0; k < sig.params.size(); ++k)
      if (program_.functions[kernel_index].written[k])
        g_api->copy_device_to_host(buffers[k], 0, args[k], bytes_of(sig.params[k]), dev, stream);
    g_api->stream_sync(device_id_, stream);
  }

 private:
  static size_t bytes_of(const KernelParam& p) {
    return static_cast<size_t>(shape_numel(p.shape)) * dtype_size(p.dtype);
  }

  void require_device(size_t kernel_index) const {
    if (module_) return;
    const std::string kernel = "kernel '" + kernels()[kernel_index].name + "': cuda: ";
    if (ptx_.empty()) throw Error(kernel + "no PTX to run (" + why_no_ptx_ + ")");
    throw Error(kernel + "device cuda:" + std::to_string(device_id_) + " does not exist (" +
                (g_api->why_no_device().empty() ? std::to_string(g_api->device_count()) + " device(s)"
                                                : g_api->why_no_device()) +
                ")");
  }

  void load(const std::vector<loopir::Func>& kernels) {
    const cuda::Driver& d = g_api->bind(device_id_);
    const std::string first = kernels.empty() ? std::string("?") : kernels[0].name;
    const CUresult loaded = d.module_load_data(&module_, ptx_.c_str());
    if (loaded == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
      throw Error("kernel '" + first + "': cuda: the driver (" +
                  device_attr_value_str(g_api->attribute(device_id_, DeviceAttr::kDriverVersion)) +
                  ") cannot load the PTX of NVRTC " + cuda::nvrtc_version() +
                  ": a driver at least as new as the toolkit the plugin was built with is needed");
    cu_check(loaded, "cuModuleLoadData", "the PTX of kernel '" + first + "' and the rest");
    for (size_t k = 0; k < program_.functions.size(); ++k) {
      std::vector<CUfunction> launches;
      for (const codegen::GpuLaunch& l : program_.functions[k].launches) {
        CUfunction f = nullptr;
        cu_check(d.module_get_function(&f, module_, l.symbol.c_str()), "cuModuleGetFunction",
                 "kernel '" + kernels[k].name + "' (" + l.symbol + ")");
        launches.push_back(f);
      }
      functions_.push_back(std::move(launches));
      std::vector<DataSpace> spaces;
      for (int64_t bytes : program_.functions[k].workspace_bytes)
        spaces.push_back(g_api->alloc_workspace(device_id_, static_cast<size_t>(bytes)));
      workspaces_.push_back(std::move(spaces));
    }
    host_buffers_.resize(program_.functions.size());
    record_ = g_api->alloc_data_space(device_id_, sizeof(DeviceCheckRecord), 16);
    cu_check(d.event_create(&start_, CU_EVENT_DEFAULT), "cuEventCreate", "cuda:" + std::to_string(device_id_));
    cu_check(d.event_create(&end_, CU_EVENT_DEFAULT), "cuEventCreate", "cuda:" + std::to_string(device_id_));
  }

  // The check record as the kernel writes it (tessel_check_record in the prelude).
  struct DeviceCheckRecord {
    int32_t claimed = 0, check = 0;
    int64_t value = 0;
  };

  // args: a CUdeviceptr per parameter, then the host loopir::CheckRecord*. Launches the kernel's
  // root nests in order on the stream set_stream chose and waits for the last.
  void launch(size_t kernel_index, void* const* args) const {
    require_device(kernel_index);
    const codegen::GpuFunction& fn = program_.functions[kernel_index];
    const std::string where = "kernel '" + kernels()[kernel_index].name + "'";
    const cuda::Driver& d = g_api->bind(device_id_);
    CUstream q = g_api->kernel_stream(device_id_);
    // A pageable source: cuMemcpyAsync has read it before it returns.
    const DeviceCheckRecord zero;
    cu_check(d.memcpy_async(CudaDeviceAPI::address(record_), reinterpret_cast<CUdeviceptr>(&zero), sizeof zero, q),
             "cuMemcpyAsync", where + " check record");
    std::vector<CUdeviceptr> values;
    for (size_t k = 0; k < fn.params; ++k) values.push_back(CudaDeviceAPI::address(args[k]));
    for (DataSpace w : workspaces_[kernel_index]) values.push_back(CudaDeviceAPI::address(w));
    values.push_back(CudaDeviceAPI::address(record_));
    std::vector<void*> params;
    for (CUdeviceptr& v : values) params.push_back(&v);
    cu_check(d.event_record(start_, q), "cuEventRecord", where);
    for (size_t n = 0; n < fn.launches.size(); ++n) {
      const codegen::GpuLaunch& l = fn.launches[n];
      auto dim = [](int64_t v) { return static_cast<unsigned>(v); };
      cu_check(d.launch_kernel(functions_[kernel_index][n], dim(l.blocks[0]), dim(l.blocks[1]), dim(l.blocks[2]),
                               dim(l.threads[0]), dim(l.threads[1]), dim(l.threads[2]), 0, q, params.data(), nullptr),
               "cuLaunchKernel", where + " (" + l.symbol + ")");
    }
    cu_check(d.event_record(end_, q), "cuEventRecord", where);
    DeviceCheckRecord record;
    cu_check(d.memcpy_async(reinterpret_cast<CUdeviceptr>(&record), CudaDeviceAPI::address(record_), sizeof record, q),
             "cuMemcpyAsync", where + " check record");
    cu_check(d.stream_synchronize(q), "cuStreamSynchronize", where);
    auto* host_record = static_cast<loopir::CheckRecord*>(args[fn.params]);
    if (record.claimed) {
      host_record->check = record.check;
      host_record->value = record.value;
    }
    // CUDA events time the device reaching them, not the host queuing work: the start event is
    // the origin, so the launches' time is end - start and there is no queued-to-start figure.
    float ms = 0;
    if (d.event_elapsed_time(&ms, start_, end_) == CUDA_SUCCESS)
      last_times_ = LaunchTimes{0, 0, static_cast<double>(ms)};
    else
      last_times_.reset();
  }

  codegen::GpuProgram program_;
  std::string ptx_, why_no_ptx_;
  int device_id_;
  CUmodule module_ = nullptr;
  std::vector<std::vector<CUfunction>> functions_;            // per kernel: one per root nest, launched in order
  std::vector<std::vector<DataSpace>> workspaces_;            // per kernel, kept for the module's life
  mutable std::vector<std::vector<DataSpace>> host_buffers_;  // per kernel: call_host's copies
  DataSpace record_ = nullptr;
  CUevent start_ = nullptr, end_ = nullptr;        // around the last launch
  mutable std::optional<LaunchTimes> last_times_;  // of the last launch
  mutable std::mutex mutex_;                       // the shared buffers and events are used per launch
};

std::unique_ptr<Module> generate(const std::vector<loopir::Func>& kernels, const Target& target) {
  cuda::EmitOptions options;
  options.max_threads_per_block = target.get_int("max_threads_per_block");
  options.shared_memory_bytes = target.get_int("shared_memory_bytes");
  codegen::GpuProgram program = cuda::emit_cuda(kernels, options);
  std::string why_no_ptx;
  std::string ptx;
  if (cuda::nvrtc(&why_no_ptx)) ptx = cuda::compile_to_ptx(program, kernels, target.get_string("arch"));
  return std::make_unique<CudaModule>(kernels, std::move(program), std::move(ptx), why_no_ptx,
                                      static_cast<int>(target.get_int("device")));
}

// A default read from cuda:0 when it exists and answers, else `fallback`.
std::function<TargetOptionValue()> from_device(DeviceAttr attr, int64_t fallback) {
  return [attr, fallback] {
    DeviceAttrValue v = g_api->attribute(0, attr);
    if (auto* i = std::get_if<int64_t>(&v)) return TargetOptionValue{*i};
    return TargetOptionValue{fallback};
  };
}

// The oldest architecture CUDA 13 compiles for: what PTX is made for when there is no GPU to ask.
constexpr const char* kDefaultArch = "sm_75";

std::string check_arch(const TargetOptionValue& v) {
  const std::string& s = std::get<std::string>(v);
  const bool digits = s.size() > 3 && std::all_of(s.begin() + 3, s.end(), [](char c) { return c >= '0' && c <= '9'; });
  return s.rfind("sm_", 0) == 0 && digits ? "" : "'" + s + "' is not a GPU architecture of the form sm_XY (sm_80)";
}

TargetKind cuda_kind() {
  using Type = TargetOptionSpec::Type;
  TargetKind k;
  k.name = "cuda";
  k.device = "cuda";
  k.device_class = DeviceClass::kGpu;
  k.memory_scopes = {"shared", "local"};
  k.tensor_intrinsics = [](const Target&) { return std::vector<std::string>{}; };  // no tessel_intrin_* in its C
  k.doc = "CUDA C for NVIDIA GPUs, compiled to PTX at run time with NVRTC and run through the CUDA driver";
  k.options = {
      {.name = "device",
       .type = Type::kInt,
       .doc = "The CUDA device the kernels are loaded on and run on (cuda:N)",
       .default_value = [] { return TargetOptionValue{int64_t{0}}; },
       .min = 0,
       .max = 255,
       .choices = {}},
      {.name = "max_threads_per_block",
       .type = Type::kInt,
       .doc = "Most threads per block; a kernel with more runs as one thread (default: cuda:0's, else 1024)",
       .default_value = from_device(DeviceAttr::kMaxThreadsPerBlock, 1024),
       .min = 1,
       .max = 1 << 20,
       .choices = {}},
      {.name = "shared_memory_bytes",
       .type = Type::kInt,
       .doc = "__shared__ bytes per block for shared buffers (static arrays: cuda:0's per-block limit without "
              "opt-in, else 49152)",
       .default_value = from_device(DeviceAttr::kMaxSharedMemoryPerBlock, 48 * 1024),
       .min = 0,
       .max = int64_t{1} << 30,
       .choices = {}},
      {.name = "warp_size",
       .type = Type::kInt,
       .doc = "Threads that run in lockstep (default: cuda:0's, else 32); the code generator does not use warp "
              "operations yet",
       .default_value = from_device(DeviceAttr::kWarpSize, 32),
       .min = 1,
       .max = 128,
       .choices = {}},
      {.name = "arch",
       .type = Type::kString,
       .doc = std::string("The GPU architecture the PTX is made for, sm_XY (default: cuda:0's compute capability, "
                          "else ") +
              kDefaultArch + ")",
       .default_value =
           [] {
             DeviceAttrValue v = g_api->attribute(0, DeviceAttr::kComputeVersion);
             std::string arch = kDefaultArch;
             if (auto* s = std::get_if<std::string>(&v)) {
               std::string digits;
               for (char c : *s)
                 if (c != '.') digits += c;
               arch = "sm_" + digits;
             }
             return TargetOptionValue{arch};
           },
       .min = 0,
       .max = INT64_MAX,
       .choices = {},
       .check = check_arch},
  };
  return k;
}

}  // namespace

TESSEL_PLUGIN_ENTRY(tessel::PluginContext* ctx) {
  auto api = std::make_unique<CudaDeviceAPI>();
  g_api = api.get();
  ctx->add_device_api(std::move(api));
  ctx->add_target_kind(cuda_kind());
  ctx->add_codegen("cuda", generate);
  return 0;
}
