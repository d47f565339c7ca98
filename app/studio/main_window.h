#pragma once
// The studio's main window: the graph in the centre (or the welcome page), the other panes as
// docks the user can move, close and stack; their arrangement is saved on close and restored on
// start. Menus hold every action (so the command palette finds them all), a toolbar the common
// ones, and a banner shows errors and the crash-recovery offer without blocking.
#include <QMainWindow>
#include <optional>

#include "app/studio/mediator.h"
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

struct MainWindowOptions {
  QString models_dir;     // the bundled samples (resources/models)
  QString lessons_dir;    // the bundled lessons (resources/lessons)
  QString recovery_path;  // autosave file; empty: SessionController::default_recovery_path()
  bool offer_recovery = true;
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
  StudioMediator* mediator() const { return mediator_; }
  const StudioPanes& panes() const { return panes_; }
  views::WelcomePane* welcome() const { return welcome_; }
  CommandPalette* command_palette() const { return palette_; }
  // graph, passes, inspector, memory, diagnostics, welcome, schedule, program, roofline, profile, lesson
  QWidget* pane_by_name(const QString& name) const;
  // Brings a pane to the front: its dock shown and raised, or the centre page switched to it.
  void reveal_pane(const QString& name);
  QString banner_text() const;
  // Restores what a killed studio left in the recovery file; false when there was nothing.
  bool restore_recovered();
  bool has_recovery_offer() const { return recovered_.has_value(); }

  // Starts the lesson in `path` (resources/lessons/*.json) on its first page; errors go to the banner.
  void start_lesson(const QString& path);
  views::LessonRunner* lesson_runner() const { return lesson_runner_.get(); }

  enum class Theme { kSystem, kLight, kDark };
  void set_theme(Theme theme);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void changeEvent(QEvent* event) override;

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
  void save_session(bool ask_path);
  void export_graph(const QString& format);
  void refresh_targets();

  MainWindowOptions options_;
  views::Selection* selection_;
  views::SessionController* controller_;
  views::KernelEditLoop* edit_loop_;
  StudioPanes panes_;
  views::LessonPane* lesson_pane_;
  std::unique_ptr<views::LessonRunner> lesson_runner_;
  StudioMediator* mediator_;
  views::WelcomePane* welcome_;
  QStackedWidget* center_;
  QWidget* banner_;
  QLabel* banner_label_;
  QWidget* banner_buttons_;
  QLabel* progress_label_;
  QProgressBar* progress_bar_;
  QToolButton* cancel_button_;
  QComboBox* target_combo_;
  QMenu* recent_menu_ = nullptr;
  CommandPalette* palette_ = nullptr;
  std::optional<views::SessionController::Recovered> recovered_;
  QPalette system_palette_;
  Theme theme_ = Theme::kSystem;
};

}  // namespace tessel::studio
