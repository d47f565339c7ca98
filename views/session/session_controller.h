#pragma once
// Owns the open session: its document (model, target, pass options), the file it is saved in, the
// recovery file, and the compile running on a worker thread.
//
//   UI thread                          worker (QtConcurrent)
//   open_model / set_target ──▶ start ──▶ compile(doc, progress) ──▶ StudioSnapshot
//        ▲  progress(stage, %) ◀─queued─┘           │
//        └──── compiled(snapshot) ◀────────────────┘ (a stale generation is dropped)
//
// Autosave: every document change rewrites the recovery file at once (it is tiny); a clean close
// removes it, so finding one at start-up means the last studio died and it is offered back. Until
// the user answers that offer, the file is held: nothing overwrites it. A recovery file that cannot
// be read is renamed aside (never deleted) and its problem named, file and field.
#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QThreadPool>
#include <atomic>
#include <memory>

#include "views/session/compile_model.h"

namespace tessel::views {

class SessionController : public QObject {
  Q_OBJECT

 public:
  explicit SessionController(CompileFunction compile, QObject* parent = nullptr);
  ~SessionController() override;

  const SessionDocument& document() const { return doc_; }
  bool has_document() const { return !doc_.model_path.empty(); }
  QString session_path() const { return session_path_; }  // empty until saved
  bool is_modified() const { return modified_; }
  StudioSnapshotPtr snapshot() const { return snapshot_; }
  bool is_busy() const { return busy_; }

  // Each starts a compile. open_session throws Error on a malformed file.
  void open_model(const QString& path);
  void open_session(const QString& path);
  void open_document(const SessionDocument& doc, const QString& session_path, bool modified);
  void set_target(const QString& target);
  void set_pass_option(const QString& key, const nlohmann::json& value);
  // The kernels' hand schedules (text form): an edit that is autosaved at once but needs no new
  // graph compile (the edit loop lowers the one kernel).
  void set_schedules(std::map<std::string, std::string> schedules);
  // The Tuning pane's records log (an absolute path), saved with the session.
  void set_tuning_records(const QString& path);
  void recompile();
  void cancel();
  // Throws Error when the file cannot be written.
  void save();  // requires a session_path
  void save_as(const QString& path);

  // Recovery (autosave) file; empty path disables autosave.
  void set_recovery_path(const QString& path) { recovery_path_ = path; }
  QString recovery_path() const { return recovery_path_; }
  static QString default_recovery_path();
  void discard_recovery();  // the clean-close path
  // While a recovery found at start is waiting for the user's answer, autosave must not overwrite
  // it: held, changes are kept in memory only; released, the current session is written at once.
  void hold_recovery(bool held);
  bool recovery_held() const { return recovery_held_; }
  // The running lesson and its page, autosaved with the session (empty path: none).
  void set_lesson_position(const QString& lesson_path, int page);
  // The schedule editor's undo histories, autosaved with the session (not part of a .tessel).
  void set_schedule_histories(std::map<std::string, ScheduleHistory> histories);

  // What a dead studio left behind. No file: nothing. A file that cannot be read or is malformed
  // is never deleted and never crashes the studio: it is renamed aside (kept_as) and `error` says
  // which file and field was wrong.
  struct RecoveryRead {
    std::optional<RecoveryRecord> record;
    QString error;
    QString kept_as;
  };
  static RecoveryRead read_recovery(const QString& path);

  // Tests: processes events until the current compile has been delivered; false on timeout.
  bool wait_until_idle(int timeout_ms);

 Q_SIGNALS:
  void document_changed();  // path, target, options or modified flag
  void compile_started();
  void progress(const QString& stage, int percent);
  void compiled(tessel::views::StudioSnapshotPtr snapshot);  // may carry error diagnostics
  void compile_canceled();

 private:
  void start_compile();
  void changed(bool modified);
  void write_recovery();

  CompileFunction compile_;
  SessionDocument doc_;
  QString session_path_, recovery_path_;
  QString lesson_path_;
  int lesson_page_ = 0;
  std::map<std::string, ScheduleHistory> histories_;
  bool recovery_held_ = false;
  bool modified_ = false;
  bool busy_ = false;
  StudioSnapshotPtr snapshot_;
  int generation_ = 0;
  std::shared_ptr<std::atomic<bool>> cancel_flag_;
  QFutureWatcher<StudioSnapshotPtr>* watcher_ = nullptr;
  QThreadPool pool_;  // own pool: the destructor waits for stale compiles too
};

}  // namespace tessel::views

Q_DECLARE_METATYPE(tessel::views::StudioSnapshotPtr)
