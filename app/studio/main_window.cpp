#include "app/studio/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyle>
#include <QStyleFactory>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QUndoGroup>
#include <QVBoxLayout>
#include <memory>

#include "app/studio/command_palette.h"
#include "app/studio/focus_frame.h"
#include "app/studio/job_indicator.h"
#include "core/plugin/plugin_manager.h"

namespace tessel::studio {

namespace {

constexpr int kMaxRecent = 8;
// Version of the saved pane arrangement (QMainWindow::saveState); 1: readable default sizes.
constexpr int kLayoutVersion = 1;

QPalette dark_palette() {
  QPalette p;
  QColor window(45, 47, 52), base(32, 34, 38), text(222, 224, 228), disabled(120, 122, 128);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, QColor(40, 42, 47));
  p.setColor(QPalette::ToolTipBase, window);
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, window);
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::Highlight, QColor(64, 128, 220));
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::Mid, QColor(90, 92, 98));
  p.setColor(QPalette::Disabled, QPalette::Text, disabled);
  p.setColor(QPalette::Disabled, QPalette::WindowText, disabled);
  p.setColor(QPalette::Disabled, QPalette::ButtonText, disabled);
  return p;
}

}  // namespace

MainWindow::MainWindow(MainWindowOptions options, QWidget* parent) : QMainWindow(parent), options_(std::move(options)) {
  setObjectName("tessel_studio");
  system_palette_ = QApplication::palette();
  selection_ = new views::Selection(this);
  controller_ = new views::SessionController(&views::compile_model, this);
  const views::SessionController::RecoveryRead recovery_read = take_over_recovery_file();
  gate_ = std::make_unique<SessionGate>(this, controller_);
  gate_->on_saved_as = [this](const QString& path) { add_recent(path); };
  gate_->on_error = [this](const QString& message) { show_banner(message, true); };
  setAcceptDrops(true);

  panes_.graph = new views::GraphPane(selection_, this);
  panes_.passes = new views::PassStepperPane(selection_, this);
  panes_.inspector = new views::InspectorPane(this);
  panes_.memory = new views::MemoryPane(selection_, this);
  panes_.diagnostics = new views::DiagnosticsPane(this);
  panes_.schedule = new views::ScheduleEditorPane(this);
  panes_.schedule->setObjectName("schedule");
  panes_.program = new views::ProgramPane(this);
  panes_.program->setObjectName("program");
  panes_.roofline = new views::RooflinePane(this);
  panes_.roofline->setObjectName("roofline");
  panes_.profile = new views::ProfilePane(this);
  panes_.profile->setObjectName("profile");
  panes_.tuning = new views::TuningPane(this);
  lesson_pane_ = new views::LessonPane(this);
  lesson_pane_->setObjectName("lesson");
  edit_loop_ = new views::KernelEditLoop({}, this);
  tuner_ = new views::TuningRunner(this);
  welcome_ = new views::WelcomePane(this);
  welcome_->set_samples_dir(options_.models_dir);
  welcome_->on_open = [this](const QString& path) { open_file(path); };
  welcome_->on_open_dialog = [this] { open_dialog(); };

  // Centre: banner above the welcome page / graph.
  banner_ = new QWidget(this);
  banner_->setObjectName("banner");
  banner_->setAutoFillBackground(true);
  auto* banner_layout = new QHBoxLayout(banner_);
  banner_layout->setContentsMargins(8, 4, 8, 4);
  banner_label_ = new QLabel(banner_);
  banner_label_->setWordWrap(true);
  banner_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  banner_buttons_ = new QWidget(banner_);
  new QHBoxLayout(banner_buttons_);
  banner_buttons_->layout()->setContentsMargins(0, 0, 0, 0);
  auto* close_banner = new QToolButton(banner_);
  close_banner->setText("✕");
  close_banner->setAutoRaise(true);
  connect(close_banner, &QToolButton::clicked, this, [this] {
    banner_sticky_ = false;
    banner_->hide();  // a pending recovery offer stays pending: autosave still holds off
  });
  banner_layout->addWidget(banner_label_, 1);
  banner_layout->addWidget(banner_buttons_);
  banner_layout->addWidget(close_banner);
  banner_->hide();
  center_ = new QStackedWidget(this);
  center_->addWidget(welcome_);
  center_->addWidget(panes_.graph);
  auto* central = new QWidget(this);
  auto* central_layout = new QVBoxLayout(central);
  central_layout->setContentsMargins(0, 0, 0, 0);
  central_layout->setSpacing(0);
  central_layout->addWidget(banner_);
  central_layout->addWidget(center_, 1);
  setCentralWidget(central);

  // Left: how the graph and the selected kernel are transformed; right: what they are now.
  add_dock(panes_.passes, tr("Passes"), Qt::LeftDockWidgetArea);
  add_dock(panes_.schedule, tr("Schedule"), Qt::LeftDockWidgetArea);
  add_dock(panes_.inspector, tr("Inspector"), Qt::RightDockWidgetArea);
  add_dock(panes_.program, tr("Program"), Qt::RightDockWidgetArea);
  add_dock(panes_.roofline, tr("Roofline"), Qt::RightDockWidgetArea);
  add_dock(lesson_pane_, tr("Lesson"), Qt::RightDockWidgetArea);
  add_dock(panes_.memory, tr("Memory"), Qt::BottomDockWidgetArea);
  add_dock(panes_.diagnostics, tr("Diagnostics"), Qt::BottomDockWidgetArea);
  add_dock(panes_.profile, tr("Profile"), Qt::BottomDockWidgetArea);
  add_dock(panes_.tuning, tr("Tuning"), Qt::BottomDockWidgetArea);
  // The right column runs the full height (the program and the roofline need it); the bottom
  // row sits under the graph and the left column.
  setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
  setCorner(Qt::TopRightCorner, Qt::RightDockWidgetArea);

  // Status bar: what the worker is doing, and a way to stop it.
  progress_label_ = new QLabel(this);
  progress_bar_ = new QProgressBar(this);
  progress_bar_->setMaximumWidth(160);
  progress_bar_->setRange(0, 100);
  progress_bar_->hide();
  cancel_button_ = new QToolButton(this);
  cancel_button_->setText(tr("Cancel"));
  cancel_button_->hide();
  statusBar()->addWidget(progress_label_, 1);
  statusBar()->addPermanentWidget(progress_bar_);
  statusBar()->addPermanentWidget(cancel_button_);
  connect(cancel_button_, &QToolButton::clicked, controller_, &views::SessionController::cancel);
  calibration_job_ = new JobIndicator(this);
  calibration_job_->setObjectName("calibration_job");
  statusBar()->addPermanentWidget(calibration_job_);
  calibration_job_->on_cancel = [this] {
    edit_loop_->cancel_calibration();
    panes_.roofline->set_calibration_canceled();
    statusBar()->showMessage(tr("Calibration canceled: the previous ceilings stay"), 6000);
  };
  connect(edit_loop_, &views::KernelEditLoop::ceilings_ready, this, [this] {
    if (calibration_job_->running() && !edit_loop_->is_calibrating()) calibration_job_->finish();
  });

  mediator_ = new StudioMediator(selection_, controller_, edit_loop_, tuner_, panes_, this);
  mediator_->on_calibrate_requested = [this] { start_calibration(); };
  mediator_->on_errors = [this](const QString& message) {
    show_banner(message, true, {{tr("Show Diagnostics"), [this] {
                                   panes_.diagnostics->parentWidget()->show();
                                   panes_.diagnostics->parentWidget()->raise();
                                 }}});
  };
  mediator_->on_status = [this](const QString& message) { statusBar()->showMessage(message, 6000); };
  mediator_->on_measured = [this](const views::KernelMeasurement& m) {
    if (lesson_runner_) lesson_runner_->note_measurement(m);
  };
  mediator_->on_profiled = [this](const views::ModelProfile& p) {
    if (lesson_runner_) lesson_runner_->note_profile(p);
  };
  // Picking a kernel brings its schedule forward (the inspector beside it keeps showing the node).
  connect(selection_, &views::Selection::kernel_changed, this, [this](const QString& kernel) {
    if (!kernel.isEmpty()) reveal_pane("schedule");
  });
  // An edit brings the program forward: that is where its effect shows.
  connect(edit_loop_, &views::KernelEditLoop::lowered, this, [this](const views::KernelLoweringPtr& r) {
    if (!r->is_default_schedule) reveal_pane("program");
  });

  connect(controller_, &views::SessionController::compile_started, this, [this] {
    progress_bar_->setValue(0);
    progress_bar_->show();
    cancel_button_->show();
    progress_label_->setText(tr("Compiling…"));
  });
  connect(controller_, &views::SessionController::progress, this, [this](const QString& stage, int percent) {
    progress_label_->setText(stage);
    progress_bar_->setValue(percent);
  });
  connect(controller_, &views::SessionController::compiled, this, [this](const views::StudioSnapshotPtr& snap) {
    progress_bar_->hide();
    cancel_button_->hide();
    progress_label_->setText(snap->has_errors() ? tr("Finished with errors")
                                                : tr("Imported in %1 ms, %2 passes in %3 ms")
                                                      .arg(snap->import_ms, 0, 'f', 1)
                                                      .arg(snap->passes.size())
                                                      .arg(snap->pipeline_ms, 0, 'f', 1));
    if (!snap->has_errors()) hide_banner();
  });
  connect(controller_, &views::SessionController::compile_canceled, this, [this] {
    progress_bar_->hide();
    cancel_button_->hide();
    progress_label_->setText(tr("Canceled"));
  });
  connect(controller_, &views::SessionController::document_changed, this, [this] { update_title(); });

  // Backends are plugins found at run time; the target picker lists what they registered.
  for (const PluginStatus& plugin : PluginManager::global().load_all())
    if (!plugin.loaded)
      panes_.diagnostics->model()->add({views::Diagnostic::Severity::kWarning, "plugins",
                                        plugin.name + " (" + plugin.description_path + "): " + plugin.error});
  build_actions_and_menus();
  palette_ = new CommandPalette(menuBar(), this);
  focus_frame_ = new FocusFrame(this);
  connect(qApp, &QApplication::focusChanged, this, [this](QWidget*, QWidget* now) {
    // The pane (a dock's widget, or the graph) that holds the focus widget, if it is ours.
    for (QWidget* w = now; w; w = w->parentWidget()) {
      const bool pane = qobject_cast<QDockWidget*>(w->parentWidget()) != nullptr || w == panes_.graph;
      if (pane && w->window() == this) {
        focus_frame_->frame(w);
        return;
      }
    }
  });

  QSettings settings;
  resize(1280, 820);
  reset_layout();
  restoreGeometry(settings.value("window/geometry").toByteArray());
  // Layouts saved before kLayoutVersion squeezed the panes; they give way to the new default.
  restoreState(settings.value("window/state").toByteArray(), kLayoutVersion);
  set_theme(static_cast<Theme>(settings.value("view/theme", 0).toInt()));
  rebuild_recent_menu();
  update_title();

  report_recovery_file(recovery_read);
  // A crash must not cost the pane arrangement either: it is saved every few seconds, not only
  // on a clean close.
  auto* layout_timer = new QTimer(this);
  connect(layout_timer, &QTimer::timeout, this, [this] { save_layout(); });
  layout_timer->start(5000);
}

