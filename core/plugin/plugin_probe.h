#pragma once
// Two checks before a plugin's library is loaded into this process (issue 40): where the library
// lies, and whether its registration returns.
//
//   description.json ──"library"──▶ path inside the description's folder?  no ─▶ refused
//                                          │ yes
//                                          ▼
//                     forked child: dlopen + tessel_plugin_register ──crash / no return in time──▶ refused
//                                          │ returned (or threw: the real load reports that)
//                                          ▼
//                     this process: dlopen + register (plugin_manager.cpp)
//
// A description is data that anyone who can write to a plugin folder may have written, and a
// library's registration is code nobody here reviewed; either may cost only its own plugin.
#include <chrono>
#include <string>

namespace tessel {

// The library named by a description's "library" field, as a path inside the description's folder
// (links followed). Throws Error for an absolute path, one that leaves the folder ("../x.so", or a
// link pointing out), or one that is not a regular file.
std::string plugin_library_inside_folder(const std::string& description_path, const std::string& library);

// Runs the library's registration in a forked child. Throws Error naming what happened when the
// child crashed or did not return within `time_limit`; returns when it returned or threw (the real
// load reports a throw or a failing return code with the plugin's own message). When no child can
// be started (fork fails) the check is skipped: the plugin then loads as it did before the check.
//
// A probe costs a fork and a second dlopen (10-30 ms a plugin), paid by every `tessel` start, so
// verdicts are remembered per library file -- its path, size, modification time, inode and the
// core's version -- in $XDG_CACHE_HOME/tessel/plugin-probes (or ~/.cache/...): a library is probed
// the first time it is seen and again only after it changes. A pass and a crash are remembered; a
// timeout is not (a busy machine may cause one). Without a writable cache every start probes.
void probe_plugin_registration(const std::string& plugin_name, const std::string& library_path,
                               std::chrono::milliseconds time_limit);

// The probe's time limit: TESSEL_PLUGIN_PROBE_SECONDS when set to a positive number, else 30 s
// (a GPU plugin's registration may start a driver, and CI runs under the sanitizers).
std::chrono::milliseconds plugin_probe_time_limit();

}  // namespace tessel
