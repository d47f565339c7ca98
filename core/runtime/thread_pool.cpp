#include "core/runtime/thread_pool.h"

#include <memory>
#include <utility>

namespace tessel {

namespace {
thread_local bool t_inside_parallel = false;

// Enough chunks per thread that a late thread's share is taken by the others in pieces, few enough
// that claiming (one atomic add) and the chunk call cost nothing next to a kernel's loop body.
constexpr int64_t kChunksPerThread = 4;

void chunk_bounds(int64_t extent, int64_t parts, int64_t index, int64_t* begin, int64_t* end) {
  int64_t base = extent / parts, extra = extent % parts;
  *begin = index * base + std::min<int64_t>(index, extra);
  *end = *begin + base + (index < extra ? 1 : 0);
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// How long a waiting thread spins before it sleeps. Kernels of a model follow each other within
// microseconds, and within a loop one thread may finish its chunks a few hundred microseconds
// before the other (a conv's last chunk); a thread that went to sleep meanwhile is woken through
// the kernel, which on a VM takes tens of microseconds (ResNet-18 at 2 threads, session 11: with a
// fixed 2048 rounds, about 100 us, the worker started its first chunk 23-84 us late in 8 of 22
// kernels). Every 64th round checks the clock and yields the core, so that on an oversubscribed
// machine a thread that has work (another worker, the caller) gets it soon.
constexpr auto kSpinTime = std::chrono::microseconds(1000);

// Spins until done() or kSpinTime has passed; whether done() became true.
template <class Done>
bool spin_until(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (int spin = 1;; ++spin) {
    if (done()) return true;
    if (spin % 64 != 0) {
      cpu_relax();
      continue;
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::yield();
  }
}
}  // namespace

ThreadPool::ThreadPool(int num_threads) : next_(static_cast<size_t>(std::max(num_threads, 1))) {
  for (int i = 1; i < std::max(num_threads, 1); ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

uint64_t ThreadPool::wait_for_generation(uint64_t seen) {
  if (spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; }))
    return generation_.load(std::memory_order_acquire);
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
  return generation_.load(std::memory_order_acquire);
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;  // workers start before the first loop
  while (true) {
    seen = wait_for_generation(seen);
    if (stop_.load(std::memory_order_acquire)) return;
    run_chunks(index, *body_);
    // Every worker acknowledges every loop; the last one wakes the caller if it went to sleep.
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard lock(mutex_);
      done_.notify_one();
    }
  }
}

int64_t ThreadPool::claim_from(int owner) {
  const int64_t end = std::min(chunk_count_, (owner + 1) * chunks_per_thread_);
  if (next_[owner].next.load(std::memory_order_relaxed) >= end) return -1;  // spare the cache line
  const int64_t chunk = next_[owner].next.fetch_add(1, std::memory_order_relaxed);
  return chunk < end ? chunk : -1;
}

void ThreadPool::run_chunks(int thread, const std::function<void(int64_t, int64_t)>& body) {
  const bool tracing = tracing_.load(std::memory_order_relaxed);
  const int threads = num_threads();
  t_inside_parallel = true;
  int victim = thread;  // its own run first, then the others' in turn
  for (;;) {
    int64_t chunk = claim_from(victim);
    for (int tried = 1; chunk < 0 && tried < threads; ++tried) {
      victim = (victim + 1) % threads;
      chunk = claim_from(victim);
    }
    if (chunk < 0) break;
    int64_t begin, end;
    chunk_bounds(extent_, chunk_count_, chunk, &begin, &end);
    const auto start = tracing ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    body(begin, end);
    if (tracing) {
      const auto stop = std::chrono::steady_clock::now();
      std::lock_guard lock(trace_mutex_);
      trace_.push_back({thread, start, stop});
    }
  }
  t_inside_parallel = false;
}

std::vector<ThreadPool::ChunkSpan> ThreadPool::take_trace() {
  std::lock_guard lock(trace_mutex_);
  return std::exchange(trace_, {});
}

void ThreadPool::parallel_for(int64_t extent, const std::function<void(int64_t, int64_t)>& body) {
  if (extent <= 0) return;
  if (workers_.empty() || t_inside_parallel || extent == 1) {
    body(0, extent);
    return;
  }
  // One loop at a time: a second thread calling in meanwhile runs its loop serially.
  std::unique_lock busy(busy_, std::try_to_lock);
  if (!busy.owns_lock()) {
    body(0, extent);
    return;
  }
  body_ = &body;  // published to the workers by the release below
  extent_ = extent;
  chunk_count_ = std::min(extent, kChunksPerThread * num_threads());
  chunks_per_thread_ = (chunk_count_ + num_threads() - 1) / num_threads();
  for (int t = 0; t < num_threads(); ++t) next_[t].next.store(t * chunks_per_thread_, std::memory_order_relaxed);
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  {
    std::lock_guard lock(mutex_);  // a worker about to sleep either sees the new generation or is woken
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  run_chunks(0, body);
  if (spin_until([&] { return pending_.load(std::memory_order_acquire) == 0; })) return;
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return pending_.load(std::memory_order_acquire) == 0; });
}

namespace {
std::unique_ptr<ThreadPool>& global_pool() {
  static std::unique_ptr<ThreadPool> pool = std::make_unique<ThreadPool>(1);
  return pool;
}
}  // namespace

ThreadPool& ThreadPool::global() { return *global_pool(); }

void ThreadPool::set_global_threads(int num_threads) {
  if (global_pool()->num_threads() != num_threads) global_pool() = std::make_unique<ThreadPool>(num_threads);
}

}  // namespace tessel

extern "C" void tessel_parallel_for(int64_t extent, TesselParallelChunk chunk, void* env) {
  tessel::ThreadPool::global().parallel_for(extent, [&](int64_t b, int64_t e) { chunk(b, e, env); });
}
