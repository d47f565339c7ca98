#include "core/plugin/plugin_probe.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "core/plugin/plugin_api.h"
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

void probe_plugin_registration(const std::string& plugin_name, const std::string& library_path,
                               std::chrono::milliseconds time_limit) {
  IsolatedCallOptions options;
  options.time_limit = time_limit;
  options.capture_stderr = true;
  options.max_result_bytes = 0;
  // In the child: whatever the library registers dies with the child. A missing entry point or a
  // dlopen failure is left for the real load, which reports it with dlerror's text.
  const IsolatedCall call = call_isolated(
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
  const std::string said = call.last_err_line().empty() ? "" : " (its last words: " + call.last_err_line() + ")";
  switch (call.outcome) {
    case IsolatedCall::Outcome::crashed:
      throw Error("loading or registering " + library_path + " crashed in a probe process, " + call.how + said +
                  ": not loaded");
    case IsolatedCall::Outcome::timed_out:
      throw Error("registering " + library_path + " did not return: the probe process " + call.how +
                  " (TESSEL_PLUGIN_PROBE_SECONDS sets the limit): not loaded");
    case IsolatedCall::Outcome::returned:
    case IsolatedCall::Outcome::threw:
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
