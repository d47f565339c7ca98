// The opencl plugin: target kind `opencl`, its code generator (loop IR → OpenCL C, built with
// clBuildProgram for the device the target names) and the DeviceAPI of OpenCL devices.
//
//   lowered kernels ──emit_opencl──▶ OpenCL C ──clBuildProgram──▶ cl_kernel per kernel
//   Module::call(NDArrays on opencl:N)   the cl_mem handles are the kernel's arguments
//   Module::call_host(host tensors)      buffers copied in, the kernel run, written buffers copied out
//
// Code generation reads only the Target's options. Building the program needs the device: with
// none, the module still carries its source (artifacts, `tessel lower`) and refuses to run.
#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "core/plugin/plugin_api.h"
#include "plugins/opencl/cl_device_api.h"
#include "plugins/opencl/emit_opencl.h"

namespace {

using namespace tessel;
using opencl::cl_check;
using opencl::OpenClDeviceAPI;

OpenClDeviceAPI* g_api = nullptr;  // owned by the DeviceAPI registry, which outlives every module

// The first line of the build log that names an error, and the kernel whose source holds it.
std::string build_failure(const std::string& log, const std::vector<size_t>& first_lines,
                          const std::vector<loopir::Func>& kernels) {
  size_t at = log.find("error");
  std::string first = log.substr(log.rfind('\n', at == std::string::npos ? 0 : at) + 1);
  first = first.substr(0, first.find('\n'));
  std::string kernel = kernels.empty() ? "?" : kernels[0].name;
  // "<source>:LINE:COL: error: ..." → the kernel whose text starts at or before LINE.
  size_t colon = first.find(':');
  if (colon != std::string::npos) {
    size_t line = std::strtoul(first.c_str() + colon + 1, nullptr, 10);
    for (size_t k = 0; k < first_lines.size(); ++k)
      if (line >= first_lines[k]) kernel = kernels[k].name;
  }
  return "kernel '" + kernel + "': opencl build: " + (first.empty() ? "clBuildProgram failed" : first);
}

class OpenClModule final : public Module {
 public:
  OpenClModule(const std::vector<loopir::Func>& kernels, codegen::GpuProgram program, int device_id)
      : program_(std::move(program)), device_id_(device_id) {
    for (const auto& f : kernels) add_kernel(kernel_signature(f));
    if (g_api->device_count() > device_id_) build(kernels);
  }

  ~OpenClModule() override {
    for (auto& launches : cl_kernels_)
      for (cl_kernel k : launches) clReleaseKernel(k);
    if (cl_program_) clReleaseProgram(cl_program_);
    for (auto& spaces : workspaces_)
      for (DataSpace w : spaces) g_api->free_workspace(device_id_, w);
    for (auto& buffers : host_buffers_)
      for (DataSpace b : buffers) g_api->free_data_space(device_id_, b);
    if (record_) g_api->free_data_space(device_id_, record_);
  }

  std::string target_kind() const override { return "opencl"; }
  std::optional<LaunchTimes> last_launch_times() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_times_;
  }
  std::map<std::string, std::string> artifacts() const override {
    std::string launches;
    for (size_t k = 0; k < kernels().size(); ++k)
      launches += kernels()[k].name + ": " + program_.functions[k].note() + "\n";
    return {{"opencl", program_.source}, {"launch", launches}};
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
    const Device dev{DeviceType::kOpenCL, device_id_};
    for (size_t k = 0; k < sig.params.size(); ++k)
      g_api->copy_host_to_device(args[k], buffers[k], 0, bytes_of(sig.params[k]), dev, nullptr);
    std::vector<void*> device_args(buffers.begin(), buffers.end());
    device_args.push_back(args[sig.params.size()]);
    launch(kernel_index, device_args.data());
    cl_command_queue q = g_api->kernel_queue(device_id_);
    for (size_t k = 0; k < sig.params.size(); ++k)
      if (program_.functions[kernel_index].written[k] && bytes_of(sig.params[k]) > 0)
        cl_check(clEnqueueReadBuffer(q, static_cast<cl_mem>(buffers[k]), CL_TRUE, 0, bytes_of(sig.params[k]), args[k],
                                     0, nullptr, nullptr),
                 "clEnqueueReadBuffer", "kernel '" + sig.name + "' output " + sig.params[k].name);
  }

