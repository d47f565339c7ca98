#include "views/session/session_controller.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QPointer>
#include <QSaveFile>
#include <QStandardPaths>
#include <QtConcurrent/QtConcurrentRun>

#include "core/support/error.h"
#include "core/support/file_io.h"

namespace tessel::views {

namespace {

StudioSnapshotPtr run_guarded(const CompileFunction& compile, const SessionDocument& doc,
                              const CompileProgress& progress) {
  try {
    return compile(doc, progress);
  } catch (const CompileCanceled&) {
    return nullptr;
  } catch (const std::exception& e) {
    // compile_model turns failures into diagnostics itself; this catches anything that escaped it.
    auto snap = std::make_shared<StudioSnapshot>();
    snap->model_path = doc.model_path;
    snap->target = doc.target;
    snap->diagnostics.push_back({Diagnostic::Severity::kError, "compile", e.what()});
    return snap;
  }
}

}  // namespace

SessionController::SessionController(CompileFunction compile, QObject* parent)
    : QObject(parent), compile_(std::move(compile)) {
  qRegisterMetaType<StudioSnapshotPtr>();
}

SessionController::~SessionController() {
  if (cancel_flag_) cancel_flag_->store(true);
  pool_.waitForDone();
}

void SessionController::open_model(const QString& path) {
  SessionDocument doc;
  doc.model_path = QFileInfo(path).absoluteFilePath().toStdString();
  doc.target = default_session_target();
  try {
    doc.model_sha256 = file_sha256(doc.model_path);
  } catch (const Error&) {
    // The compile reports the unreadable file as a diagnostic; the document still opens.
  }
  open_document(doc, {}, false);
}

void SessionController::open_session(const QString& path) {
  SessionDocument doc = load_session(path.toStdString());
  open_document(doc, QFileInfo(path).absoluteFilePath(), false);
}

void SessionController::open_document(const SessionDocument& doc, const QString& session_path, bool modified) {
  doc_ = doc;
  histories_.clear();  // another document: the editor's histories go with the old one
  session_path_ = session_path;
  changed(modified);
  start_compile();
}

void SessionController::set_target(const QString& target) {
  if (target.toStdString() == doc_.target) return;
  doc_.target = target.toStdString();
  changed(true);
  start_compile();
}

void SessionController::set_pass_option(const QString& key, const nlohmann::json& value) {
  std::string k = key.toStdString();
  if (doc_.pass_options.contains(k) && doc_.pass_options[k] == value) return;
  doc_.pass_options[k] = value;
  changed(true);
  start_compile();
}

void SessionController::set_schedules(std::map<std::string, std::string> schedules) {
  if (schedules == doc_.schedules) return;
  doc_.schedules = std::move(schedules);
  changed(true);
}

void SessionController::set_tuning_records(const QString& path) {
  if (path.toStdString() == doc_.tuning_records) return;
  doc_.tuning_records = path.toStdString();
  changed(true);
}

void SessionController::recompile() {
  if (has_document()) start_compile();
}

void SessionController::cancel() {
  if (cancel_flag_) cancel_flag_->store(true);
}

void SessionController::save() {
  if (session_path_.isEmpty()) throw Error("the session has no file yet: use Save As");
  save_session(doc_, session_path_.toStdString());
  changed(false);
}

void SessionController::save_as(const QString& path) {
  save_session(doc_, path.toStdString());
  session_path_ = QFileInfo(path).absoluteFilePath();
  changed(false);
}

void SessionController::changed(bool modified) {
  modified_ = modified;
  write_recovery();
  Q_EMIT document_changed();
}

QString SessionController::default_recovery_path() {
  QString dir = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation);
  return QDir(dir).filePath("recovery.tessel");
}

