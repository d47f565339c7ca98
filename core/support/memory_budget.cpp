#include "core/support/memory_budget.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "core/support/error.h"

namespace tessel {

int64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<int64_t>(pages) * static_cast<int64_t>(page);
}

namespace {

// A byte count from a cgroup file: "max" (no limit) or absent gives 0.
int64_t cgroup_limit(const char* path) {
  std::FILE* f = std::fopen(path, "r");
  if (!f) return 0;
  char text[64] = {};
  const bool read = std::fgets(text, sizeof text, f) != nullptr;
  std::fclose(f);
  if (!read) return 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || v == 0 || v >= (1ull << 62)) return 0;  // "max", or v1's "no limit" (2^63 - page)
  return static_cast<int64_t>(v);
}

}  // namespace

int64_t available_memory_bytes(std::string* basis) {
  int64_t available = physical_memory_bytes();
  std::string why = "physical memory";
  auto lower_to = [&](int64_t limit, const char* what) {
    if (limit > 0 && (available <= 0 || limit < available)) available = limit, why = what;
  };
  lower_to(cgroup_limit("/sys/fs/cgroup/memory.max"), "the container's memory limit");
  lower_to(cgroup_limit("/sys/fs/cgroup/memory/memory.limit_in_bytes"), "the container's memory limit");
  struct rlimit as {};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY && as.rlim_cur < (rlim_t{1} << 62))
    lower_to(static_cast<int64_t>(as.rlim_cur), "the address-space limit (ulimit -v)");
  if (basis) *basis = why;
  return available;
}

int64_t default_memory_limit(std::string* why) {
  std::string basis;
  const int64_t available = available_memory_bytes(&basis);
  if (available <= 0) {
    if (why) *why = "16 GiB: the machine's memory is unknown";
    return int64_t{16} << 30;
  }
  if (why) *why = "3/4 of " + basis;
  return available / 4 * 3;
}

int64_t parse_byte_size(std::string_view text) {
  auto bad = [&]() -> Error {
    return Error("'" + printable(text) + "' is not a memory size (examples: 8G, 512M, 1.5GiB, 1000000)");
  };
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) throw bad();
  double number = 0;
  try {
    size_t used = 0;
    number = std::stod(std::string(text.substr(0, i)), &used);
    if (used != i) throw bad();
  } catch (const std::exception&) {
    throw bad();
  }
  std::string unit(text.substr(i));
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && unit.back() == 'B') unit.pop_back();   // "GB", "GIB"
  if (unit.size() == 2 && unit.back() == 'I') unit.pop_back();  // "GI"
  int shift = 0;
  if (unit == "K")
    shift = 10;
  else if (unit == "M")
    shift = 20;
  else if (unit == "G")
    shift = 30;
  else if (unit == "T")
    shift = 40;
  else if (!unit.empty() && unit != "B")
    throw bad();
  const double bytes = std::ldexp(number, shift);
  if (!(bytes >= 1) || bytes > static_cast<double>(std::numeric_limits<int64_t>::max() / 2)) throw bad();
  return static_cast<int64_t>(bytes);
}

std::string byte_size_text(int64_t bytes) {
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double v = static_cast<double>(bytes) / 1024;
  int u = 0;
  while (v >= 1024 && u < 3) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

}  // namespace tessel
