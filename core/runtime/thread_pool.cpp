#include "core/runtime/thread_pool.h"

#include <memory>
#include <utility>

namespace tessel {

namespace {
thread_local bool t_inside_parallel = false;

void chunk_bounds(int64_t extent, int parts, int index, int64_t* begin, int64_t* end) {
  int64_t base = extent / parts, extra = extent % parts;
  *begin = index * base + std::min<int64_t>(index, extra);
  *end = *begin + base + (index < extra ? 1 : 0);
}
}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  for (int i = 1; i < std::max(num_threads, 1); ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  while (true) {
    const std::function<void(int64_t, int64_t)>* body;
    int64_t extent;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      body = body_;
      extent = extent_;
    }
    run_chunk(index, extent, *body);
    {
      std::lock_guard lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
    }
  }
}

void ThreadPool::run_chunk(int thread, int64_t extent, const std::function<void(int64_t, int64_t)>& body) {
  int64_t begin, end;
  chunk_bounds(extent, num_threads(), thread, &begin, &end);
  if (begin >= end) return;
  const bool tracing = tracing_.load(std::memory_order_relaxed);
  const auto start = tracing ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  t_inside_parallel = true;
  body(begin, end);
  t_inside_parallel = false;
  if (tracing) {
    const auto stop = std::chrono::steady_clock::now();
    std::lock_guard lock(trace_mutex_);
    trace_.push_back({thread, start, stop});
  }
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
  {
    std::lock_guard lock(mutex_);
    body_ = &body;
    extent_ = extent;
    pending_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  run_chunk(0, extent, body);
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return pending_ == 0; });
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
