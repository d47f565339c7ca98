#pragma once
// The studio's main window: the graph in the centre (or the welcome page), the other panes as
// docks the user can move, close and stack; their arrangement is saved on close and restored on
// start. Menus hold every action (so the command palette finds them all), a toolbar the common
// ones, and a banner shows errors and the crash-recovery offer without blocking.
//
// Never losing an edit: every path that replaces the open session (Open, recent files, the
// Welcome page, lessons, drag and drop, the command palette, restoring a recovery, closing) goes
// through the SessionGate (session_gate.h), which asks Save / Discard / Cancel when there are
// unsaved edits. A recovery file found at start is not overwritten by autosave until the user has
// restored or discarded it (main_window_recovery.cpp).
#include <QMainWindow>
#include <QMessageBox>
#include <functional>
#include <optional>

#include "app/studio/mediator.h"
#include "app/studio/session_gate.h"
#include "views/lessons/lesson_pane.h"
#include "views/lessons/lesson_runner.h"
#include "views/welcome/welcome_pane.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QStackedWidget;
class QToolButton;
class QDockWidget;

namespace tessel::studio {

class CommandPalette;
class FocusFrame;
class JobIndicator;

struct MainWindowOptions {
  QString models_dir;              // the bundled samples (resources/models)
  QString lessons_dir;             // the bundled lessons (resources/lessons)
  QString recovery_path;           // autosave file; empty: SessionController::default_recovery_path()
  bool offer_recovery = true;      // read the recovery file at start and offer it back
  bool autosave = true;            // write the recovery file after every edit
  bool quick_calibration = false;  // Calibrate measures smaller buffers, fewer times (tests)
};

class MainWindow final : public QMainWindow {
 public:
  explicit MainWindow(MainWindowOptions options, QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens an .onnx model, a graph text file, or a .tessel session. Errors go to the banner.
  void open_file(const QString& path);
  views::SessionController* controller() const { return controller_; }
  views::Selection* selection() const { return selection_; }
  views::KernelEditLoop* edit_loop() const { return edit_loop_; }
  views::TuningRunner* tuner() const { return tuner_; }
  StudioMediator* mediator() const { return mediator_; }
  const StudioPanes& panes() const { return panes_; }
  views::WelcomePane* welcome() const { return welcome_; }
  CommandPalette* command_palette() const { return palette_; }
  // graph, passes, inspector, memory, diagnostics, welcome, schedule, program, roofline, profile, lesson,
  // tuning
  QWidget* pane_by_name(const QString& name) const;
  // Brings a pane to the front: its dock shown and raised, or the centre page switched to it.
  void reveal_pane(const QString& name);
  // The pane framed as holding the keyboard focus (null: none of ours).
  QWidget* focused_pane() const;
  QString banner_text() const;
  // Restores what a killed studio left in the recovery file (the session, the lesson page); false
  // when there was nothing, or the user canceled replacing a modified session.
  bool restore_recovered();
  bool has_recovery_offer() const { return recovered_.has_value(); }
  // Forgets the recovery offer: autosave takes over the file again.
  void discard_recovered();

  // The one gate before the open session is replaced (tests set how it asks).
  SessionGate* session_gate() const { return gate_.get(); }

  // Starts the lesson in `path` (resources/lessons/*.json) on page `page`; errors go to the banner.
  // Asks first when the session has unsaved edits (the lesson replaces it).
  void start_lesson(const QString& path, int page = 0);
  views::LessonRunner* lesson_runner() const { return lesson_runner_.get(); }

  // Kernel ▸ Calibrate Machine Ceilings (and the roofline's Calibrate): measured in the measuring
  // process, with a busy bar and a Cancel in the status bar; the roofline and the Profile header
  // take the new ceilings. Cancel keeps the previous ones.
  void start_calibration();
  JobIndicator* calibration_job() const { return calibration_job_; }

  // View ▸ Reset Layout: every pane docked where it starts, sized as shares of the window.
  void reset_layout();

  enum class Theme { kSystem, kLight, kDark };
  void set_theme(Theme theme);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void changeEvent(QEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void build_actions_and_menus();
  void build_kernel_menu();
  void build_lessons_menu();
  QDockWidget* add_dock(QWidget* pane, const QString& title, Qt::DockWidgetArea area);
  void show_banner(const QString& text, bool error,
                   std::vector<std::pair<QString, std::function<void()>>> buttons = {});
  void hide_banner();
  void add_recent(const QString& path);
  void rebuild_recent_menu();
  void update_title();
  void open_dialog();
  void run_lesson(views::Lesson lesson, const QString& path, int page, bool resume);
  // main_window_recovery.cpp
  views::SessionController::RecoveryRead take_over_recovery_file();
  void report_recovery_file(const views::SessionController::RecoveryRead& read);
  void show_recovery_offer();
  void save_layout();
  void export_graph(const QString& format);
  void refresh_targets();

  MainWindowOptions options_;
  views::Selection* selection_;
  views::SessionController* controller_;
  views::KernelEditLoop* edit_loop_;
  views::TuningRunner* tuner_;
  StudioPanes panes_;
  views::LessonPane* lesson_pane_;
  std::unique_ptr<views::LessonRunner> lesson_runner_;
  StudioMediator* mediator_;
  views::WelcomePane* welcome_;
  QStackedWidget* center_;
  QWidget* banner_;
  bool banner_sticky_ = false;
  QLabel* banner_label_;
  QWidget* banner_buttons_;
  QLabel* progress_label_;
  QProgressBar* progress_bar_;
  QToolButton* cancel_button_;
  JobIndicator* calibration_job_;
  QComboBox* target_combo_;
  QMenu* recent_menu_ = nullptr;
  CommandPalette* palette_ = nullptr;
  FocusFrame* focus_frame_ = nullptr;
  std::unique_ptr<SessionGate> gate_;
  std::optional<views::RecoveryRecord> recovered_;
  QPalette system_palette_;
  Theme theme_ = Theme::kSystem;
};

}  // namespace tessel::studio
