#pragma once
// A fixed pool of worker threads for parallel loops. Generated code calls the C entry point
// tessel_parallel_for (below) with a chunk function; the pool splits [0, extent) into
// kChunksPerThread contiguous chunks per thread, and each thread owns a contiguous run of them:
//
//   extent = 12, threads = 2:  chunks [0..2) [2..4) [4..6) | [6..8) [8..10) [10..12)
//                              owned by the caller          | owned by the worker
//   each thread claims its own chunks front to back; one that runs out claims the next unclaimed
//   chunk of another thread's run (stealing), so a late worker's share is taken by the others.
//
// Why owned runs rather than one shared counter: consecutive kernels split their loops the same
// way, so the rows a thread writes in one kernel are the rows it reads in the next, from its own
// cache. With a shared counter the chunks fell to whoever came first, and on the 2-core Xeon a
// conv's worker read about half its input from the other core's cache: its chunks ran 1.3-1.5x
// slower than the caller's (tests/bench/RESULTS.md, session 11).
// The calling thread works too, so a pool of N threads starts N-1 workers. Nested parallel loops
// run serially inside the outer one, and so does a loop started by a second thread while one is in
// flight.
//
//   caller: body/extent/chunks; runs reset; pending = workers; ─▶ workers (spinning briefly,
//           generation++; claim own chunks, then steal;           then asleep)
//           spin (then sleep) until pending == 0 ◀── each worker: claim own chunks, then steal;
//                                                                  pending--
//
// The libraries `tessel build` writes carry the same design in C (core/aot/model_library.cpp).
//
// While tracing is on, every chunk leaves a span (which pool thread, when it started and ended):
// the profiler's per-thread timeline. Off, it costs one relaxed atomic load per loop.
#include <atomic>
#include <chrono>
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

  struct ChunkSpan {
    int thread = 0;  // 0: the calling thread; k: worker k
    std::chrono::steady_clock::time_point begin, end;
  };

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }
  void set_tracing(bool on) { tracing_.store(on, std::memory_order_relaxed); }
  // The spans recorded since the last call (in no particular order).
  std::vector<ChunkSpan> take_trace();
  // Runs body(begin, end) over chunks covering [0, extent); returns when all are done.
  void parallel_for(int64_t extent, const std::function<void(int64_t begin, int64_t end)>& body);

  // The pool that tessel_parallel_for uses; set_num_threads replaces it (not while a loop runs).
  static ThreadPool& global();
  static void set_global_threads(int num_threads);

 private:
  void worker_loop(int index);
  uint64_t wait_for_generation(uint64_t seen);  // spins, then sleeps on wake_
  // Claims and runs chunks of the loop in flight until none is left.
  void run_chunks(int thread, const std::function<void(int64_t, int64_t)>& body);
  std::vector<std::thread> workers_;
  std::mutex busy_;   // held by the loop in flight
  std::mutex mutex_;  // with wake_: sleeping workers; with done_: a sleeping caller
  std::condition_variable wake_, done_;
  // The loop in flight, written before generation_ is bumped (release) and read after it is seen.
  const std::function<void(int64_t, int64_t)>* body_ = nullptr;
  int64_t extent_ = 0;
  int64_t chunk_count_ = 0;
  // Thread t owns chunks [t * chunks_per_thread_, (t + 1) * chunks_per_thread_) ∩ [0, chunk_count_);
  // next_[t] is the first of them not yet claimed (by t or a thief). Each on its own cache line.
  struct alignas(64) RunCursor {
    std::atomic<int64_t> next{0};
  };
  int64_t chunks_per_thread_ = 0;
  std::vector<RunCursor> next_;
  // The next chunk of thread `owner`'s run, or -1 when its run is claimed.
  int64_t claim_from(int owner);
  std::atomic<uint64_t> generation_{0};  // one per loop (and one to stop)
  std::atomic<int> pending_{0};          // workers that have not yet acknowledged the loop
  std::atomic<bool> stop_{false};
  std::atomic<bool> tracing_{false};
  std::mutex trace_mutex_;
  std::vector<ChunkSpan> trace_;
};

}  // namespace tessel

extern "C" {
// The ABI generated kernels call for a parallel loop: chunk(begin, end, env) over [0, extent).
typedef void (*TesselParallelChunk)(int64_t begin, int64_t end, void* env);
void tessel_parallel_for(int64_t extent, TesselParallelChunk chunk, void* env);
}