void SessionController::write_recovery() {
  if (recovery_path_.isEmpty() || !has_document() || recovery_held_) return;
  RecoveryRecord record;
  record.doc = doc_;
  record.session_path = session_path_.toStdString();
  record.modified = modified_;
  record.lesson_path = lesson_path_.toStdString();
  record.lesson_page = lesson_page_;
  record.histories = histories_;
  const std::string text = recovery_to_json(record).dump(2);
  QDir().mkpath(QFileInfo(recovery_path_).absolutePath());
  QSaveFile f(recovery_path_);
  // Autosave failing must not interrupt the user; the next change tries again.
  if (f.open(QIODevice::WriteOnly)) {
    f.write(text.data(), static_cast<qint64>(text.size()));
    f.commit();
  }
}

void SessionController::hold_recovery(bool held) {
  recovery_held_ = held;
  if (!held) write_recovery();
}

void SessionController::set_lesson_position(const QString& lesson_path, int page) {
  if (lesson_path == lesson_path_ && page == lesson_page_) return;
  lesson_path_ = lesson_path;
  lesson_page_ = page;
  write_recovery();
}

void SessionController::set_schedule_histories(std::map<std::string, ScheduleHistory> histories) {
  if (histories == histories_) return;
  histories_ = std::move(histories);
  write_recovery();
}

void SessionController::discard_recovery() {
  if (!recovery_path_.isEmpty() && !recovery_held_) QFile::remove(recovery_path_);
}

SessionController::RecoveryRead SessionController::read_recovery(const QString& path) {
  RecoveryRead out;
  if (path.isEmpty() || !QFileInfo::exists(path)) return out;
  const std::string name = path.toStdString();
  try {
    out.record = parse_recovery_text(read_text_file(name, "recovery", kMaxSessionFileBytes), name);
    return out;
  } catch (const Error& e) {
    out.error = QString::fromStdString(e.what());
  }
  // Kept for the user (or a bug report) under a name the next start does not read again.
  QString aside = path + ".bad-" + QDateTime::currentDateTimeUtc().toString("yyyyMMdd-HHmmss");
  for (int n = 2; QFileInfo::exists(aside); ++n)
    aside = path + ".bad-" + QDateTime::currentDateTimeUtc().toString("yyyyMMdd-HHmmss") + "-" + QString::number(n);
  if (QFile::rename(path, aside)) out.kept_as = aside;
  return out;
}

void SessionController::start_compile() {
  if (cancel_flag_) cancel_flag_->store(true);  // the running compile's result is stale now
  if (watcher_) {
    watcher_->disconnect(this);
    // Let the old worker finish on its own; its watcher deletes itself then.
    if (watcher_->isFinished())
      watcher_->deleteLater();
    else
      QObject::connect(watcher_, &QFutureWatcherBase::finished, watcher_, &QObject::deleteLater);
    watcher_ = nullptr;
  }
  const int generation = ++generation_;
  cancel_flag_ = std::make_shared<std::atomic<bool>>(false);
  CompileProgress progress;
  progress.cancel_flag = cancel_flag_;
  QPointer<SessionController> self(this);
  progress.report = [self, generation](const std::string& stage, int percent) {
    QString text = QString::fromStdString(stage);
    QMetaObject::invokeMethod(
        self.data(),
        [self, generation, text, percent] {
          if (self && self->generation_ == generation) Q_EMIT self->progress(text, percent);
        },
        Qt::QueuedConnection);
  };
  busy_ = true;
  Q_EMIT compile_started();
  watcher_ = new QFutureWatcher<StudioSnapshotPtr>(this);
  QObject::connect(watcher_, &QFutureWatcherBase::finished, this, [this, generation] {
    if (generation != generation_) return;
    StudioSnapshotPtr result = watcher_->result();
    busy_ = false;
    if (!result) {
      Q_EMIT compile_canceled();
      return;
    }
    snapshot_ = result;
    Q_EMIT compiled(snapshot_);
  });
  watcher_->setFuture(QtConcurrent::run(&pool_, run_guarded, compile_, doc_, progress));
}

bool SessionController::wait_until_idle(int timeout_ms) {
  QElapsedTimer timer;
  timer.start();
  while (busy_ && timer.elapsed() < timeout_ms) QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
  QCoreApplication::processEvents();
  return !busy_;
}

}  // namespace tessel::views
