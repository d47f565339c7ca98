#pragma once
// The cache condition a kernel is timed in. Timing one kernel alone, repeat after repeat, leaves its
// operands in the caches ("warm"); inside a model the same kernel finds its weights gone, pushed out
// by everything the other kernels touched since its last run, and reads them from memory ("cold").
// The tuner must rank schedules in the condition the model runs them in: a schedule that wins with
// warm weights can lose with cold ones (a 9.4 MB layer4 conv of ResNet-18: ~1.0 ms warm, 1.2 ms in
// the model).
//
//   warm:  [call][call][call]...                          weights stay in L2/L3 between calls
//   cold:  evict(weights) [call]  evict(weights) [call]   each call reads its weights from memory,
//          └ untimed ┘            └ untimed ┘             its activations as the previous call left them
//
// Only the constant operands are evicted: in a model the activations a kernel reads were just
// written by the kernel before it, so they are in the caches there too. (TVM's
// enable_cpu_cache_flush does the same with a guess: it flushes every argument but the first.)
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace tessel::measure {

enum class CacheCondition { kWarm, kCold };

std::string_view cache_condition_name(CacheCondition c);  // "warm", "cold"
std::optional<CacheCondition> parse_cache_condition(std::string_view name);

// Writes back and drops every cache line of `bytes` from every level of every core's caches, so the
// next read of them comes from memory. On x86 each line is flushed (clflush: cost proportional to
// the bytes, ~0.3 ms per MB); elsewhere a buffer larger than the last-level cache is swept instead.
void evict_from_caches(std::span<const std::byte> bytes);

// The host's largest data cache in bytes (the last level), as the OS lists it; 64 MiB if unknown.
size_t host_last_level_cache_bytes();

}  // namespace tessel::measure
