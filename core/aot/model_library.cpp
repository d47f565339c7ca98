#include "core/aot/model_library.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/support/error.h"
#include "core/support/subprocess.h"

namespace tessel::aot {

namespace {

namespace fs = std::filesystem;

constexpr int64_t kAlign = 64;  // what the kernels assume of every buffer (noalias, align 64)

int64_t align_up(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

const char* c_dtype_name(DataType t) {
  switch (t) {
    case DataType::kFloat32:
      return "float32";
    case DataType::kFloat64:
      return "float64";
    case DataType::kFloat16:
      return "float16";
    case DataType::kBFloat16:
      return "bfloat16";
    case DataType::kInt8:
      return "int8";
    case DataType::kInt16:
      return "int16";
    case DataType::kInt32:
      return "int32";
    case DataType::kInt64:
      return "int64";
    case DataType::kUInt8:
      return "uint8";
    case DataType::kBool:
      return "bool";
    case DataType::kUInt16:
      return "uint16";
    case DataType::kUInt32:
      return "uint32";
    case DataType::kUInt64:
      return "uint64";
    case DataType::kString:
      return "string";
  }
  return "unknown";
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// A C string literal holding `s`.
std::string c_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += static_cast<char>(c);
    else if (c < 32 || c > 126) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else
      out += static_cast<char>(c);
  }
  return out + "\"";
}

// Where every graph value the entry point touches lives, as a C expression of type `void*`.
//
//   arena: [ memory plan (peak_bytes) | values the plan left out | staging for misaligned inputs ]
//   W:     the constants blob, each constant at a 64-byte aligned offset
class Placement {
 public:
  explicit Placement(const compile::CompiledModel& model) : g_(model.graph()) {
    const MemoryPlan& plan = *model.pipeline().memory_plan;
    arena_bytes_ = align_up(plan.peak_bytes);
    for (const PlannedTensor& t : plan.tensors) at_[t.value] = "(void*)(A + " + std::to_string(t.offset) + ")";
    for (size_t k = 0; k < g_.inputs.size(); ++k) at_[g_.inputs[k]] = "in[" + std::to_string(k) + "]";
    for (const compile::CompiledKernel& k : model.kernels())
      for (ValueId v : k.params) place(v);
    for (ValueId v : g_.outputs) place(v);
    // An output that lives in the arena is written straight into the caller's buffer when that is
    // 64-byte aligned: out[k] is chosen per call (see run_with_arena). Outputs that are constants,
    // inputs, or listed twice keep their place and are copied out at the end.
    for (size_t k = 0; k < g_.outputs.size(); ++k) {
      const ValueId v = g_.outputs[k];
      const bool in_arena = at_[v].rfind("(void*)(A + ", 0) == 0;
      if (in_arena && std::count(g_.outputs.begin(), g_.outputs.end(), v) == 1) {
        arena_place_[k] = at_[v];
        at_[v] = "out[" + std::to_string(k) + "]";
      }
    }
    for (size_t k = 0; k < g_.inputs.size(); ++k) {
      staging_.push_back(arena_bytes_);
      arena_bytes_ += align_up(bytes(g_.inputs[k]));
    }
  }
  const std::string& at(ValueId v) const { return at_.at(v); }
  int64_t bytes(ValueId v) const {
    return shape_numel(g_.value(v).type.shape) * static_cast<int64_t>(dtype_size(g_.value(v).type.dtype));
  }
  int64_t arena_bytes() const { return std::max<int64_t>(arena_bytes_, kAlign); }
  int64_t staging(size_t input) const { return staging_[input]; }
  // Output k's arena place when it may be written in place (out[k]); nullptr otherwise.
  const std::string* direct_output(size_t k) const {
    auto it = arena_place_.find(k);
    return it == arena_place_.end() ? nullptr : &it->second;
  }
  const std::string& blob() const { return blob_; }

