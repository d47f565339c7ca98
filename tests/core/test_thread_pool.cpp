// The thread pool behind parallel loops: every index covered exactly once, nested loops serial.
#include <QtTest>

#include <atomic>
#include <set>

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
    tessel_parallel_for(50, [](int64_t b, int64_t e, void* env) {
      auto* v = static_cast<std::vector<int>*>(env);
      for (int64_t i = b; i < e; ++i) (*v)[i] = static_cast<int>(i);
    }, &out);
    for (int i = 0; i < 50; ++i) QCOMPARE(out[i], i);
    ThreadPool::set_global_threads(1);
  }
};

QTEST_APPLESS_MAIN(TestThreadPool)
#include "test_thread_pool.moc"
