#include "core/measure/cache_condition.h"

#include <unistd.h>

#include <cstdint>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
#endif

namespace tessel::measure {

std::string_view cache_condition_name(CacheCondition c) { return c == CacheCondition::kCold ? "cold" : "warm"; }

std::optional<CacheCondition> parse_cache_condition(std::string_view name) {
  if (name == "warm") return CacheCondition::kWarm;
  if (name == "cold") return CacheCondition::kCold;
  return std::nullopt;
}

size_t host_last_level_cache_bytes() {
  long bytes = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE
  bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (bytes <= 0) bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  return bytes > 0 ? static_cast<size_t>(bytes) : size_t(64) << 20;
}

void evict_from_caches(std::span<const std::byte> bytes) {
  if (bytes.empty()) return;
#if defined(__x86_64__) || defined(__i386__)
  // clflush is in every x86-64 (SSE2) and evicts the line from every core's caches, not only this
  // one's: a parallel kernel's threads find the weights cold too.
  constexpr uintptr_t kLine = 64;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(bytes.data()) & ~(kLine - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(bytes.data()) + bytes.size();
  for (uintptr_t p = begin; p < end; p += kLine) _mm_clflush(reinterpret_cast<const void*>(p));
  _mm_mfence();  // the flushes are done before the timed call starts
#else
  // No portable user-mode flush: sweep a buffer twice the last-level cache, which pushes out
  // everything (the activations too; slower, and colder than a model, but never warmer).
  static std::vector<unsigned char> sweep(2 * host_last_level_cache_bytes());
  for (size_t i = 0; i < sweep.size(); i += 64) sweep[i] = static_cast<unsigned char>(sweep[i] + 1);
  asm volatile("" ::: "memory");
#endif
}

}  // namespace tessel::measure