 private:
  void place(ValueId v) {
    if (at_.count(v)) return;
    if (g_.is_constant(v)) {
      const Tensor& t = g_.value(v).value;
      blob_.resize(static_cast<size_t>(align_up(static_cast<int64_t>(blob_.size()))), '\0');
      at_[v] = "(void*)(W + " + std::to_string(blob_.size()) + ")";
      blob_.append(reinterpret_cast<const char*>(t.raw_data()), t.nbytes());
      return;
    }
    // Not planned (none should be): its own slice after the plan, as CompiledModel::run does.
    at_[v] = "(void*)(A + " + std::to_string(arena_bytes_) + ")";
    arena_bytes_ += align_up(bytes(v));
  }
  const Graph& g_;
  std::map<ValueId, std::string> at_;
  std::map<size_t, std::string> arena_place_;  // output index -> its arena place, for direct outputs
  std::string blob_;
  int64_t arena_bytes_ = 0;
  std::vector<int64_t> staging_;
};

void tensor_infos(std::ostringstream& c, const Graph& g, const std::vector<ValueId>& values, const std::string& array,
                  const std::string& prefix) {
  for (size_t k = 0; k < values.size(); ++k) {
    const TensorType& t = g.value(values[k]).type;
    c << "static const int64_t " << prefix << k << "_shape[" << std::max<size_t>(t.shape.size(), 1) << "] = {";
    for (size_t d = 0; d < t.shape.size(); ++d) c << (d ? ", " : "") << t.shape[d];
    c << (t.shape.empty() ? "0" : "") << "};\n";
  }
  c << "const tessel_tensor_info " << array << "[" << std::max<size_t>(values.size(), 1) << "] = {\n";
  for (size_t k = 0; k < values.size(); ++k) {
    const Value& v = g.value(values[k]);
    c << "  {" << c_string(v.name) << ", \"" << c_dtype_name(v.type.dtype) << "\", " << v.type.shape.size() << ", "
      << prefix << k << "_shape, " << shape_numel(v.type.shape) * static_cast<int64_t>(dtype_size(v.type.dtype))
      << "u},\n";
  }
  if (values.empty()) c << "  {0, 0, 0, 0, 0u},\n";
  c << "};\n\n";
}

// The part of the entry source that does not depend on the model: tessel_parallel_for, which the
// llvm backend's kernels call for parallel loops. The same design as core/runtime/thread_pool.h
// (what `tessel run` and `profile` use): chunk(begin, end, env) over [0, extent) in up to 4
// contiguous chunks per thread; thread t owns the t-th run of them and claims those first (the
// rows it wrote in the previous kernel are in its cache), then claims the others' unclaimed
// chunks, so a worker that gets its core late does not hold the loop up; nested loops run
// serially; worker threads are started once (on the first parallel loop) and live until the
// library is unloaded.
//
//   caller                                   worker k (k = 1 .. workers)
//   ──────                                   ───────────────────────────
//   lock the pool (busy: run serially)       wait for a new generation: spin briefly, then
//   loop = chunk, env, extent, chunks;          sleep on the condition variable
//   next[t] = first of t's run; pending = workers
//   generation++ ; broadcast  ────────────▶  claim own chunks (next[k]++), then the others'
//   claim own chunks, then the others'       pending-- (every worker acknowledges, so none can
//   spin, then sleep, until pending == 0 ◀─    mistake the next loop for this one;
//                                               the last one wakes a sleeping caller)
//   unlock the pool
//
// A second thread calling the library while a loop runs finds the pool busy and runs its loops
// serially: correct, never blocked. A destructor stops and joins the workers before dlclose.
const char* kParallelFor = R"(typedef void (*tessel_chunk_fn)(int64_t begin, int64_t end, void* env);
#define TESSEL_MAX_WORKERS 255
#define TESSEL_CHUNKS_PER_THREAD 4
static _Thread_local int tessel_inside_parallel_loop;
static pthread_mutex_t tessel_pool_lock = PTHREAD_MUTEX_INITIALIZER;  /* one parallel loop at a time */
static pthread_mutex_t tessel_wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tessel_wake = PTHREAD_COND_INITIALIZER, tessel_done = PTHREAD_COND_INITIALIZER;
static pthread_t tessel_workers[TESSEL_MAX_WORKERS];
static long tessel_worker_start[TESSEL_MAX_WORKERS];  /* the generation each worker starts after */
static int tessel_worker_count;
static atomic_long tessel_generation;
static atomic_int tessel_pending;
static atomic_int tessel_stopping;
/* The loop in flight, written before the generation is bumped (release), read after it is seen. */
static tessel_chunk_fn tessel_loop_chunk;
static void* tessel_loop_env;
static int64_t tessel_loop_extent, tessel_loop_chunks;
static int64_t tessel_loop_run;  /* chunks per thread: thread t owns [t * run, (t + 1) * run) */
static int tessel_loop_threads;
/* next[t]: the first unclaimed chunk of thread t's run (the caller is 0), each on its own line. */
static struct { _Alignas(64) atomic_llong next; } tessel_next_chunk[TESSEL_MAX_WORKERS + 1];

static void tessel_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static int64_t tessel_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* A waiting thread spins for up to a millisecond before it sleeps (waking a sleeper costs tens of
 * microseconds on a VM); every 64th round checks the clock and yields the core, so that on a busy
 * machine a thread with work gets it soon. Returns 0 when the time is up. */
static int tessel_keep_spinning(int spin, int64_t* deadline) {
  if (spin % 64 != 0) {
    tessel_cpu_relax();
    return 1;
  }
  const int64_t now = tessel_now_ns();
  if (*deadline == 0) *deadline = now + 1000000;
  if (now >= *deadline) return 0;
  sched_yield();
  return 1;
}

static long tessel_wait_for_generation(long seen) {
  long g;
  int64_t deadline = 0;
  for (int spin = 1;; ++spin) {  /* kernels follow each other closely: stay awake */
    if ((g = atomic_load_explicit(&tessel_generation, memory_order_acquire)) != seen) return g;
    if (!tessel_keep_spinning(spin, &deadline)) break;
  }
  pthread_mutex_lock(&tessel_wake_lock);
  while ((g = atomic_load_explicit(&tessel_generation, memory_order_acquire)) == seen)
    pthread_cond_wait(&tessel_wake, &tessel_wake_lock);
  pthread_mutex_unlock(&tessel_wake_lock);
  return g;
}

/* The next unclaimed chunk of thread `owner`'s run, or -1. */
static int64_t tessel_claim_from(int owner) {
  int64_t end = (owner + 1) * tessel_loop_run;
  if (end > tessel_loop_chunks) end = tessel_loop_chunks;
  if (atomic_load_explicit(&tessel_next_chunk[owner].next, memory_order_relaxed) >= end) return -1;
  const int64_t i = atomic_fetch_add_explicit(&tessel_next_chunk[owner].next, 1, memory_order_relaxed);
  return i < end ? i : -1;
}

/* Claims and runs chunks of the loop in flight until none is left: thread `self`'s own, then the others'. */
static void tessel_run_chunks(int self) {
  const int64_t extent = tessel_loop_extent, parts = tessel_loop_chunks;
  const int64_t base = extent / parts, extra = extent % parts;
  int victim = self < tessel_loop_threads ? self : 0; /* a worker beyond this loop's threads has no run */
  for (;;) {
    int64_t i = tessel_claim_from(victim);
    for (int tried = 1; i < 0 && tried < tessel_loop_threads; ++tried) {
      victim = (victim + 1) % tessel_loop_threads;
      i = tessel_claim_from(victim);
    }
    if (i < 0) return;
    const int64_t begin = i * base + (i < extra ? i : extra);
    tessel_loop_chunk(begin, begin + base + (i < extra ? 1 : 0), tessel_loop_env);
  }
}

static void* tessel_worker(void* arg) {
  const int k = (int)(intptr_t)arg;
  long seen = tessel_worker_start[k];
  tessel_inside_parallel_loop = 1;
  for (;;) {
    seen = tessel_wait_for_generation(seen);
    if (atomic_load_explicit(&tessel_stopping, memory_order_acquire)) return 0;
    tessel_run_chunks(k + 1);
    if (atomic_fetch_sub_explicit(&tessel_pending, 1, memory_order_acq_rel) == 1) {  /* the last one */
      pthread_mutex_lock(&tessel_wake_lock);
      pthread_cond_signal(&tessel_done);
      pthread_mutex_unlock(&tessel_wake_lock);
    }
  }
}

/* Starts workers until there are `wanted` (as many as the system allows). Under tessel_pool_lock. */
static void tessel_start_workers(int wanted) {
  if (wanted > TESSEL_MAX_WORKERS) wanted = TESSEL_MAX_WORKERS;
  while (tessel_worker_count < wanted) {
    const int k = tessel_worker_count;
    tessel_worker_start[k] = atomic_load_explicit(&tessel_generation, memory_order_relaxed);
    if (pthread_create(&tessel_workers[k], 0, tessel_worker, (void*)(intptr_t)k) != 0) return;
    ++tessel_worker_count;
  }
}

__attribute__((destructor)) static void tessel_stop_workers(void) {
  if (tessel_worker_count == 0) return;
  pthread_mutex_lock(&tessel_wake_lock);
  atomic_store_explicit(&tessel_stopping, 1, memory_order_release);
  atomic_fetch_add_explicit(&tessel_generation, 1, memory_order_release);
  pthread_cond_broadcast(&tessel_wake);
  pthread_mutex_unlock(&tessel_wake_lock);
  for (int k = 0; k < tessel_worker_count; ++k) pthread_join(tessel_workers[k], 0);
  tessel_worker_count = 0;
}

__attribute__((visibility("hidden"))) void tessel_parallel_for(int64_t extent, tessel_chunk_fn chunk, void* env) {
  if (extent <= 0) return;
  int64_t n = tessel_threads < extent ? tessel_threads : extent;
  if (n <= 1 || tessel_inside_parallel_loop || pthread_mutex_trylock(&tessel_pool_lock) != 0) {
    chunk(0, extent, env);
    return;
  }
  tessel_start_workers((int)(n - 1));
  if (n > tessel_worker_count + 1) n = tessel_worker_count + 1;
  tessel_loop_chunk = chunk, tessel_loop_env = env, tessel_loop_extent = extent;
  tessel_loop_chunks = extent < TESSEL_CHUNKS_PER_THREAD * n ? extent : TESSEL_CHUNKS_PER_THREAD * n;
  tessel_loop_threads = (int)n;
  tessel_loop_run = (tessel_loop_chunks + n - 1) / n;
  for (int t = 0; t < n; ++t) atomic_store_explicit(&tessel_next_chunk[t].next, t * tessel_loop_run, memory_order_relaxed);
  atomic_store_explicit(&tessel_pending, tessel_worker_count, memory_order_relaxed);
  pthread_mutex_lock(&tessel_wake_lock);
  atomic_fetch_add_explicit(&tessel_generation, 1, memory_order_release);
  pthread_cond_broadcast(&tessel_wake);
  pthread_mutex_unlock(&tessel_wake_lock);
  tessel_inside_parallel_loop = 1;
  tessel_run_chunks(0);
  tessel_inside_parallel_loop = 0;
  int64_t deadline = 0;
  for (int spin = 1; atomic_load_explicit(&tessel_pending, memory_order_acquire) != 0; ++spin)
    if (!tessel_keep_spinning(spin, &deadline)) break;
  pthread_mutex_lock(&tessel_wake_lock);
  while (atomic_load_explicit(&tessel_pending, memory_order_acquire) != 0) pthread_cond_wait(&tessel_done, &tessel_wake_lock);
  pthread_mutex_unlock(&tessel_wake_lock);
  pthread_mutex_unlock(&tessel_pool_lock);
}

)";

std::string entry_source(const compile::CompiledModel& model, const std::string& name, const Placement& place,
                         const fs::path& blob_file) {
  const Graph& g = model.graph();
  const Module& module = *model.module();
  std::ostringstream c;
  c << "/* Generated by tessel build: runs the model's kernels in the order of its static memory plan. */\n"
    << "#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */\n"
    << "#include <pthread.h>\n#include <sched.h>\n#include <stdatomic.h>\n#include <stdint.h>\n#include "
       "<stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <time.h>\n\n#include "
       "\"model.h\"\n\n";
  const int64_t threads = target_threads(model.target());
  c << "static int tessel_threads = " << threads << ";\n";
  // A kernel's failed check (an index out of range) ends the run with status 2 and a message.
  c << "typedef struct { int64_t check, value; } tessel_check_record;\n"
    << "static _Thread_local char tessel_last_error[1024];\n"
    << "const char* " << name << "_last_error(void) { return tessel_last_error; }\n"
    << "/* messages[2k], messages[2k + 1]: check k + 1's text before and after the value. */\n"
    << "static int tessel_check_failed(const char* kernel, const char* const* messages, int count, tessel_check_record "
       "r) {\n"
    << "  if (r.check >= 1 && r.check <= count)\n"
    << "    snprintf(tessel_last_error, sizeof tessel_last_error, \"kernel '%s': %s%lld%s\", kernel, messages[2 * "
       "(r.check - 1)],\n"
    << "             (long long)r.value, messages[2 * (r.check - 1) + 1]);\n"
    << "  else\n"
    << "    snprintf(tessel_last_error, sizeof tessel_last_error, \"kernel '%s': check %lld failed\", kernel, (long "
       "long)r.check);\n"
    << "  return 2;\n}\n";
  c << "void " << name << "_set_num_threads(int n) { tessel_threads = n < 1 ? 1 : n; }\n\n" << kParallelFor;

  // Kernels by their linker symbols: names need not be C identifiers.
  std::map<std::string, std::string> local_name;
  for (size_t k = 0; k < module.kernels().size(); ++k) {
    std::string local = "tessel_kernel_" + std::to_string(k);
    local_name[module.kernels()[k].name] = local;
    c << "extern void " << local << "(void**) __asm__(" << c_string(module.kernel_symbol(k)) << ");\n";
    const std::vector<std::string>& checks = module.kernels()[k].checks;
    c << "static const char* const " << local << "_checks[" << std::max<size_t>(2 * checks.size(), 1) << "] = {";
    for (size_t m = 0; m < checks.size(); ++m) {
      const size_t at = checks[m].find("{}");
      const std::string before = checks[m].substr(0, at),
                        after = at == std::string::npos ? "" : checks[m].substr(at + 2);
      c << (m ? ", " : "") << c_string(before) << ", " << c_string(after);
    }
    c << (checks.empty() ? "0" : "") << "};\n";
  }
  if (!place.blob().empty()) {
    // .incbin, not a C initializer: a ResNet's weights as a C array take the compiler minutes.
    const std::string path = blob_file.string();
    if (path.find_first_of("\"\\\n") != std::string::npos)
      throw Error(path + ": the temporary folder's name cannot be quoted for .incbin");
    c << "\n__asm__(\".section .rodata\\n.balign 64\\n"
      << name << "_weights:\\n.incbin \\\"" << path << "\\\"\\n.previous\\n\");\n";
    c << "extern const unsigned char W[] __asm__(\"" << name
      << "_weights\") __attribute__((visibility(\"hidden\")));\n";
  }
  c << "\n";
  tensor_infos(c, g, g.inputs, name + "_inputs", "tessel_input_");
  tensor_infos(c, g, g.outputs, name + "_outputs", "tessel_output_");

  c << "size_t " << name << "_arena_bytes(void) { return " << place.arena_bytes() << "u; }\n\n";
  c << "int " << name << "_run_with_arena(const void* const* inputs, void* const* outputs, void* arena) {\n"
    << "  unsigned char* A = (unsigned char*)arena;\n"
    << "  void* in[" << std::max<size_t>(g.inputs.size(), 1) << "];\n";
  c << "  /* The kernels assume 64-byte aligned buffers: stage the inputs that are not. */\n";
  for (size_t k = 0; k < g.inputs.size(); ++k)
    c << "  in[" << k << "] = (void*)inputs[" << k << "];\n"
      << "  if ((uintptr_t)in[" << k << "] % 64) in[" << k << "] = memcpy(A + " << place.staging(k) << ", in[" << k
      << "], " << place.bytes(g.inputs[k]) << "u);\n";
  if (g.inputs.empty()) c << "  (void)inputs; (void)in;\n";
  c << "  /* Outputs are written in place when the caller's buffer is aligned, else in the arena and copied. */\n"
    << "  void* out[" << std::max<size_t>(g.outputs.size(), 1) << "];\n  (void)out;\n";
  for (size_t k = 0; k < g.outputs.size(); ++k)
    if (const std::string* arena = place.direct_output(k))
      c << "  out[" << k << "] = (uintptr_t)outputs[" << k << "] % 64 ? " << *arena << " : outputs[" << k << "];\n";
  for (const compile::CompiledKernel& k : model.kernels()) {
    const std::string& local = local_name.at(k.name);
    c << "  { /* " << k.name << " */\n    tessel_check_record record = {0, 0};\n    void* args[" << k.params.size() + 1
      << "] = {";
    for (size_t p = 0; p < k.params.size(); ++p) c << place.at(k.params[p]) << ", ";
    c << "&record};\n    " << local << "(args);\n"
      << "    if (record.check) return tessel_check_failed(" << c_string(k.name) << ", " << local << "_checks, "
      << module.signature(k.name).checks.size() << ", record);\n  }\n";
  }
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    const std::string from = place.direct_output(k) ? "out[" + std::to_string(k) + "]" : place.at(g.outputs[k]);
    c << "  if (outputs[" << k << "] != " << from << ") memcpy(outputs[" << k << "], " << from << ", "
      << place.bytes(g.outputs[k]) << "u);\n";
  }
  c << "  return 0;\n}\n\n";
  // One arena is kept between calls (allocating and faulting in megabytes per call cost more than
  // a small model's kernels); a call that finds it in use allocates its own, so concurrent calls
  // stay correct.
  c << "static void* tessel_cached_arena;\nstatic char tessel_arena_busy;\n"
    << "__attribute__((destructor)) static void tessel_free_arena(void) { free(tessel_cached_arena); }\n\n"
    << "int " << name << "_run(const void* const* inputs, void* const* outputs) {\n"
    << "  const int mine = !__atomic_test_and_set(&tessel_arena_busy, __ATOMIC_ACQUIRE);\n"
    << "  void* arena = mine ? tessel_cached_arena : 0;\n"
    << "  if (!arena) arena = aligned_alloc(64, " << name << "_arena_bytes());\n"
    << "  if (!arena) {\n    if (mine) __atomic_clear(&tessel_arena_busy, __ATOMIC_RELEASE);\n    return 1;\n  }\n"
    << "  int status = " << name << "_run_with_arena(inputs, outputs, arena);\n"
    << "  if (mine) {\n    tessel_cached_arena = arena;\n    __atomic_clear(&tessel_arena_busy, __ATOMIC_RELEASE);\n"
    << "  } else {\n    free(arena);\n  }\n  return status;\n}\n";
  return c.str();
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) throw Error(path.string() + ": cannot write");
}

}  // namespace

