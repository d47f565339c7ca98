#include "core/support/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/support/error.h"

namespace tessel {

namespace {

constexpr size_t kMaxCaptured = size_t{1} << 20;

// The descriptors of one pipe, closed on destruction; both ends are close-on-exec, so a program
// started meanwhile by another thread inherits neither.
struct Pipe {
  int read = -1, write = -1;
  bool open() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return false;
    read = fds[0], write = fds[1];
    return true;
  }
  static void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  ~Pipe() { close_fd(read), close_fd(write); }
};

// posix_spawn's attribute objects, destroyed on every path out.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
  }
};

// Reads both pipes until they close or the deadline passes; false on timeout.
bool drain(Pipe& out, Pipe& err, ProgramRun& run, std::optional<std::chrono::steady_clock::time_point> deadline) {
  std::string* sinks[2] = {&run.out, &run.err};
  int* fds[2] = {&out.read, &err.read};
  char buffer[8192];
  while (*fds[0] >= 0 || *fds[1] >= 0) {
    pollfd polled[2];
    int count = 0;
    int which[2];
    for (int i = 0; i < 2; ++i)
      if (*fds[i] >= 0) polled[count] = {*fds[i], POLLIN, 0}, which[count++] = i;
    int wait_ms = -1;
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      wait_ms = static_cast<int>(std::min<int64_t>(left.count(), 1000));
    }
    int ready = poll(polled, static_cast<nfds_t>(count), wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    for (int k = 0; k < count; ++k) {
      if (!(polled[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const int i = which[k];
      ssize_t n = ::read(*fds[i], buffer, sizeof buffer);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        Pipe::close_fd(*fds[i]);
        continue;
      }
      std::string& sink = *sinks[i];
      sink.append(buffer, std::min(static_cast<size_t>(n), kMaxCaptured - std::min(kMaxCaptured, sink.size())));
    }
  }
  return true;
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '+' || c == '-';
}

bool is_executable_file(const std::filesystem::path& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

}  // namespace

std::string ProgramRun::failure() const {
  if (!started || timed_out) return error.empty() ? "it could not be started" : error;
  if (signal != 0) return "killed by signal " + std::to_string(signal);
  return "exit " + std::to_string(exit_code);
}

std::string ProgramRun::first_message_line() const {
  for (const std::string* text : {&err, &out}) {
    size_t begin = 0;
    while (begin < text->size()) {
      size_t end = text->find('\n', begin);
      if (end == std::string::npos) end = text->size();
      std::string line = text->substr(begin, end - begin);
      if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
      begin = end + 1;
    }
  }
  return failure();
}

ProgramRun run_program(const std::vector<std::string>& argv, const RunOptions& options) {
  ProgramRun run;
  if (argv.empty() || argv[0].empty()) {
    run.error = "no program to run";
    return run;
  }
  Pipe out, err;
  if (!out.open() || !err.open()) {
    run.error = "cannot start '" + argv[0] + "': no pipe: " + std::strerror(errno);
    return run;
  }
  SpawnSetup setup;
  const std::string stdin_path = options.stdin_file.empty() ? "/dev/null" : options.stdin_file.string();
  posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, stdin_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&setup.actions, out.write, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&setup.actions, err.write, STDERR_FILENO);
  if (!options.working_dir.empty()) posix_spawn_file_actions_addchdir_np(&setup.actions, options.working_dir.c_str());
  // The child starts with no blocked signals and SIGPIPE at its default, whatever the caller set.
  // With a timeout it gets its own process group, so the compiler's own children die with it.
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (options.timeout.count() > 0) flags |= POSIX_SPAWN_SETPGROUP;
  posix_spawnattr_setsigmask(&setup.attributes, &none);
  posix_spawnattr_setsigdefault(&setup.attributes, &defaults);
  posix_spawnattr_setpgroup(&setup.attributes, 0);
  posix_spawnattr_setflags(&setup.attributes, flags);

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawn_error = posix_spawnp(&pid, argv[0].c_str(), &setup.actions, &setup.attributes, args.data(), environ);
  Pipe::close_fd(out.write);
  Pipe::close_fd(err.write);
  if (spawn_error != 0) {
    run.error = "cannot start '" + argv[0] + "': " + std::strerror(spawn_error);
    return run;
  }
  run.started = true;

  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (options.timeout.count() > 0) deadline = std::chrono::steady_clock::now() + options.timeout;
  if (!drain(out, err, run, deadline)) {
    run.timed_out = true;
    ::kill(-pid, SIGKILL);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
  if (run.timed_out) run.error = "timed out after " + std::to_string(options.timeout.count()) + " ms";
  return run;
}

std::string command_line_text(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& word : argv) {
    if (!line.empty()) line += ' ';
    bool plain = !word.empty();
    for (char c : word) plain = plain && (is_name_char(c) || (c != '\0' && std::strchr("=,:/@%", c)));
    if (plain) {
      line += word;
      continue;
    }
    line += '\'';
    for (char c : word) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

std::string program_problem(std::string_view program) {
  if (program.empty()) return "no program named";
  for (char c : program)
    if (!is_name_char(c) && c != '/')
      return "'" + std::string(program) + "' contains '" + std::string(1, c) +
             "': a program is a name on PATH or an absolute path, made of letters, digits and . _ + - /";
  if (program[0] == '-') return "'" + std::string(program) + "' starts with '-': a program name cannot";
  if (program.find('/') != std::string_view::npos) {
    if (program[0] != '/')
      return "'" + std::string(program) + "' is a relative path: name a program on PATH or give an absolute path";
    if (!is_executable_file(std::filesystem::path(program)))
      return "'" + std::string(program) + "' is not an executable file";
    return {};
  }
  if (!find_program(program)) return "no program '" + std::string(program) + "' on PATH";
  return {};
}

std::optional<std::filesystem::path> find_program(std::string_view name) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string_view::npos) {
    std::filesystem::path p(name);
    return is_executable_file(p) ? std::optional(p) : std::nullopt;
  }
  const char* path_env = std::getenv("PATH");
  std::string_view dirs = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = dirs.find(':');
    std::string_view dir = dirs.substr(0, colon);
    std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : std::string(dir)) / std::string(name);
    if (is_executable_file(candidate)) return candidate;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

TempDir::TempDir(const std::string& prefix) {
  std::string dir_template = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(dir_template.data()))
    throw Error(prefix + ": cannot create a temporary folder in " + std::filesystem::temp_directory_path().string());
  path_ = dir_template;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace tessel
