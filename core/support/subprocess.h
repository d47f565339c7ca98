#pragma once
// Running the system's compiler and linker (the c backend, `tessel build`) without a shell. The
// program and its arguments go to posix_spawnp as a vector, so no character of any argument is
// ever interpreted: a `;`, `$(...)` or backtick in a target option is just a byte of one argument.
//
//   ProgramRun r = run_program({"cc", "-O2", "-c", "kernels.c", "-o", "kernels.o"}, {.working_dir = dir});
//   if (!r.ok()) throw Error("cc failed (" + r.failure() + "): " + r.first_message_line());
//
// Also here: the rule a program named by the user (a target's `cc`) must follow, and a temporary
// folder that cleans up after itself.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

struct RunOptions {
  std::filesystem::path working_dir{};   // empty: the caller's
  std::chrono::milliseconds timeout{0};  // 0: wait as long as it takes; else SIGKILL its process group
  std::filesystem::path stdin_file{};    // what the program reads on stdin; empty: /dev/null
};

struct ProgramRun {
  bool started = false;    // false: it could not be started; `error` says why
  bool timed_out = false;  // killed after RunOptions::timeout
  int exit_code = -1;      // the exit status when it exited, else -1
  int signal = 0;          // the signal that ended it, else 0
  std::string out, err;    // what it wrote to stdout and stderr (each kept up to 1 MiB)
  std::string error;       // why it could not start ("cannot start 'cc': No such file or directory")

  bool ok() const { return started && !timed_out && signal == 0 && exit_code == 0; }
  // "exit 1", "killed by signal 11", "timed out after 300 s", or `error`.
  std::string failure() const;
  // The first non-empty line of stderr, else of stdout, else failure(): what a one-line error shows.
  std::string first_message_line() const;
};

// Starts argv[0] (searched on PATH when it has no '/') with argv as its arguments, stdin from
// RunOptions::stdin_file or /dev/null, stdout and stderr captured; waits for it. Never throws for
// the program's sake.
ProgramRun run_program(const std::vector<std::string>& argv, const RunOptions& options = {});

// An argument vector as one line for people to read (logs, the "command" artifact): words with
// characters other than letters, digits and `-_=.,+:/@%` are single-quoted. Display only: nothing
// ever runs this text.
std::string command_line_text(const std::vector<std::string>& argv);

// Why `program` may not be used as a program that a user option names (a target's `cc`), or "" when
// it may. The rule: a plain name made of letters, digits and `. _ + -` (not starting with '-') that
// is found on PATH, or an absolute path made of those characters and '/' naming an executable file.
std::string program_problem(std::string_view program);

// `name` looked up on PATH as execvp would (a name with '/' is returned as is when executable).
std::optional<std::filesystem::path> find_program(std::string_view name);

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