 private:
  static size_t bytes_of(const KernelParam& p) {
    return static_cast<size_t>(shape_numel(p.shape)) * dtype_size(p.dtype);
  }

  void require_device(size_t kernel_index) const {
    if (!cl_program_)
      throw Error("kernel '" + kernels()[kernel_index].name + "': opencl: device opencl:" + std::to_string(device_id_) +
                  " does not exist (" +
                  (g_api->why_no_device().empty() ? std::to_string(g_api->device_count()) + " device(s)"
                                                  : g_api->why_no_device()) +
                  ")");
  }

  void build(const std::vector<loopir::Func>& kernels) {
    cl_context context = g_api->context(device_id_);
    cl_device_id device = g_api->device(device_id_);
    const char* text = program_.source.c_str();
    size_t length = program_.source.size();
    cl_int status = CL_SUCCESS;
    cl_program_ = clCreateProgramWithSource(context, 1, &text, &length, &status);
    cl_check(status, "clCreateProgramWithSource");
    status = clBuildProgram(cl_program_, 1, &device, "-cl-std=CL1.2", nullptr, nullptr);
    if (status != CL_SUCCESS) {
      size_t size = 0;
      clGetProgramBuildInfo(cl_program_, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
      std::string log(size, '\0');
      clGetProgramBuildInfo(cl_program_, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      std::vector<size_t> first_lines;  // the source line of each kernel's opening comment
      for (const auto& k : program_.functions) {
        const auto at =
            static_cast<std::ptrdiff_t>(program_.source.find("__kernel void " + k.launches.front().symbol + "("));
        first_lines.push_back(
            static_cast<size_t>(std::count(program_.source.begin(), program_.source.begin() + at, '\n')));
      }
      throw Error(build_failure(log, first_lines, kernels) + " (clBuildProgram: " + opencl::cl_error_name(status) +
                  ")");
    }
    for (size_t k = 0; k < program_.functions.size(); ++k) {
      std::vector<cl_kernel> launches;
      for (const codegen::GpuLaunch& l : program_.functions[k].launches) {
        cl_kernel kernel = clCreateKernel(cl_program_, l.symbol.c_str(), &status);
        cl_check(status, "clCreateKernel", "kernel '" + kernels[k].name + "' (" + l.symbol + ")");
        launches.push_back(kernel);
      }
      cl_kernels_.push_back(std::move(launches));
      std::vector<DataSpace> spaces;
      for (int64_t bytes : program_.functions[k].workspace_bytes)
        spaces.push_back(g_api->alloc_workspace(device_id_, static_cast<size_t>(bytes)));
      workspaces_.push_back(std::move(spaces));
    }
    host_buffers_.resize(program_.functions.size());
    record_ = g_api->alloc_data_space(device_id_, sizeof(DeviceCheckRecord), 16);
  }

  // The check record as the kernel writes it (tessel_check_record in the prelude).
  struct DeviceCheckRecord {
    int32_t claimed = 0, check = 0;
    int64_t value = 0;
  };

  // args: cl_mem per parameter, then the host loopir::CheckRecord*. Launches the kernel's root
  // nests in order on one in-order queue and waits for the last.
  void launch(size_t kernel_index, void* const* args) const {
    require_device(kernel_index);
    const codegen::GpuFunction& kl = program_.functions[kernel_index];
    const std::string where = "kernel '" + kernels()[kernel_index].name + "'";
    cl_command_queue q = g_api->kernel_queue(device_id_);
    const DeviceCheckRecord zero;
    cl_check(clEnqueueWriteBuffer(q, static_cast<cl_mem>(record_), CL_TRUE, 0, sizeof zero, &zero, 0, nullptr, nullptr),
             "clEnqueueWriteBuffer", where + " check record");
    std::vector<cl_event> events(kl.launches.size(), nullptr);
    struct Release {
      std::vector<cl_event>& events;
      ~Release() {
        for (cl_event e : events)
          if (e) clReleaseEvent(e);
      }
    } release{events};
    for (size_t n = 0; n < kl.launches.size(); ++n) {
      const codegen::GpuLaunch& l = kl.launches[n];
      cl_kernel kernel = cl_kernels_[kernel_index][n];
      cl_uint arg = 0;
      auto set_buffer = [&](DataSpace d) {
        cl_mem m = static_cast<cl_mem>(d);
        cl_check(clSetKernelArg(kernel, arg, sizeof m, &m), "clSetKernelArg",
                 where + " argument " + std::to_string(arg));
        ++arg;
      };
      for (size_t k = 0; k < kl.params; ++k) set_buffer(args[k]);
      for (DataSpace w : workspaces_[kernel_index]) set_buffer(w);
      set_buffer(record_);
      size_t global[3], local[3];
      for (int d = 0; d < 3; ++d) {
        local[d] = static_cast<size_t>(l.threads[d]);
        global[d] = static_cast<size_t>(l.blocks[d] * l.threads[d]);
      }
      cl_check(clEnqueueNDRangeKernel(q, kernel, 3, nullptr, global, local, 0, nullptr, &events[n]),
               "clEnqueueNDRangeKernel", where + " (" + l.symbol + ")");
    }
    DeviceCheckRecord record;
    cl_check(
        clEnqueueReadBuffer(q, static_cast<cl_mem>(record_), CL_TRUE, 0, sizeof record, &record, 0, nullptr, nullptr),
        "clEnqueueReadBuffer", where + " check record");
    auto* host_record = static_cast<loopir::CheckRecord*>(args[kl.params]);
    if (record.claimed) {
      host_record->check = record.check;
      host_record->value = record.value;
    }
    last_times_ = launch_times(events);
  }

  // From the first launch's queued time to the last one's end (the blocking read above has waited
  // for all of them). None when the queue keeps no profile (another stream chosen by the caller).
  static std::optional<LaunchTimes> launch_times(const std::vector<cl_event>& events) {
    if (events.empty()) return std::nullopt;
    auto at = [](cl_event e, cl_profiling_info what) -> std::optional<cl_ulong> {
      cl_ulong ns = 0;
      if (clGetEventProfilingInfo(e, what, sizeof ns, &ns, nullptr) != CL_SUCCESS) return std::nullopt;
      return ns;
    };
    const auto queued = at(events.front(), CL_PROFILING_COMMAND_QUEUED);
    const auto submit = at(events.front(), CL_PROFILING_COMMAND_SUBMIT);
    const auto start = at(events.front(), CL_PROFILING_COMMAND_START);
    const auto end = at(events.back(), CL_PROFILING_COMMAND_END);
    if (!queued || !submit || !start || !end) return std::nullopt;
    auto ms = [&](cl_ulong t) { return t >= *queued ? static_cast<double>(t - *queued) / 1e6 : 0.0; };
    return LaunchTimes{ms(*submit), ms(*start), ms(*end)};
  }

  codegen::GpuProgram program_;
  int device_id_;
  cl_program cl_program_ = nullptr;
  std::vector<std::vector<cl_kernel>> cl_kernels_;            // per kernel: one per root nest, launched in order
  std::vector<std::vector<DataSpace>> workspaces_;            // per kernel, kept for the module's life
  mutable std::vector<std::vector<DataSpace>> host_buffers_;  // per kernel: call_host's copies
  DataSpace record_ = nullptr;
  mutable std::optional<LaunchTimes> last_times_;  // of the last launch
  mutable std::mutex mutex_;                       // kernel arguments and the shared buffers are set per launch
};

std::unique_ptr<Module> generate(const std::vector<loopir::Func>& kernels, const Target& target) {
  opencl::EmitOptions options;
  options.max_work_group_size = target.get_int("max_work_group_size");
  options.local_memory_bytes = target.get_int("local_memory_bytes");
  options.vector_width = target.get_int("vector_width");
  codegen::GpuProgram program = opencl::emit_opencl(kernels, options);
  return std::make_unique<OpenClModule>(kernels, std::move(program), static_cast<int>(target.get_int("device")));
}

// A default read from opencl:0 when it exists and answers, else `fallback`.
std::function<TargetOptionValue()> from_device(DeviceAttr attr, int64_t fallback, int64_t cap) {
  return [attr, fallback, cap] {
    DeviceAttrValue v = g_api->attribute(0, attr);
    if (auto* i = std::get_if<int64_t>(&v)) return TargetOptionValue{std::min(*i, cap)};
    return TargetOptionValue{fallback};
  };
}

TargetKind opencl_kind() {
  using Type = TargetOptionSpec::Type;
  TargetKind k;
  k.name = "opencl";
  k.device = "opencl";
  k.device_class = DeviceClass::kGpu;
  k.memory_scopes = {"shared", "local"};
  k.tensor_intrinsics = [](const Target&) { return std::vector<std::string>{}; };  // no tessel_intrin_* in its C
  k.doc = "OpenCL C for any OpenCL device (CI: PoCL's CPU device), built at run time with clBuildProgram";
  k.options = {
      {.name = "device",
       .type = Type::kInt,
       .doc = "The OpenCL device the kernels are built for and run on (opencl:N)",
       .default_value = [] { return TargetOptionValue{int64_t{0}}; },
       .min = 0,
       .max = 255,
       .choices = {}},
      {.name = "max_work_group_size",
       .type = Type::kInt,
       .doc = "Most work-items per work-group; a kernel with more threads per block runs as one work-item "
              "(default: opencl:0's, else 256)",
       .default_value = from_device(DeviceAttr::kMaxThreadsPerBlock, 256, 1 << 20),
       .min = 1,
       .max = 1 << 20,
       .choices = {}},
      {.name = "local_memory_bytes",
       .type = Type::kInt,
       .doc = "__local bytes per work-group for shared buffers (default: opencl:0's, else 32768)",
       .default_value = from_device(DeviceAttr::kMaxSharedMemoryPerBlock, 32768, int64_t{1} << 30),
       .min = 0,
       .max = int64_t{1} << 30,
       .choices = {}},
      {.name = "sub_group_width",
       .type = Type::kInt,
       .doc = "Work-items that run in lockstep (a warp); OpenCL 1.2 cannot query it and the code generator "
              "does not use sub-group operations yet",
       .default_value = [] { return TargetOptionValue{int64_t{1}}; },
       .min = 1,
       .max = 128,
       .choices = {}},
      {.name = "vector_width",
       .type = Type::kInt,
       .doc = "Lanes of the vector types (floatN, 2 to 16) a vectorized loop may use; 1: vectorized loops are "
              "emitted as loops (the OpenCL compiler vectorizes across work-items)",
       .default_value = [] { return TargetOptionValue{int64_t{1}}; },
       .min = 1,
       .max = 16,
       .choices = {}},
  };
  return k;
}

}  // namespace

TESSEL_PLUGIN_ENTRY(tessel::PluginContext* ctx) {
  auto api = std::make_unique<OpenClDeviceAPI>();
  g_api = api.get();
  ctx->add_device_api(std::move(api));
  ctx->add_target_kind(opencl_kind());
  ctx->add_codegen("opencl", generate);
  return 0;
}