std::string c_identifier(const std::string& name) {
  std::string s;
  for (char c : name) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "model_" + s;
  return s;
}

std::string model_header(const compile::CompiledModel& model, const std::string& raw_name) {
  const std::string name = c_identifier(raw_name), macro = upper(name);
  const Graph& g = model.graph();
  std::ostringstream h;
  h << "/* " << name << ": generated by tessel build\n * target: " << model.target().str() << "\n"
    << " * Inputs and outputs are dense row-major buffers of the listed dtype and shape, in this order;\n"
    << " * any alignment is accepted (64-byte aligned buffers are used in place, others are copied);\n"
    << " * outputs must not overlap inputs. Calls may run concurrently: " << name << "_run keeps one\n"
    << " * arena of " << name << "_arena_bytes() bytes between calls and allocates another for a\n"
    << " * call that finds it in use (" << name << "_run_with_arena takes one, 64-byte aligned). */\n"
    << "#pragma once\n#include <stddef.h>\n#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
    << "#ifndef TESSEL_TENSOR_INFO_DEFINED\n#define TESSEL_TENSOR_INFO_DEFINED\n"
    << "typedef struct {\n  const char* name;\n  const char* dtype; /* \"float32\", \"int64\", ... */\n  int rank;\n"
    << "  const int64_t* shape;\n  size_t bytes;\n} tessel_tensor_info;\n#endif\n\n";
  h << "#define " << macro << "_NUM_INPUTS " << g.inputs.size() << "\n#define " << macro << "_NUM_OUTPUTS "
    << g.outputs.size() << "\n";
  auto describe = [&](const std::vector<ValueId>& values, const char* kind, const char* word) {
    for (size_t k = 0; k < values.size(); ++k) {
      const Value& v = g.value(values[k]);
      std::string m = macro + "_" + kind + "_" + std::to_string(k);
      h << "/* " << word << " " << k << ": " << c_string(v.name) << " " << c_dtype_name(v.type.dtype)
        << shape_str(v.type.shape) << " */\n";
      h << "#define " << m << "_NAME " << c_string(v.name) << "\n#define " << m << "_NUMEL "
        << shape_numel(v.type.shape) << "\n";
    }
  };
  h << "\n";
  describe(g.inputs, "INPUT", "input");
  describe(g.outputs, "OUTPUT", "output");
  h << "\nextern const tessel_tensor_info " << name << "_inputs[];\nextern const tessel_tensor_info " << name
    << "_outputs[];\n\n"
    << "/* Runs the model; returns 0, 1 when the arena cannot be allocated, or 2 when a kernel's check\n"
    << " * failed (an index out of range in the inputs): " << name << "_last_error() says which. */\n"
    << "int " << name << "_run(const void* const* inputs, void* const* outputs);\n"
    << "int " << name << "_run_with_arena(const void* const* inputs, void* const* outputs, void* arena);\n"
    << "size_t " << name << "_arena_bytes(void);\n"
    << "/* The message of this thread's last run that returned 2 (\"kernel 'K': node 'N': index 7 out of\n"
    << " * range [-5, 5) on axis 0\"); empty before any. */\n"
    << "const char* " << name << "_last_error(void);\n"
    << "/* Threads for parallel loops (default "
    << target_threads(model.target())
    << ", from the target); set it before running, not during. */\n"
    << "void " << name << "_set_num_threads(int n);\n\n#ifdef __cplusplus\n}\n#endif\n";
  return h.str();
}

