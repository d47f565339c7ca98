#include "core/target/cpu_caches.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/support/error.h"

namespace tessel {

namespace {

constexpr int64_t kDefaultCacheBytes[] = {32 * 1024, 1024 * 1024};  // level 1 (data), level 2

// "48K", "1024K", "32M" as sysfs writes a cache's size.
int64_t parse_cache_size(const std::string& text) {
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    return 0;
  }
  std::string unit = text.substr(used);
  if (!unit.empty() && (unit[0] == 'K' || unit[0] == 'k')) return v * 1024;
  if (!unit.empty() && unit[0] == 'M') return v * 1024 * 1024;
  return unit.empty() || std::isspace(static_cast<unsigned char>(unit[0])) ? v : 0;
}

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

int64_t host_cache_bytes(int level) {
  if (level != 1 && level != 2) throw Error("host_cache_bytes: level must be 1 or 2, got " + std::to_string(level));
  for (int index = 0; index < 8; ++index) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::string l = read_line(dir + "level");
    if (l.empty()) break;
    std::string type = read_line(dir + "type");
    if (std::atoi(l.c_str()) != level || type == "Instruction") continue;
    if (int64_t bytes = parse_cache_size(read_line(dir + "size")); bytes > 0) return bytes;
  }
#ifdef _SC_LEVEL1_DCACHE_SIZE
  long v = sysconf(level == 1 ? _SC_LEVEL1_DCACHE_SIZE : _SC_LEVEL2_CACHE_SIZE);
  if (v > 0) return v;
#endif
  return kDefaultCacheBytes[level - 1];
}

std::vector<TargetOptionSpec> cpu_cache_options() {
  auto option = [](int level, const char* name, const char* doc) {
    static const int64_t host[2] = {host_cache_bytes(1), host_cache_bytes(2)};
    return TargetOptionSpec{.name = name,
                            .type = TargetOptionSpec::Type::kInt,
                            .doc = doc,
                            .default_value = [level] { return TargetOptionValue{host[level - 1]}; },
                            .min = 1024,
                            .max = int64_t{1} << 40,
                            .choices = {}};
  };
  return {option(1, "l1_cache_bytes", "Level-1 data cache of one core in bytes (default: the host's)"),
          option(2, "l2_cache_bytes", "Level-2 cache of one core in bytes (default: the host's); sets GEMM packing")};
}

int64_t target_cache_bytes(const Target& t, int level) {
  const char* name = level == 1 ? "l1_cache_bytes" : "l2_cache_bytes";
  if (t.kind_info().find_option(name)) return t.get_int(name);
  return kDefaultCacheBytes[level == 1 ? 0 : 1];
}

}  // namespace tessel