void MainWindow::save_layout() {
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/state", saveState(kLayoutVersion));
}

// Left: how the graph and the selected kernel are transformed; right (full height): what they are
// now; bottom: whole-model tables. Sizes are shares of the window, so a bigger window gives every
// pane more room, not only the graph.
void MainWindow::reset_layout() {
  const std::vector<std::pair<Qt::DockWidgetArea, QStringList>> groups = {
      {Qt::LeftDockWidgetArea, {"passes", "schedule"}},
      {Qt::RightDockWidgetArea, {"inspector", "program", "roofline", "lesson"}},
      {Qt::BottomDockWidgetArea, {"memory", "diagnostics", "profile", "tuning"}},
  };
  std::vector<QDockWidget*> firsts;
  for (const auto& [area, names] : groups) {
    QDockWidget* first = nullptr;
    for (const QString& name : names) {
      QDockWidget* dock = findChild<QDockWidget*>("dock_" + name);
      dock->setFloating(false);
      addDockWidget(area, dock);
      // The lesson pane shows while a lesson runs.
      dock->setVisible(name != "lesson" || lesson_runner_);
      if (first)
        tabifyDockWidget(first, dock);
      else
        first = dock;
    }
    first->raise();
    firsts.push_back(first);
  }
  const int w = width(), h = height();
  resizeDocks({firsts[0], firsts[1]}, {std::max(280, w * 22 / 100), std::max(480, w * 38 / 100)}, Qt::Horizontal);
  resizeDocks({firsts[2]}, {std::max(240, h * 34 / 100)}, Qt::Vertical);
}

