// The thread pool behind parallel loops: every index covered exactly once, nested loops serial.
#include <QtTest>
#include <atomic>
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
    pool.parallel_for(4, [&](int64_t, int64_t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      std::lock_guard lock(m);
      ids.insert(std::this_thread::get_id());
    });
    QCOMPARE(ids.size(), size_t{4});
  }
  void nested_loops_run_serially_inside() {
    ThreadPool pool(3);
    std::atomic<int64_t> sum{0};
    pool.parallel_for(3, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) pool.parallel_for(10, [&](int64_t bb, int64_t ee) { sum += ee - bb; });
    });
    QCOMPARE(sum.load(), int64_t{30});
  }
  // The profiler's per-thread timeline: each chunk leaves a span naming its thread, only while tracing.
  void tracing_records_one_span_per_chunk_and_thread() {
    tessel::ThreadPool pool(3);
    std::atomic<int> sum{0};
    pool.parallel_for(9, [&](int64_t b, int64_t e) { sum += static_cast<int>(e - b); });
    QVERIFY(pool.take_trace().empty());  // off by default
    pool.set_tracing(true);
    pool.parallel_for(9, [&](int64_t b, int64_t e) { sum += static_cast<int>(e - b); });
    pool.parallel_for(2, [&](int64_t b, int64_t e) { sum += static_cast<int>(e - b); });  // one thread idle
    std::vector<tessel::ThreadPool::ChunkSpan> spans = pool.take_trace();
    QCOMPARE(spans.size(), size_t{5});
    std::set<int> threads;
    for (const auto& s : spans) {
      threads.insert(s.thread);
      QVERIFY(s.end >= s.begin);
    }
    QCOMPARE(threads, (std::set<int>{0, 1, 2}));
    QVERIFY(pool.take_trace().empty());  // taken
    QCOMPARE(sum.load(), 20);
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
