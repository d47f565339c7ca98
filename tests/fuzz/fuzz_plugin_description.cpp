// Plugin descriptions (core/plugin/plugin_manager.h): the JSON beside a backend's library, which
// anyone who can write to a plugin folder may have written. An input is the description's text in
// a private folder holding nothing else; the loader must report every input as one plugin's
// status (loaded or not, with a one-line reason), never throw, and never load a library from
// outside the folder (there is none inside it, so none may load at all).
#include <stdlib.h>

#include <fstream>
#include <string>

#include "core/plugin/plugin_manager.h"
#include "tests/fuzz/fuzz_common.h"

using namespace tessel;

namespace {

std::string g_folder;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char folder[] = "/tmp/tessel-fuzz-plugin-XXXXXX";
  if (!::mkdtemp(folder)) std::abort();
  g_folder = folder;
  // Probe verdicts (plugin_probe.h) go to the private folder, not the user's cache.
  ::setenv("XDG_CACHE_HOME", folder, 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  {
    std::ofstream(g_folder + "/fuzzed.json", std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), size);
  }
  PluginManager manager;  // a fresh one: the global registries stay untouched unless a plugin loads
  const std::vector<PluginStatus>& seen = manager.load_all({g_folder});
  fuzz::fuzz_check(seen.size() == 1, "one description did not give one status");
  fuzz::fuzz_check(!seen[0].loaded, "a plugin loaded from a folder with no library in it", seen[0].library_path);
  fuzz::fuzz_check(!seen[0].error.empty(), "a plugin that did not load has no reason");
  fuzz::fuzz_check(seen[0].error.find('\n') == std::string::npos, "a plugin's reason is not one line",
                   seen[0].error);
  return 0;
}
