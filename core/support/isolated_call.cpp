#include "core/support/isolated_call.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <vector>

#include "core/support/file_io.h"

namespace tessel {

namespace {

constexpr int kThrew = 3;  // the child's exit code when `work` threw; its message is the result
constexpr size_t kMaxErrBytes = 64 * 1024;

// In the child only: a crash ends it with an exit code that names the signal, and nothing else of
// this process's crash handling runs (a sanitizer's report, a fuzzer's "save the crashing input").
void exit_naming_signal(int signal) { ::_exit(128 + signal); }

void install_crash_exits() {
  static std::vector<char> alternate_stack(64 * 1024);  // so a stack overflow is caught too
  stack_t stack{};
  stack.ss_sp = alternate_stack.data();
  stack.ss_size = alternate_stack.size();
  ::sigaltstack(&stack, nullptr);
  struct sigaction action {};
  action.sa_handler = exit_naming_signal;
  action.sa_flags = SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::sigaction(signal, &action, nullptr);
}

[[noreturn]] void run_child(const std::function<std::string()>& work, int result_fd, int err_fd) {
  install_crash_exits();
  const int null_fd = ::open("/dev/null", O_WRONLY);
  if (null_fd >= 0) ::dup2(null_fd, STDOUT_FILENO);
  if (err_fd >= 0)
    ::dup2(err_fd, STDERR_FILENO);
  else if (null_fd >= 0)
    ::dup2(null_fd, STDERR_FILENO);
  int code = 0;
  std::string out;
  try {
    out = work();
  } catch (const std::exception& e) {
    out = e.what(), code = kThrew;
  } catch (...) {
    out = "an exception of unknown type", code = kThrew;
  }
  if (!write_all(result_fd, out)) code = code == 0 ? 2 : code;
  ::_exit(code);
}

// One readable end of a pipe from the child, drained as it fills so the child never blocks on it.
struct Drain {
  int fd = -1;
  std::string* into = nullptr;
  size_t limit = 0;
  bool over_limit = false;

  bool open() const { return fd >= 0; }
  void close() {
    if (fd >= 0) ::close(fd), fd = -1;
  }
  // Reads what is there (the fd is non-blocking); false when nothing was.
  bool read_some() {
    char buffer[65536];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return false;
    if (n <= 0) {
      close();
      return false;
    }
    const size_t room = limit > into->size() ? limit - into->size() : 0;
    if (static_cast<size_t>(n) > room) over_limit = true;
    into->append(buffer, std::min(room, static_cast<size_t>(n)));
    return true;
  }
};

std::string seconds_text(std::chrono::milliseconds ms) {
  return std::to_string(ms.count() / 1000) + (ms.count() % 1000 ? "." + std::to_string(ms.count() % 1000 / 100) : "") +
         " s";
}

}  // namespace

std::string IsolatedCall::last_err_line() const {
  const size_t end = err.find_last_not_of("\n\r ");
  if (end == std::string::npos) return {};
  const size_t start = err.find_last_of('\n', end);
  const size_t from = start == std::string::npos ? 0 : start + 1;
  return err.substr(from, end + 1 - from);
}

IsolatedCall call_isolated(const std::function<std::string()>& work, const IsolatedCallOptions& options) {
  IsolatedCall call;
  int result_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  auto close_all = [&] {
    for (int fd : {result_pipe[0], result_pipe[1], err_pipe[0], err_pipe[1]})
      if (fd >= 0) ::close(fd);
  };
  if (::pipe2(result_pipe, O_CLOEXEC) != 0 || (options.capture_stderr && ::pipe2(err_pipe, O_CLOEXEC) != 0)) {
    call.how = std::string("cannot make a pipe: ") + std::strerror(errno);
    close_all();
    return call;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    call.how = std::string("cannot fork: ") + std::strerror(errno);
    close_all();
    return call;
  }
  if (pid == 0) {
    ::close(result_pipe[0]);
    if (err_pipe[0] >= 0) ::close(err_pipe[0]);
    run_child(work, result_pipe[1], err_pipe[1]);
  }
  ::close(result_pipe[1]);
  if (err_pipe[1] >= 0) ::close(err_pipe[1]);

  Drain drains[2] = {{result_pipe[0], &call.result, options.max_result_bytes}, {err_pipe[0], &call.err, kMaxErrBytes}};
  for (Drain& d : drains)
    if (d.open()) ::fcntl(d.fd, F_SETFL, ::fcntl(d.fd, F_GETFL) | O_NONBLOCK);
  const auto deadline = std::chrono::steady_clock::now() + options.time_limit;
  auto out_of_time = [&] { return std::chrono::steady_clock::now() > deadline; };
  int status = 0;
  bool ended = false;
  while (!ended) {
    pollfd fds[2];
    nfds_t count = 0;
    Drain* by_index[2];
    for (Drain& d : drains)
      if (d.open()) by_index[count] = &d, fds[count++] = pollfd{d.fd, POLLIN, 0};
    if (count > 0 && ::poll(fds, count, 100) > 0)
      for (nfds_t i = 0; i < count; ++i)
        if (fds[i].revents != 0) by_index[i]->read_some();
    if (count == 0) ::usleep(1000);
    // Only once both pipes are closed: a child still writing a large result has not ended.
    if (count == 0 || !drains[0].open()) ended = ::waitpid(pid, &status, WNOHANG) == pid;
    if (!ended && out_of_time()) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      for (Drain& d : drains) d.close();
      call.outcome = IsolatedCall::Outcome::timed_out;
      call.how = "timed out after " + seconds_text(options.time_limit);
      return call;
    }
  }
  for (Drain& d : drains) {  // the child has ended: what is left is in the pipe already
    while (d.open() && d.read_some()) {
    }
    d.close();
  }

  if (WIFSIGNALED(status)) {
    call.outcome = IsolatedCall::Outcome::crashed;
    call.how = "killed by signal " + std::to_string(WTERMSIG(status));
  } else if (WEXITSTATUS(status) > 128) {
    call.outcome = IsolatedCall::Outcome::crashed;
    call.how = "crashed with signal " + std::to_string(WEXITSTATUS(status) - 128);
  } else if (WEXITSTATUS(status) == kThrew) {
    call.outcome = IsolatedCall::Outcome::threw;
  } else if (WEXITSTATUS(status) != 0) {
    call.outcome = IsolatedCall::Outcome::crashed;
    call.how = "exit " + std::to_string(WEXITSTATUS(status));
  } else if (drains[0].over_limit) {
    call.outcome = IsolatedCall::Outcome::crashed;
    call.how = "its result was larger than " + std::to_string(options.max_result_bytes) + " bytes";
  } else {
    call.outcome = IsolatedCall::Outcome::returned;
  }
  if (call.outcome == IsolatedCall::Outcome::crashed) call.result.clear();
  return call;
}

}  // namespace tessel
