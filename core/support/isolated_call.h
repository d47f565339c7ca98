#pragma once
// Running code we did not write, and do not trust with bad input, where its crash cannot take this
// process with it: ONNX's shape inference (a malformed Conv makes it read through a wild pointer),
// an OpenCL platform that calls abort() when it cannot start.
//
//   parent ── fork ──▶ child: work() ─▶ bytes into a pipe ─▶ _exit(0)
//      │                      throws ─▶ message into the pipe ─▶ _exit(kThrew)
//      │                      SIGSEGV/SIGBUS/SIGFPE/SIGILL/SIGABRT ─▶ _exit(128 + signal)
//      └─ reads the pipe (and the child's stderr when asked) until the child ends or the time limit
//         passes (then SIGKILL)
//
// The child is a copy of this process: it sees every object the caller has, so `work` needs no
// arguments sent over and only its result travels back. It ends with _exit, so nothing of the
// parent's (atexit handlers, stdio buffers, a fuzzer's crash hook) runs twice.
//
// A fork of a process with other threads copies only the calling thread; a lock another thread held
// at that moment stays locked in the child. `work` should touch only what the calling thread owns;
// the time limit is the backstop if it cannot (the call then reports a timeout, never hangs).
#include <chrono>
#include <functional>
#include <string>

namespace tessel {

struct IsolatedCallOptions {
  std::chrono::milliseconds time_limit{std::chrono::seconds(60)};
  bool capture_stderr = false;        // keep what the child writes to stderr (else it goes to /dev/null)
  size_t max_result_bytes = 1 << 28;  // a larger result counts as a failure
};

struct IsolatedCall {
  enum class Outcome { returned, threw, crashed, timed_out, not_started };
  Outcome outcome = Outcome::not_started;
  std::string result;  // what `work` returned (Outcome::returned) or the exception's message (threw)
  std::string err;     // the child's stderr (capture_stderr), up to 64 KiB
  std::string how;     // "killed by signal 11", "timed out after 60 s", "cannot fork: ...", ""

  bool ok() const { return outcome == Outcome::returned; }
  // The last non-empty line the child wrote to stderr: often the library's own reason for dying.
  std::string last_err_line() const;
};

// Runs `work` in a forked child and waits for it. Never throws for the child's sake.
IsolatedCall call_isolated(const std::function<std::string()>& work, const IsolatedCallOptions& options = {});

}  // namespace tessel