MainWindow::~MainWindow() = default;

QDockWidget* MainWindow::add_dock(QWidget* pane, const QString& title, Qt::DockWidgetArea area) {
  auto* dock = new QDockWidget(title, this);
  dock->setObjectName("dock_" + pane->objectName());
  dock->setWidget(pane);
  dock->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable |
                    QDockWidget::DockWidgetFloatable);
  addDockWidget(area, dock);
  return dock;
}

void MainWindow::build_actions_and_menus() {
  auto action = [this](QMenu* menu, const QString& text, QKeySequence key, std::function<void()> fn) {
    QAction* a = menu->addAction(text);
    a->setShortcut(key);
    connect(a, &QAction::triggered, this, [fn = std::move(fn)] { fn(); });
    return a;
  };

  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = action(file, tr("&Open…"), QKeySequence::Open, [this] { open_dialog(); });
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  file->addSeparator();
  QAction* save = action(file, tr("&Save Session"), QKeySequence::Save, [this] { gate_->save(false); });
  action(file, tr("Save Session &As…"), QKeySequence::SaveAs, [this] { gate_->save(true); });
  file->addSeparator();
  QMenu* export_menu = file->addMenu(tr("&Export Graph"));
  action(export_menu, tr("As &SVG…"), {}, [this] { export_graph("svg"); });
  action(export_menu, tr("As &PNG…"), {}, [this] { export_graph("png"); });
  action(export_menu, tr("As &DOT…"), {}, [this] { export_graph("dot"); });
  file->addSeparator();
  action(file, tr("&Quit"), QKeySequence::Quit, [this] { close(); });

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QAction* undo = panes_.schedule->undo_group()->createUndoAction(this, tr("&Undo Schedule Edit"));
  undo->setShortcut(QKeySequence::Undo);
  QAction* redo = panes_.schedule->undo_group()->createRedoAction(this, tr("&Redo Schedule Edit"));
  redo->setShortcut(QKeySequence::Redo);
  edit->addAction(undo);
  edit->addAction(redo);

  QMenu* graph = menuBar()->addMenu(tr("&Graph"));
  for (QAction* a : panes_.graph->pane_actions()) {
    graph->addAction(a);
    addAction(a);  // shortcuts work wherever the focus is
  }

  QMenu* passes = menuBar()->addMenu(tr("&Passes"));
  for (QAction* a : panes_.passes->pane_actions()) {
    passes->addAction(a);
    addAction(a);
  }
  QAction* hide_unchanged = passes->addAction(tr("Hide Unchanged Passes"));
  hide_unchanged->setCheckable(true);
  connect(hide_unchanged, &QAction::toggled, this, [this](bool on) { panes_.passes->set_hide_unchanged(on); });

  QMenu* compile = menuBar()->addMenu(tr("&Compile"));
  QAction* recompile =
      action(compile, tr("&Recompile"), QKeySequence(Qt::Key_F5), [this] { controller_->recompile(); });
  action(compile, tr("&Cancel"), QKeySequence(Qt::SHIFT | Qt::Key_F5), [this] { controller_->cancel(); });

  build_kernel_menu();

  QMenu* view = menuBar()->addMenu(tr("&View"));
  action(view, tr("&Welcome Page"), {}, [this] { center_->setCurrentWidget(welcome_); });
  view->addSeparator();
  // One entry per pane, checked while it is open; choosing it opens the pane and brings it to the
  // front with the focus (a pane open behind another tab is raised, never closed: its ✕ closes
  // it). Alt+1…9 are the same entries.
  const QStringList order = {"graph",   "passes", "schedule",    "inspector", "program", "roofline",
                             "profile", "memory", "diagnostics", "lesson",    "tuning"};
  for (int i = 0; i < order.size(); ++i) {
    const QString name = order[i];
    auto* dock = findChild<QDockWidget*>("dock_" + name);
    QAction* a = view->addAction(dock ? dock->windowTitle() : tr("Graph"));
    a->setObjectName("show_" + name);
    if (i < 9) a->setShortcut(QKeySequence(Qt::ALT | static_cast<Qt::Key>(Qt::Key_1 + i)));
    if (dock) {
      a->setCheckable(true);
      a->setChecked(!dock->isHidden());
      connect(dock->toggleViewAction(), &QAction::toggled, a, &QAction::setChecked);
    }
    connect(a, &QAction::triggered, this, [this, name, dock, a] {
      reveal_pane(name);
      if (QWidget* pane = pane_by_name(name)) {
        // Its first enabled control that takes the keyboard (a table, the code view), else the pane.
        QWidget* target = pane;
        for (QWidget* child : pane->findChildren<QWidget*>())
          if ((child->focusPolicy() & Qt::TabFocus) && child->isVisibleTo(pane) && child->isEnabled()) {
            target = child;
            break;
          }
        target->setFocus(Qt::ShortcutFocusReason);
      }
      if (dock) a->setChecked(true);
    });
  }
  view->addSeparator();
  QMenu* theme = view->addMenu(tr("&Theme"));
  action(theme, tr("Follow &System"), {}, [this] { set_theme(Theme::kSystem); });
  action(theme, tr("&Light"), {}, [this] { set_theme(Theme::kLight); });
  action(theme, tr("&Dark"), {}, [this] { set_theme(Theme::kDark); });
  action(view, tr("&Reset Layout"), {}, [this] { reset_layout(); });

  build_lessons_menu();

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  action(help, tr("&Command Palette…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P),
         [this] { palette_->open_palette(); });
  action(help, tr("&About Tessel Studio"), {}, [this] {
    QMessageBox::about(
        this, tr("About Tessel Studio"),
        tr("<b>Tessel Studio</b> %1<br>A deep-learning compiler you can watch and steer.").arg(TESSEL_VERSION));
  });
  for (QMenu* m : {file, edit, compile, view, help})
    for (QAction* a : m->actions()) addAction(a);

  QToolBar* bar = addToolBar(tr("Main"));
  bar->setObjectName("toolbar_main");
  bar->addAction(open);
  bar->addAction(save);
  bar->addSeparator();
  bar->addWidget(new QLabel(tr(" Target: "), bar));
  target_combo_ = new QComboBox(bar);
  target_combo_->setObjectName("target_picker");
  target_combo_->setToolTip(tr("The target the graph passes compile for (from the registered target kinds)"));
  bar->addWidget(target_combo_);
  refresh_targets();
  connect(target_combo_, &QComboBox::currentTextChanged, this, [this](const QString& target) {
    if (!target.isEmpty() && controller_->has_document()) controller_->set_target(target);
  });
  bar->addAction(recompile);
  bar->addSeparator();
  QList<QAction*> graph_actions = panes_.graph->pane_actions();
  bar->addAction(graph_actions[0]);  // fit
  bar->addAction(graph_actions[3]);  // find
  bar->addSeparator();
  for (QAction* a : panes_.passes->pane_actions()) bar->addAction(a);
}

void MainWindow::build_kernel_menu() {
  auto action = [this](QMenu* menu, const QString& text, QKeySequence key, std::function<void()> fn) {
    QAction* a = menu->addAction(text);
    a->setShortcut(key);
    connect(a, &QAction::triggered, this, [fn = std::move(fn)] { fn(); });
    addAction(a);
    return a;
  };
  QMenu* kernel = menuBar()->addMenu(tr("&Kernel"));
  action(kernel, tr("&Reset Schedule to Default"), {}, [this] { panes_.schedule->reset_to_default(); });
  kernel->addSeparator();
  action(kernel, tr("&Profile Model"), QKeySequence(Qt::Key_F6), [this] {
    if (!controller_->snapshot()) return;
    panes_.profile->set_profiling();
    edit_loop_->profile_model();
    reveal_pane("profile");
  });
  action(kernel, tr("&Calibrate Machine Ceilings"), {}, [this] { start_calibration(); });
  kernel->addSeparator();
  auto export_file = [this](const QString& title, const QString& suggestion, const QString& filter,
                            std::function<bool(const QString&, QString*)> write) {
    QString path = QFileDialog::getSaveFileName(this, title, suggestion, filter);
    if (path.isEmpty()) return;
    QString error;
    if (write(path, &error))
      statusBar()->showMessage(tr("Exported %1").arg(path), 4000);
    else
      show_banner(error.isEmpty() ? tr("%1: cannot write").arg(path) : error, true);
  };
  action(kernel, tr("Export Roofline as &PNG…"), {}, [this, export_file] {
    export_file(tr("Export Roofline"), "roofline.png", "PNG (*.png)",
                [this](const QString& p, QString*) { return panes_.roofline->export_png(p); });
  });
  action(kernel, tr("Export Roofline as &SVG…"), {}, [this, export_file] {
    export_file(tr("Export Roofline"), "roofline.svg", "SVG (*.svg)",
                [this](const QString& p, QString*) { return panes_.roofline->export_svg(p); });
  });
  action(kernel, tr("Export Profile as Chrome &Trace…"), {}, [this, export_file] {
    export_file(tr("Export Profile"), "profile.json", "Chrome trace (*.json)",
                [this](const QString& p, QString* e) { return panes_.profile->export_chrome_trace(p, e); });
  });
  action(kernel, tr("Export Profile as &CSV…"), {}, [this, export_file] {
    export_file(tr("Export Profile"), "profile.csv", "CSV (*.csv)",
                [this](const QString& p, QString* e) { return panes_.profile->export_csv(p, e); });
  });
}

void MainWindow::start_calibration() {
  if (edit_loop_->is_calibrating()) return;
  edit_loop_->calibrate(options_.quick_calibration);
  calibration_job_->start(tr("Calibrating machine ceilings"));
}

void MainWindow::build_lessons_menu() {
  QMenu* lessons = menuBar()->addMenu(tr("&Lessons"));
  for (const std::string& file : views::lesson_files(options_.lessons_dir.toStdString())) {
    QString path = QString::fromStdString(file);
    QString title = QFileInfo(path).completeBaseName();
    try {
      title = QString::fromStdString(views::load_lesson(file).title);
    } catch (const std::exception& e) {
      panes_.diagnostics->model()->add({views::Diagnostic::Severity::kWarning, "lessons", e.what()});
      continue;
    }
    QAction* a = lessons->addAction(title);
    connect(a, &QAction::triggered, this, [this, path] { start_lesson(path); });
  }
  lessons->setEnabled(!lessons->actions().isEmpty());
}

void MainWindow::start_lesson(const QString& path, int page) {
  views::Lesson lesson;
  try {
    lesson = views::load_lesson(path.toStdString());
  } catch (const std::exception& e) {
    show_banner(QString::fromStdString(e.what()), true);
    return;
  }
  if (!gate_->confirm_replace(tr("Starting the lesson “%1”").arg(QString::fromStdString(lesson.title)))) return;
  run_lesson(std::move(lesson), path, page, false);
}

// A lesson drives the real panes: its pages open models, pick kernels, set schedules and profile
// through the same controller, selection and edit loop the user's clicks go through. Actions that
// need the page's model wait for its compile (StudioMediator::after_compile). `resume`: the session
// is already the page's (restored after a crash), so the page's actions are not run again.
void MainWindow::run_lesson(views::Lesson lesson, const QString& path, int page, bool resume) {
  views::LessonActions actions;
  // A page's target shows in the target picker as if the user had picked it.
  auto show_target = [this](const std::string& target) {
    QSignalBlocker block(target_combo_);
    target_combo_->setCurrentText(QString::fromStdString(target));
  };
  actions.open_model = [this, show_target](const QString& model, const nlohmann::json& options, const QString& target) {
    views::SessionDocument doc;
    doc.model_path = QFileInfo(model).absoluteFilePath().toStdString();
    doc.pass_options = options;
    doc.target = !target.isEmpty()             ? target.toStdString()
                 : controller_->has_document() ? controller_->document().target
                                               : views::default_session_target();
    controller_->open_document(doc, {}, false);
    show_target(doc.target);
    center_->setCurrentWidget(panes_.graph);
  };
  actions.set_target = [this, show_target](const QString& target) {
    controller_->set_target(target);
    show_target(target.toStdString());
  };
  actions.select_kernel = [this](const QString& kernel) {
    mediator_->after_compile([this, kernel] { selection_->set_kernel(kernel); });
  };
  actions.set_schedule = [this](const QString& kernel, const schedule::Schedule& s) {
    mediator_->after_compile([this, kernel, s] { mediator_->apply_schedule(kernel, s); });
  };
  actions.reset_schedule = [this](const QString& kernel) {
    mediator_->after_compile([this, kernel] { mediator_->reset_schedule(kernel); });
  };
  actions.profile = [this] {
    mediator_->after_compile([this] {
      panes_.profile->set_profiling();
      edit_loop_->profile_model();
    });
  };
  lesson_runner_ = std::make_unique<views::LessonRunner>(std::move(lesson), std::move(actions));
  lesson_runner_->on_result = [this](int) { lesson_pane_->refresh(); };
  // The page is autosaved with the session, so a crash does not lose the user's place.
  lesson_runner_->on_page_changed = [this, path](int p) { controller_->set_lesson_position(path, p); };
  lesson_pane_->set_runner(lesson_runner_.get());
  if (resume)
    lesson_runner_->resume_at(page);
  else
    lesson_runner_->go_to(page);
  lesson_pane_->refresh();
  reveal_pane("lesson");
}

void MainWindow::refresh_targets() {
  QSignalBlocker block(target_combo_);
  target_combo_->clear();
  for (const std::string& t : views::available_targets()) target_combo_->addItem(QString::fromStdString(t));
  // No session yet: show what a new one starts on (the best code generator loaded).
  target_combo_->setCurrentText(QString::fromStdString(views::default_session_target()));
}

QWidget* MainWindow::focused_pane() const {
  const FocusFrame* frame = focus_frame_;
  return frame->isVisible() ? frame->target() : nullptr;
}

QWidget* MainWindow::pane_by_name(const QString& name) const {
  if (name == "graph") return panes_.graph;
  if (name == "passes") return panes_.passes;
  if (name == "inspector") return panes_.inspector;
  if (name == "memory") return panes_.memory;
  if (name == "diagnostics") return panes_.diagnostics;
  if (name == "welcome") return welcome_;
  if (name == "schedule") return panes_.schedule;
  if (name == "program") return panes_.program;
  if (name == "roofline") return panes_.roofline;
  if (name == "profile") return panes_.profile;
  if (name == "lesson") return lesson_pane_;
  if (name == "tuning") return panes_.tuning;
  return nullptr;
}

void MainWindow::reveal_pane(const QString& name) {
  QWidget* pane = pane_by_name(name);
  if (!pane) return;
  if (pane == welcome_ || pane == panes_.graph) {
    center_->setCurrentWidget(pane);
    return;
  }
  if (auto* dock = qobject_cast<QDockWidget*>(pane->parentWidget())) {
    dock->show();
    dock->raise();
  }
}

void MainWindow::open_file(const QString& path) {
  if (!QFileInfo::exists(path)) {
    show_banner(tr("%1: no such file").arg(path), true);
    return;
  }
  if (!gate_->confirm_replace(tr("Opening %1").arg(QFileInfo(path).fileName()))) return;
  try {
    if (path.endsWith(".tessel"))
      controller_->open_session(path);
    else
      controller_->open_model(path);
  } catch (const std::exception& e) {
    views::Diagnostic d{views::Diagnostic::Severity::kError, "session", e.what()};
    panes_.diagnostics->model()->add(d);
    show_banner(QString::fromStdString(e.what()), true);
    return;
  }
  add_recent(path);
  center_->setCurrentWidget(panes_.graph);
  QSignalBlocker block(target_combo_);
  int index = target_combo_->findText(QString::fromStdString(controller_->document().target));
  if (index < 0) {
    target_combo_->addItem(QString::fromStdString(controller_->document().target));
    index = target_combo_->count() - 1;
  }
  target_combo_->setCurrentIndex(index);
}

void MainWindow::open_dialog() {
  QString path = QFileDialog::getOpenFileName(this, tr("Open Model or Session"), options_.models_dir,
                                              tr("Models and sessions (*.onnx *.tessel *.tgraph);;All files (*)"));
  if (!path.isEmpty()) open_file(path);
}

void MainWindow::export_graph(const QString& format) {
  QString path = QFileDialog::getSaveFileName(this, tr("Export Graph"), "graph." + format,
                                              format.toUpper() + " (*." + format + ")");
  if (path.isEmpty()) return;
  try {
    if (format == "svg")
      panes_.graph->export_svg(path);
    else if (format == "png")
      panes_.graph->export_png(path);
    else
      panes_.graph->export_dot(path);
    statusBar()->showMessage(tr("Exported %1").arg(path), 4000);
  } catch (const std::exception& e) {
    show_banner(QString::fromStdString(e.what()), true);
  }
}

void MainWindow::show_banner(const QString& text, bool error,
                             std::vector<std::pair<QString, std::function<void()>>> buttons) {
  banner_label_->setText(text);
  banner_sticky_ = false;
  QPalette p = banner_->palette();
  bool dark = palette().color(QPalette::Window).lightness() < 128;
  QColor bg = error ? (dark ? QColor(110, 40, 40) : QColor(255, 225, 225))
                    : (dark ? QColor(40, 70, 110) : QColor(225, 238, 255));
  p.setColor(QPalette::Window, bg);
  banner_->setPalette(p);
  qDeleteAll(banner_buttons_->findChildren<QPushButton*>());
  for (auto& [label, fn] : buttons) {
    auto* b = new QPushButton(label, banner_buttons_);
    connect(b, &QPushButton::clicked, this, [fn = fn] { fn(); });
    banner_buttons_->layout()->addWidget(b);
  }
  banner_->show();
}

void MainWindow::hide_banner() {
  // A recovery offer outlives the messages shown over it: it is answered or dismissed (✕).
  if (recovered_)
    show_recovery_offer();
  else if (!banner_sticky_)
    banner_->hide();
}

QString MainWindow::banner_text() const { return banner_->isHidden() ? QString() : banner_label_->text(); }

void MainWindow::add_recent(const QString& path) {
  QSettings settings;
  QStringList recent = settings.value("recent_files").toStringList();
  QString absolute = QFileInfo(path).absoluteFilePath();
  recent.removeAll(absolute);
  recent.prepend(absolute);
  while (recent.size() > kMaxRecent) recent.removeLast();
  settings.setValue("recent_files", recent);
  rebuild_recent_menu();
}

void MainWindow::rebuild_recent_menu() {
  QStringList recent = QSettings().value("recent_files").toStringList();
  recent_menu_->clear();
  for (const QString& path : recent) {
    QAction* a = recent_menu_->addAction(QFileInfo(path).fileName());
    a->setToolTip(path);
    connect(a, &QAction::triggered, this, [this, path] { open_file(path); });
  }
  recent_menu_->setEnabled(!recent.isEmpty());
  welcome_->set_recent_files(recent);
}

void MainWindow::update_title() {
  QString name = controller_->session_path().isEmpty()
                     ? QFileInfo(QString::fromStdString(controller_->document().model_path)).fileName()
                     : QFileInfo(controller_->session_path()).fileName();
  setWindowTitle(name.isEmpty() ? tr("Tessel Studio")
                                : tr("%1%2 — Tessel Studio").arg(name, controller_->is_modified() ? "*" : ""));
}

void MainWindow::set_theme(Theme theme) {
  theme_ = theme;
  QSettings().setValue("view/theme", static_cast<int>(theme));
  if (theme == Theme::kDark) {
    QApplication::setStyle(QStyleFactory::create("Fusion"));
    QApplication::setPalette(dark_palette());
  } else if (theme == Theme::kLight) {
    QApplication::setStyle(QStyleFactory::create("Fusion"));
    QApplication::setPalette(QApplication::style()->standardPalette());
  } else {
    QApplication::setPalette(system_palette_);
  }
  panes_.graph->refresh_colors();
}

void MainWindow::changeEvent(QEvent* event) {
  // The system switched between light and dark while we follow it.
  if (event->type() == QEvent::ThemeChange && theme_ == Theme::kSystem) {
    system_palette_ = QApplication::style()->standardPalette();
    QApplication::setPalette(system_palette_);
  }
  if (event->type() == QEvent::PaletteChange) panes_.graph->refresh_colors();
  QMainWindow::changeEvent(event);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!gate_->confirm_replace(tr("Closing the studio"))) {
    event->ignore();
    return;
  }
  save_layout();
  controller_->cancel();
  // A clean close: nothing to recover next time (a recovery offer still unanswered is kept).
  controller_->discard_recovery();
  event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  for (const QUrl& url : event->mimeData()->urls())
    if (url.isLocalFile()) {
      event->acceptProposedAction();
      return;
    }
}

void MainWindow::dropEvent(QDropEvent* event) {
  for (const QUrl& url : event->mimeData()->urls())
    if (url.isLocalFile()) {
      event->acceptProposedAction();
      // After the drop returns: the unsaved-changes question must not run inside the drag.
      QTimer::singleShot(0, this, [this, path = url.toLocalFile()] { open_file(path); });
      return;
    }
}

}  // namespace tessel::studio
