#include "core/plugin/plugin_probe.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "core/plugin/plugin_api.h"
#include "core/plugin/plugin_manager.h"
#include "core/support/error.h"
#include "core/support/isolated_call.h"

namespace fs = std::filesystem;

namespace tessel {

std::string plugin_library_inside_folder(const std::string& description_path, const std::string& library) {
  const fs::path relative(library);
  if (relative.empty() || relative.is_absolute())
    throw Error("\"library\" must be a path relative to the plugin's folder, not '" + library + "'");
  std::error_code ec;
  const fs::path folder = fs::canonical(fs::path(description_path).parent_path(), ec);
  if (ec) throw Error("cannot resolve the plugin's folder: " + ec.message());
  const fs::path resolved = fs::weakly_canonical(folder / relative, ec);
  if (ec) throw Error("cannot resolve library '" + library + "': " + ec.message());
  // Component by component: "/plugins-evil/x.so" shares a string prefix with "/plugins", not a folder.
  const auto [folder_left, resolved_left] = std::mismatch(folder.begin(), folder.end(), resolved.begin(), resolved.end());
  if (folder_left != folder.end() || resolved_left == resolved.end())
    throw Error("library '" + library + "' is " + resolved.string() + ", outside the plugin's folder " +
                folder.string() + ": refused (a description may only name a library beside it)");
  if (!fs::is_regular_file(resolved, ec)) throw Error("library " + resolved.string() + " not found");
  return resolved.string();
}

namespace {

constexpr const char* kPassed = "passed";
constexpr size_t kMaxRemembered = 256;  // lines; the oldest go first
constexpr std::uintmax_t kMaxCacheBytes = 1 << 20;

std::string cache_file() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  if (xdg && *xdg == '/') return std::string(xdg) + "/tessel/plugin-probes";
  if (home && *home == '/') return std::string(home) + "/.cache/tessel/plugin-probes";
  return {};
}

// What identifies one build of a library: a rebuild or a replacement changes at least one field.
std::string library_key(const std::string& library_path) {
  struct stat st {};
  if (::stat(library_path.c_str(), &st) != 0) return {};
  return library_path + "|" + std::to_string(st.st_size) + "|" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + "|" + std::to_string(st.st_ino) + "|" + core_version();
}

// The remembered verdicts, oldest first: "KEY\tVERDICT" lines. A damaged file reads as empty.
std::vector<std::pair<std::string, std::string>> read_verdicts(const std::string& file) {
  std::vector<std::pair<std::string, std::string>> verdicts;
  std::error_code ec;
  if (file.empty() || !fs::is_regular_file(file, ec) || fs::file_size(file, ec) > kMaxCacheBytes) return verdicts;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    const size_t tab = line.find('\t');
    if (tab != std::string::npos) verdicts.emplace_back(line.substr(0, tab), line.substr(tab + 1));
  }
  return verdicts;
}

// Rewrites the file with `key` → `verdict` last; through a temporary file and a rename, so another
// `tessel` reading it at the same moment sees the old or the new file, never half of one. A cache
// that cannot be written is no error: the next start probes again.
void remember_verdict(const std::string& file, const std::string& key, const std::string& verdict) {
  if (file.empty() || key.find_first_of("\t\n") != std::string::npos || verdict.find('\n') != std::string::npos)
    return;
  auto verdicts = read_verdicts(file);
  std::erase_if(verdicts, [&](const auto& v) { return v.first == key; });
  verdicts.emplace_back(key, verdict);
  if (verdicts.size() > kMaxRemembered) verdicts.erase(verdicts.begin(), verdicts.end() - kMaxRemembered);
  std::error_code ec;
  fs::create_directories(fs::path(file).parent_path(), ec);
  const std::string temporary = file + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    for (const auto& [k, v] : verdicts) out << k << '\t' << v << '\n';
    if (!out) return fs::remove(temporary, ec), void();
  }
  fs::rename(temporary, file, ec);
  if (ec) fs::remove(temporary, ec);
}

// In the child: whatever the library registers dies with the child. A missing entry point or a
// dlopen failure is left for the real load, which reports it with dlerror's text.
IsolatedCall run_probe(const std::string& plugin_name, const std::string& library_path,
                       std::chrono::milliseconds time_limit) {
  IsolatedCallOptions options;
  options.time_limit = time_limit;
  options.capture_stderr = true;
  options.max_result_bytes = 0;
  return call_isolated(
      [&]() -> std::string {
        void* handle = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) return {};
        auto entry = reinterpret_cast<TesselPluginRegisterFn>(dlsym(handle, "tessel_plugin_register"));
        if (!entry) return {};
        PluginContext context(plugin_name);
        entry(&context);
        return {};
      },
      options);
}

}  // namespace

void probe_plugin_registration(const std::string& plugin_name, const std::string& library_path,
                               std::chrono::milliseconds time_limit) {
  const std::string file = cache_file(), key = library_key(library_path);
  if (!key.empty())
    for (const auto& [k, verdict] : read_verdicts(file))
      if (k == key) {
        if (verdict == kPassed) return;
        throw Error(verdict + " (remembered in " + file + " from an earlier start; replace the library to probe again)");
      }
  const IsolatedCall call = run_probe(plugin_name, library_path, time_limit);
  const std::string said = call.last_err_line().empty() ? "" : " (its last words: " + call.last_err_line() + ")";
  switch (call.outcome) {
    case IsolatedCall::Outcome::crashed: {
      const std::string verdict =
          "loading or registering " + library_path + " crashed in a probe process, " + call.how + said + ": not loaded";
      if (!key.empty()) remember_verdict(file, key, verdict);
      throw Error(verdict);
    }
    case IsolatedCall::Outcome::timed_out:
      throw Error("registering " + library_path + " did not return: the probe process " + call.how +
                  " (TESSEL_PLUGIN_PROBE_SECONDS sets the limit): not loaded");
    case IsolatedCall::Outcome::returned:
    case IsolatedCall::Outcome::threw:
      if (!key.empty()) remember_verdict(file, key, kPassed);
      return;
    case IsolatedCall::Outcome::not_started:
      return;
  }
}


std::chrono::milliseconds plugin_probe_time_limit() {
  if (const char* text = std::getenv("TESSEL_PLUGIN_PROBE_SECONDS")) {
    char* end = nullptr;
    const double seconds = std::strtod(text, &end);
    if (end != text && *end == '\0' && seconds > 0 && seconds <= 3600)
      return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
  }
  return std::chrono::seconds(30);
}

}  // namespace tessel