void build_model_library(const compile::CompiledModel& model, const std::string& so_path,
                         const LibraryOptions& options) {
  const std::string name = c_identifier(options.name);
  for (const compile::CompiledKernel& k : model.kernels())
    if (!k.compiled)
      throw Error("kernel '" + k.name + "' has no compiled code (" + k.fallback_reason +
                  "): a library runs without Tessel's reference kernels");
  if (!model.module()) throw Error("the model has no kernels to build");

  TempDir dir("tessel-build");
  const fs::path object = dir.path() / "kernels.o", blob = dir.path() / "weights.bin", entry = dir.path() / "entry.c",
                 header = dir.path() / "model.h", exports = dir.path() / "exports.map",
                 library = dir.path() / "model.so";
  try {
    model.module()->save_object(object.string());
  } catch (const Error& e) {
    rethrow_with_context(e, "saving the kernels' object code");
  }
  Placement place(model);
  write_file(blob, place.blob());
  write_file(header, model_header(model, name));
  write_file(entry, entry_source(model, name, place, blob));
  // Only the entry points leave the library: kernels and tessel_parallel_for stay inside it.
  write_file(exports, "{\n  global: " + name + "_*;\n  local: *;\n};\n");

  // An argument vector, no shell: `cc` is one program (checked), every path one argument.
  if (std::string why = program_problem(options.cc); !why.empty()) throw Error("linking the library: " + why);
  ProgramRun run =
      run_program({options.cc, "-shared", "-fPIC", "-O2", "-std=c11", "-o", library.string(), entry.string(),
                   object.string(), "-Wl,--version-script=" + exports.string(), "-lm", "-lpthread"},
                  {.working_dir = dir.path(), .timeout = std::chrono::minutes(10)});
  if (!run.ok())
    throw Error("linking the library: `" + options.cc + "` failed (" + run.failure() +
                "): " + run.first_message_line());
  std::error_code ec;
  fs::copy_file(library, so_path, fs::copy_options::overwrite_existing, ec);
  if (ec) throw Error(so_path + ": cannot write: " + ec.message());
}

}  // namespace tessel::aot
