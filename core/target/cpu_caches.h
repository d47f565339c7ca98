#pragma once
// The data caches of a CPU target, which default schedules block for (GEMM panels). A CPU kind that
// generates code declares them as options (`llvm` does), filled in from the host by default, so a
// schedule for another machine's caches is one -l2_cache_bytes=N away. Kinds without them (`ref`,
// `c`) get a 32 KiB / 1 MiB core.
#include <cstdint>
#include <vector>

#include "core/target/target.h"

namespace tessel {

// The size in bytes of the host's level-1 data or level-2 cache of one core (level 1 or 2), read
// from /sys/devices/system/cpu/cpu0/cache, else sysconf, else 32 KiB / 1 MiB.
int64_t host_cache_bytes(int level);

// The options l1_cache_bytes and l2_cache_bytes (defaults: the host's) that CPU kinds declare.
std::vector<TargetOptionSpec> cpu_cache_options();

// The target's l1_cache_bytes / l2_cache_bytes (level 1 or 2); 32 KiB / 1 MiB for kinds without
// the option.
int64_t target_cache_bytes(const Target& t, int level);

}  // namespace tessel
