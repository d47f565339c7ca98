#include "core/plugin/plugin_manager.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/plugin/plugin_api.h"
#include "core/plugin/plugin_probe.h"
#include "core/support/error.h"

namespace fs = std::filesystem;

namespace tessel {

std::string core_version() { return TESSEL_VERSION; }

namespace {

// A plugin description is a few hundred bytes; anything far larger is not one (or is /dev/zero).
constexpr std::uintmax_t kMaxDescriptionBytes = 1 << 20;

bool parse_version(const std::string& text, int* major, int* minor) {
  return std::sscanf(text.c_str(), "%d.%d", major, minor) == 2;
}

std::vector<std::string> string_list(const nlohmann::json& provides, const char* key) {
  if (!provides.contains(key)) return {};
  const auto& v = provides.at(key);
  if (!v.is_array() || !std::all_of(v.begin(), v.end(), [](const auto& e) { return e.is_string(); }))
    throw Error(std::string("\"provides.") + key + "\" must be a list of strings");
  return v.get<std::vector<std::string>>();
}

std::string required_string(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j.at(key).is_string()) throw Error(std::string("missing string field \"") + key + "\"");
  return j.at(key).get<std::string>();
}

template <class T>
bool same_set(std::vector<T> a, std::vector<T> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "nothing" : s;
}

// A status is one line of `tessel targets`: a control character from the description (a library
// name holding a newline) is shown escaped rather than breaking the listing.
std::string one_line(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) {
      out += c;
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(c));
      out += escaped;
    }
  }
  return out;
}

}  // namespace

bool core_version_compatible(const std::string& required, std::string* why) {
  int rmaj, rmin, cmaj, cmin;
  if (!parse_version(required, &rmaj, &rmin)) {
    *why = "core_version \"" + required + "\" is not of the form MAJOR.MINOR";
    return false;
  }
  parse_version(core_version(), &cmaj, &cmin);
  if (rmaj != cmaj || rmin > cmin) {
    *why = "needs core " + required + ", this is core " + core_version();
    return false;
  }
  return true;
}

PluginManager& PluginManager::global() {
  static PluginManager m;
  return m;
}

std::vector<std::string> PluginManager::plugin_search_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("TESSEL_PLUGIN_PATH")) {
    std::string s = env;
    size_t start = 0;
    while (start <= s.size()) {
      size_t end = s.find(':', start);
      if (end == std::string::npos) end = s.size();
      if (end > start) dirs.push_back(s.substr(start, end - start));
      start = end + 1;
    }
  }
  dirs.push_back(TESSEL_BUILD_PLUGIN_DIR);
  dirs.push_back(TESSEL_INSTALL_PLUGIN_DIR);
  return dirs;
}

const std::vector<PluginStatus>& PluginManager::load_all(const std::vector<std::string>& dirs) {
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> descriptions;
    // Error-code overloads throughout: one unreadable entry (a symlink loop, a name too long for the
    // file system) must cost only that entry, never the whole scan.
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".json") descriptions.push_back(it->path());
    std::sort(descriptions.begin(), descriptions.end());
    for (const fs::path& p : descriptions) {
      std::error_code canonical_ec;
      fs::path canonical = fs::weakly_canonical(p, canonical_ec);
      std::string path = canonical_ec ? p.string() : canonical.string();
      bool seen = std::any_of(plugins_.begin(), plugins_.end(),
                              [&](const PluginStatus& s) { return s.description_path == path; });
      if (!seen) plugins_.push_back(load_one(path));
    }
  }
  return plugins_;
}

