#include "views/edit/measure_client.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace tessel::views {

MeasureClient::MeasureClient(QString program) : program_(program.isEmpty() ? default_program() : std::move(program)) {
  timer_.setSingleShot(true);
  QObject::connect(&timer_, &QTimer::timeout, [this] { on_timeout(); });
}

MeasureClient::~MeasureClient() {
  queue_.clear();
  current_.reset();
  if (!process_) return;
  QObject::disconnect(process_.get(), nullptr, nullptr, nullptr);  // no handler may run on a half-destroyed client
  if (process_->state() != QProcess::NotRunning) {
    process_->closeWriteChannel();  // a healthy process exits at the end of its input
    if (!process_->waitForFinished(300)) {
      process_->kill();
      process_->waitForFinished(3000);
    }
  }
}

QString MeasureClient::default_program() {
  const QString env = qEnvironmentVariable("TESSEL_MEASURE");
  if (!env.isEmpty()) return env;
  const QDir dir(QCoreApplication::applicationDirPath());
  for (const QString& candidate : {dir.filePath("tessel-measure"), dir.filePath("../measure/tessel-measure"),
                                   dir.filePath("../app/measure/tessel-measure")})
    if (QFileInfo(candidate).isExecutable()) return QFileInfo(candidate).absoluteFilePath();
  return dir.filePath("tessel-measure");
}

void MeasureClient::submit(const std::string& key, measure::Request request, int timeout_ms, const std::string& what,
                           Callback done) {
  cancel(key);
  queue_.push_back(Job{key, what, std::move(request), timeout_ms, std::move(done), 0});
  if (!current_) start_next();
}

void MeasureClient::cancel(const std::string& key) {
  std::erase_if(queue_, [&](const Job& j) { return j.key == key; });
  if (current_ && current_->key == key) {
    // The process is busy with an answer nobody wants: kill it; the next job starts a new one.
    current_.reset();
    timer_.stop();
    kill_process();
    start_next();
  }
}

bool MeasureClient::ensure_process(std::string* error) {
  if (process_ && process_->state() == QProcess::Running) return true;
  if (!process_) {
    process_ = std::make_unique<QProcess>();
    process_->setProgram(program_);
    process_->setProcessChannelMode(QProcess::SeparateChannels);
    QObject::connect(process_.get(), &QProcess::readyReadStandardOutput, [this] { on_output(); });
    QObject::connect(process_.get(), &QProcess::readyReadStandardError, [this] {
      stderr_tail_ += process_->readAllStandardError();
      if (stderr_tail_.size() > 4096) stderr_tail_ = stderr_tail_.right(4096);
    });
    QObject::connect(process_.get(), &QProcess::finished,
                     [this](int code, QProcess::ExitStatus status) { on_finished(code, status); });
  }
  pending_output_.clear();
  stderr_tail_.clear();
  killing_ = false;
  process_->start();
  if (!process_->waitForStarted(10000)) {
    *error =
        "cannot start the measuring process '" + program_.toStdString() + "': " + process_->errorString().toStdString();
    return false;
  }
  if (starts_++ > 0) ++restarts_;
  return true;
}

void MeasureClient::kill_process() {
  if (!process_ || process_->state() == QProcess::NotRunning) return;
  killing_ = true;
  process_->kill();
  process_->waitForFinished(3000);  // SIGKILL: milliseconds
  pending_output_.clear();
}

void MeasureClient::start_next() {
  while (!current_ && !queue_.empty()) {
    current_ = std::move(queue_.front());
    queue_.pop_front();
    std::string error;
    if (!ensure_process(&error)) {
      finish_current(nullptr, error);
      continue;
    }
    current_->id = next_id_++;
    current_->request.id = current_->id;
    const std::string line = measure::encode_line(current_->request);
    process_->write(line.data(), static_cast<qint64>(line.size()));
    timer_.start(current_->timeout_ms);
  }
}

void MeasureClient::on_output() {
  pending_output_ += process_->readAllStandardOutput();
  int newline;
  while ((newline = pending_output_.indexOf('\n')) >= 0) {
    const QByteArray line = pending_output_.left(newline);
    pending_output_.remove(0, newline + 1);
    if (!current_) continue;  // nobody waits for it
    measure::Reply reply;
    try {
      reply = measure::decode_reply_line(std::string_view(line.constData(), static_cast<size_t>(line.size())));
    } catch (const measure::ProtocolError& e) {
      if (e.request_id() != 0 && e.request_id() != current_->id) continue;  // stale
      timer_.stop();
      finish_current(nullptr, "malformed reply from the measuring process on " + current_->what + ": " + e.what());
      continue;
    }
    if (reply.id != current_->id) continue;  // stale
    timer_.stop();
    finish_current(&reply, {});
  }
}

void MeasureClient::on_finished(int code, QProcess::ExitStatus status) {
  if (killing_) {
    killing_ = false;
    return;
  }
  if (!current_) return;  // died between jobs: the next job restarts it
  timer_.stop();
  std::string last_words = QString::fromUtf8(stderr_tail_).trimmed().section('\n', -1).toStdString();
  const std::string failure = "measuring process " +
                              (status == QProcess::CrashExit ? "crashed (signal " + std::to_string(code) + ")"
                                                             : "exited with status " + std::to_string(code)) +
                              " on " + current_->what + (last_words.empty() ? "" : ": " + last_words);
  // Report (and start the next job, which restarts the process) once this signal has returned:
  // restarting a QProcess from inside its own `finished` handler is asking for trouble.
  ++deferred_;
  QTimer::singleShot(0, &context_, [this, failure, id = current_->id] {
    --deferred_;
    if (current_ && current_->id == id) finish_current(nullptr, failure);  // not canceled meanwhile
  });
}

void MeasureClient::on_timeout() {
  if (!current_) return;
  const std::string failure =
      "measuring process timed out after " + std::to_string(current_->timeout_ms) + " ms on " + current_->what;
  kill_process();
  finish_current(nullptr, failure);
}

void MeasureClient::finish_current(const measure::Reply* reply, const std::string& failure) {
  Job job = std::move(*current_);
  current_.reset();
  // The callback may submit more work; start the queue after it.
  if (job.done) job.done(reply, failure);
  start_next();
}

}  // namespace tessel::views
