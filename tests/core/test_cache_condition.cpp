// The measuring process's cold condition (core/measure/cache_condition.h) really evicts: a buffer
// walked in a random order, so that each load waits for the one before (no prefetcher hides a
// miss), takes longer right after evict_from_caches than right after another walk. The buffer is
// half the L2: warm, it stays in this core's own cache even on a machine whose other processes
// sweep the shared L3 (a buffer larger than the L2 measured 6.2 ms warm and 7.5 ms cold at load
// average 9: the others had evicted it between two walks; half the L2, 0.12 ms and 1.03 ms).
// Kernels with weights larger than the L2 are measured cold and warm in tests/bench/RESULTS.md
// (session 10, tuning in the model's condition).
#include <QtTest>
#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <vector>

#include "core/measure/cache_condition.h"
#include "core/target/cpu_caches.h"

using namespace tessel;
using namespace tessel::measure;

namespace {

struct alignas(64) Line {
  size_t next = 0;
};

// One cycle through every line, in a random order.
std::vector<Line> random_cycle(size_t lines) {
  std::vector<size_t> order(lines);
  std::iota(order.begin(), order.end(), size_t{0});
  std::shuffle(order.begin(), order.end(), std::mt19937_64(7));
  std::vector<Line> cycle(lines);
  for (size_t i = 0; i < lines; ++i) cycle[order[i]].next = order[(i + 1) % lines];
  return cycle;
}

double walk_ms(const std::vector<Line>& cycle) {
  const auto start = std::chrono::steady_clock::now();
  size_t at = 0;
  for (size_t i = 0; i < cycle.size(); ++i) at = cycle[at].next;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (at >= cycle.size()) qFatal("the walk left the buffer");  // and uses `at`, so the loop stays
  return ms;
}

}  // namespace

class TestCacheCondition : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void names_round_trip() {
    for (CacheCondition c : {CacheCondition::kWarm, CacheCondition::kCold})
      QVERIFY(parse_cache_condition(cache_condition_name(c)) == c);
    QVERIFY(!parse_cache_condition("lukewarm"));
    QVERIFY(!parse_cache_condition(""));
  }

  void evicted_bytes_are_read_from_memory() {
    const size_t bytes = static_cast<size_t>(host_cache_bytes(2)) / 2;
    const std::vector<Line> cycle = random_cycle(bytes / sizeof(Line));
    const std::span<const std::byte> span(reinterpret_cast<const std::byte*>(cycle.data()), bytes);
    walk_ms(cycle);
    double warm = 1e9, cold = 1e9;
    for (int repeat = 0; repeat < 7; ++repeat) {  // minima: the machine is shared
      warm = std::min(warm, walk_ms(cycle));
      evict_from_caches(span);
      cold = std::min(cold, walk_ms(cycle));
    }
    QVERIFY2(cold > 2 * warm,
             qPrintable(
                 QString("%1 KiB walked: %2 ms warm, %3 ms after the eviction").arg(bytes / 1024).arg(warm).arg(cold)));
  }

  void evicting_nothing_or_a_part_of_a_line_is_harmless() {
    evict_from_caches({});
    const char text[] = "x";
    evict_from_caches(std::as_bytes(std::span(text)));
    QCOMPARE(text[0], 'x');  // evicting writes back, it never loses data
  }
};

QTEST_APPLESS_MAIN(TestCacheCondition)
#include "test_cache_condition.moc"