PluginStatus PluginManager::load_one(const std::string& description_path) {
  PluginStatus st;
  st.description_path = description_path;
  st.name = fs::path(description_path).stem().string();
  try {
    std::error_code ec;
    if (!fs::is_regular_file(description_path, ec)) throw Error("the description is not a regular file");
    const auto size = fs::file_size(description_path, ec);
    if (ec || size > kMaxDescriptionBytes)
      throw Error("the description is unreadable or larger than " + std::to_string(kMaxDescriptionBytes) + " bytes");
    nlohmann::json j;
    {
      std::ifstream in(description_path);
      try {
        j = nlohmann::json::parse(in);
      } catch (const nlohmann::json::exception& e) {
        // The library's "[json.exception.parse_error.101] " prefix means nothing to a user.
        std::string what = e.what();
        if (size_t end = what.find("] "); what.rfind("[json.exception", 0) == 0 && end != std::string::npos)
          what.erase(0, end + 2);
        throw Error("bad JSON: " + what);
      }
    }
    if (!j.is_object()) throw Error("the description must be a JSON object");
    st.name = required_string(j, "name");
    st.version = required_string(j, "version");
    std::string why;
    if (!core_version_compatible(required_string(j, "core_version"), &why)) throw Error("incompatible: " + why);
    const nlohmann::json provides = j.contains("provides") ? j.at("provides") : nlohmann::json::object();
    if (!provides.is_object()) throw Error("\"provides\" must be a JSON object");
    st.target_kinds = string_list(provides, "target_kinds");
    st.codegens = string_list(provides, "codegens");
    st.device_types = string_list(provides, "device_types");
    for (const PluginStatus& other : plugins_)
      if (other.loaded && other.name == st.name)
        throw Error("a plugin named '" + st.name + "' is already loaded from " + other.description_path);

    st.library_path = plugin_library_inside_folder(description_path, required_string(j, "library"));
    probe_plugin_registration(st.name, st.library_path, plugin_probe_time_limit());
    void* handle = dlopen(st.library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) throw Error(std::string("cannot load library: ") + dlerror());
    auto entry = reinterpret_cast<TesselPluginRegisterFn>(dlsym(handle, "tessel_plugin_register"));
    if (!entry) {
      dlclose(handle);
      throw Error("library has no entry point tessel_plugin_register");
    }

    PluginContext ctx(st.name);
    int rc;
    try {
      rc = entry(&ctx);
    } catch (const std::exception& e) {
      throw Error(std::string("registration threw: ") + e.what());
    }
    if (rc != 0)
      throw Error("registration failed: " + (ctx.error_.empty() ? "code " + std::to_string(rc) : ctx.error_));

    // What it registered must be what it declared, so `tessel targets` can trust the JSON.
    std::vector<std::string> kinds, codegens, devices;
    for (const auto& k : ctx.target_kinds_) kinds.push_back(k.name);
    for (const auto& c : ctx.codegens_) codegens.push_back(c.first);
    for (const auto& d : ctx.device_apis_) devices.push_back(std::string(device_type_name(d->type())));
    if (!same_set(kinds, st.target_kinds) || !same_set(codegens, st.codegens) || !same_set(devices, st.device_types))
      throw Error("registered target kinds {" + joined(kinds) + "}, codegens {" + joined(codegens) + "}, devices {" +
                  joined(devices) + "} but its description provides {" + joined(st.target_kinds) + "}, {" +
                  joined(st.codegens) + "}, {" + joined(st.device_types) + "}");
    for (const auto& k : ctx.target_kinds_)
      if (TargetKindRegistry::global().find(k.name)) throw Error("target kind '" + k.name + "' is already registered");
    for (const auto& c : ctx.codegens_)
      if (CodeGenRegistry::global().has(c.first))
        throw Error("target kind '" + c.first + "' already has a code generator");
    for (const auto& d : ctx.device_apis_)
      if (DeviceAPIRegistry::global().find(d->type()))
        throw Error("device type '" + std::string(device_type_name(d->type())) + "' already has a DeviceAPI");

    for (auto& k : ctx.target_kinds_) TargetKindRegistry::global().add(std::move(k));
    for (auto& c : ctx.codegens_) CodeGenRegistry::global().add(c.first, std::move(c.second), st.name);
    for (auto& d : ctx.device_apis_) DeviceAPIRegistry::global().add(std::move(d), st.name);
    st.loaded = true;  // the handle stays open: registered code lives in it
  } catch (const Error& e) {
    st.error = one_line(e.what());
  } catch (const std::exception& e) {  // the file system or the JSON library: still only this plugin
    st.error = one_line(e.what());
  }
  return st;
}

}  // namespace tessel
