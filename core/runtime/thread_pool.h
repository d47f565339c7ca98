#pragma once
// A fixed pool of worker threads for parallel loops. Generated code calls the C entry point
// tessel_parallel_for (below) with a chunk function; the pool splits [0, extent) into one
// contiguous chunk per thread:
//
//   extent = 10, threads = 3:   [0..4) → caller   [4..7) → worker 1   [7..10) → worker 2
//
// The calling thread takes the first chunk, so a pool of N threads starts N-1 workers. Nested
// parallel loops run serially inside the outer one.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tessel {

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }
  // Runs body(begin, end) over chunks covering [0, extent); returns when all are done.
  void parallel_for(int64_t extent, const std::function<void(int64_t begin, int64_t end)>& body);

  // The pool that tessel_parallel_for uses; set_num_threads replaces it (not while a loop runs).
  static ThreadPool& global();
  static void set_global_threads(int num_threads);

 private:
  void worker_loop(int index);
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int64_t, int64_t)>* body_ = nullptr;
  int64_t extent_ = 0;
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
};

}  // namespace tessel

extern "C" {
// The ABI generated kernels call for a parallel loop: chunk(begin, end, env) over [0, extent).
typedef void (*TesselParallelChunk)(int64_t begin, int64_t end, void* env);
void tessel_parallel_for(int64_t extent, TesselParallelChunk chunk, void* env);
}
