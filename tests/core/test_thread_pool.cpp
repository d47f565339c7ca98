// The thread pool behind parallel loops: every index covered exactly once, nested loops serial.
#include <QtTest>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "core/runtime/thread_pool.h"

using namespace tessel;

class TestThreadPool : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void covers_every_index_once() {
    for (int threads : {1, 2, 3, 8}) {
      ThreadPool pool(threads);
      for (int64_t extent : {0, 1, 2, 7, 100, 1001}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(extent));
        pool.parallel_for(extent, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) hits[i]++;
        });
        for (int64_t i = 0; i < extent; ++i) QCOMPARE(hits[i].load(), 1);
      }
    }
  }
  // Loops back to back: each worker must take each loop's chunk exactly once (a worker that
  // confused one loop's generation with the next would run a chunk twice or not at all).
  void many_loops_back_to_back() {
    ThreadPool pool(3);
    std::vector<std::atomic<int>> hits(30);
    for (int loop = 0; loop < 2000; ++loop)
      pool.parallel_for(30, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[i]++;
      });
    for (auto& h : hits) QCOMPARE(h.load(), 2000);
  }
  // Two threads using one pool at once: one gets the workers, the other runs its loop serially;
  // both loops cover every index exactly once.
  void two_callers_at_once() {
    ThreadPool pool(2);
    std::vector<std::atomic<int>> a(64), b(64);
    auto caller = [&pool](std::vector<std::atomic<int>>& hits) {
      for (int loop = 0; loop < 2000; ++loop)
        pool.parallel_for(64, [&](int64_t lo, int64_t hi) {
          for (int64_t i = lo; i < hi; ++i) hits[i]++;
        });
    };
    std::thread other(caller, std::ref(b));
    caller(a);
    other.join();
    for (size_t i = 0; i < 64; ++i) {
      QCOMPARE(a[i].load(), 2000);
      QCOMPARE(b[i].load(), 2000);
    }
  }
  void uses_several_threads() {
    ThreadPool pool(4);
    std::mutex m;
    std::set<std::thread::id> ids;
    pool.parallel_for(16, [&](int64_t, int64_t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      std::lock_guard lock(m);
      ids.insert(std::this_thread::get_id());
    });
    QVERIFY2(ids.size() >= 2, "the workers took no chunk of 16 slow ones");
  }
  // Chunks are owned, then stolen: a worker held up in its first chunk (as one that has no core on
  // a busy machine) leaves the rest of its run to the caller, which does not wait for it.
  void a_held_up_worker_leaves_its_share_to_the_caller() {
    ThreadPool pool(2);
    const std::thread::id caller = std::this_thread::get_id();
    std::atomic<int> caller_chunks{0}, worker_chunks{0};
    std::atomic<bool> worker_held{false};
    pool.set_tracing(true);
    pool.parallel_for(8, [&](int64_t, int64_t) {
      if (std::this_thread::get_id() == caller) {
        ++caller_chunks;
        return;
      }
      ++worker_chunks;
      if (!worker_held.exchange(true)) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    });
    QCOMPARE(caller_chunks.load() + worker_chunks.load(), 8);
    // The timeline names who ran each chunk.
    int worker_spans = 0;
    for (const auto& span : pool.take_trace()) worker_spans += span.thread == 1;
    QCOMPARE(worker_spans, worker_chunks.load());
    QVERIFY2(caller_chunks.load() >= 6, qPrintable(QString("the caller ran %1 of 8 chunks").arg(caller_chunks.load())));
  }
  // Each thread owns a contiguous run of chunks and starts there: the caller at the first, the
  // worker at the middle, so consecutive loops give each thread the same indices (the rows it wrote
  // in the kernel before). The caller is slower here, so the worker, done with its own run, takes
  // the caller's unclaimed chunks from where the caller left off. (Slow chunks both: a spinning
  // worker with empty chunks would claim all eight while the caller is still waking it.)
  void each_thread_starts_with_its_own_run() {
    ThreadPool pool(2);
    const std::thread::id caller = std::this_thread::get_id();
    std::mutex m;
    std::vector<int64_t> caller_begins, worker_begins;
    pool.parallel_for(8, [&](int64_t b, int64_t) {
      const bool by_caller = std::this_thread::get_id() == caller;
      {
        std::lock_guard lock(m);
        (by_caller ? caller_begins : worker_begins).push_back(b);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(by_caller ? 50 : 20));
    });
    QVERIFY2(!caller_begins.empty() && !worker_begins.empty(), qPrintable(QString("caller %1 chunks, worker %2").arg(caller_begins.size()).arg(worker_begins.size())));
    QCOMPARE(caller_begins.front(), int64_t{0});
    QCOMPARE(worker_begins.front(), int64_t{4});
    QCOMPARE(caller_begins.size() + worker_begins.size(), size_t{8});
    // The worker's own run first (4..7), then the caller's leftovers, in order.
    for (size_t k = 1; k < worker_begins.size(); ++k)
      QVERIFY2(worker_begins[k] == worker_begins[k - 1] + 1 || worker_begins[k] < 4,
               qPrintable(QString("worker chunk %1 after %2").arg(worker_begins[k]).arg(worker_begins[k - 1])));
  }
  void nested_loops_run_serially_inside() {
    ThreadPool pool(3);
    std::atomic<int64_t> sum{0};
    pool.parallel_for(3, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) pool.parallel_for(10, [&](int64_t bb, int64_t ee) { sum += ee - bb; });
    });
    QCOMPARE(sum.load(), int64_t{30});
  }
  // The profiler's per-thread timeline: each chunk leaves a span naming the pool thread that ran
  // it, only while tracing. Up to 4 chunks per thread: 9 iterations on 3 threads are 9 chunks.
  void tracing_records_one_span_per_chunk() {
    tessel::ThreadPool pool(3);
    std::atomic<int> sum{0};
    pool.parallel_for(9, [&](int64_t b, int64_t e) { sum += static_cast<int>(e - b); });
    QVERIFY(pool.take_trace().empty());  // off by default
    pool.set_tracing(true);
    pool.parallel_for(9, [&](int64_t b, int64_t e) { sum += static_cast<int>(e - b); });
    pool.parallel_for(2, [&](int64_t b, int64_t e) { sum += static_cast<int>(e - b); });
    pool.parallel_for(100, [&](int64_t b, int64_t e) { sum += static_cast<int>(e - b); });  // 12 chunks
    std::vector<tessel::ThreadPool::ChunkSpan> spans = pool.take_trace();
    QCOMPARE(spans.size(), size_t{9 + 2 + 12});
    for (const auto& s : spans) {
      QVERIFY(s.thread >= 0 && s.thread < 3);
      QVERIFY(s.end >= s.begin);
    }
    QVERIFY(pool.take_trace().empty());  // taken
    QCOMPARE(sum.load(), 9 + 9 + 2 + 100);
  }

  void c_entry_point_uses_global_pool() {
    ThreadPool::set_global_threads(2);
    std::vector<int> out(50, 0);
    tessel_parallel_for(
        50,
        [](int64_t b, int64_t e, void* env) {
          auto* v = static_cast<std::vector<int>*>(env);
          for (int64_t i = b; i < e; ++i) (*v)[i] = static_cast<int>(i);
        },
        &out);
    for (int i = 0; i < 50; ++i) QCOMPARE(out[i], i);
    ThreadPool::set_global_threads(1);
  }
};

QTEST_APPLESS_MAIN(TestThreadPool)
#include "test_thread_pool.moc"
