#pragma once
// Running the system's compiler and linker: a shell command with its output captured, quoting for
// paths, and a temporary folder that cleans up after itself. Used where Tessel hands code to `cc`
// (the c backend, `tessel build`).
#include <filesystem>
#include <string>

namespace tessel {

// Runs `command` through /bin/sh with stderr folded into stdout; returns the exit status (-1 when
// it could not start or did not exit normally) and appends what it printed to `output`.
int run_shell_command(const std::string& command, std::string* output);

// `s` as one single-quoted shell word.
std::string shell_quote(const std::string& s);

// A fresh folder under the system's temporary directory, removed with its contents on destruction.
class TempDir {
 public:
  // `prefix` names the folder ("tessel-build" → /tmp/tessel-build-XXXXXX). Throws Error on failure.
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace tessel
