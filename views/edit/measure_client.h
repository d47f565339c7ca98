#pragma once
// Talks to one long-lived tessel-measure process: a queue of requests (core/measure/protocol.h),
// one in flight at a time, each with a timeout. The process is started on the first request and restarted after it
// dies, so a kernel that crashes (or hangs, and is killed) fails only its own request.
//
//   submit(key, request) ─▶ queue ─▶ write line ─▶ [tessel-measure] ─▶ read line ─▶ done(reply)
//                                       │ finished (crash: signal N) ──▶ done(failure) + restart later
//                                       └ timer fires ──▶ kill ─────────▶ done("timed out after N ms")
//   submit with a key already queued or in flight: the old job is dropped without a callback (an
//   in-flight one by killing the process: its answer is stale anyway).
//
// Not a QObject (moc is slow): QProcess and QTimer signals are connected with lambdas.
// Usage:
//   MeasureClient client("/build/app/measure/tessel-measure");
//   client.submit("measure:K", request, 20000, "kernel 'K'", [](const measure::Reply* reply, const std::string&
//   failure) {...});
#include <QProcess>
#include <QString>
#include <QTimer>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/measure/protocol.h"

namespace tessel::views {

class MeasureClient {
 public:
  // reply: the decoded reply (check failed()); null with `failure` set when the process crashed,
  // timed out, could not start, or wrote a line that is not a reply.
  using Callback = std::function<void(const measure::Reply* reply, const std::string& failure)>;

  explicit MeasureClient(QString program);
  ~MeasureClient();
  MeasureClient(const MeasureClient&) = delete;
  MeasureClient& operator=(const MeasureClient&) = delete;

  QString program() const { return program_; }
  // `what` names the job in failure messages ("kernel 'fused_conv2d_relu_1'"). The client sets the
  // request's id.
  void submit(const std::string& key, measure::Request request, int timeout_ms, const std::string& what, Callback done);
  // Drops the queued or in-flight job with this key (no callback).
  void cancel(const std::string& key);
  bool idle() const { return !current_ && queue_.empty() && deferred_ == 0; }
  int restarts() const { return restarts_; }  // processes started after the first (tests)
  // The measuring program next to the running executable, or in the build tree's app/measure.
  static QString default_program();

 private:
  struct Job {
    std::string key, what;
    measure::Request request;
    int timeout_ms = 0;
    Callback done;
    int64_t id = 0;
  };
  void start_next();
  bool ensure_process(std::string* error);
  void kill_process();
  void on_output();
  void on_finished(int code, QProcess::ExitStatus status);
  void on_timeout();
  void finish_current(const measure::Reply* reply, const std::string& failure);

  QString program_;
  QObject context_;  // receiver of deferred calls: they die with the client
  std::unique_ptr<QProcess> process_;
  QTimer timer_;
  std::deque<Job> queue_;
  std::optional<Job> current_;
  QByteArray pending_output_;
  QByteArray stderr_tail_;
  int64_t next_id_ = 1;
  int starts_ = 0, restarts_ = 0;
  int deferred_ = 0;      // crash reports waiting for the event loop
  bool killing_ = false;  // our own kill: its `finished` is not a crash
};

}  // namespace tessel::views
