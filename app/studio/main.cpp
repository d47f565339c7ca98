// tessel-studio [FILE]
// tessel-studio --open FILE --screenshot out.png [--pane NAME] [--size 1280x820]
//
// Without a file the studio opens the first bundled sample. With --screenshot it renders the window
// (or one pane) once the model is compiled and laid out, writes the PNG and exits: tests and
// documentation use it headless (QT_QPA_PLATFORM=offscreen).
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QPixmap>
#include <QTimer>
#include <cstdio>

#include "app/studio/main_window.h"
#include "views/diagnostics/diagnostics_model.h"
#include "views/diagnostics/diagnostics_pane.h"

namespace {

QString models_dir() {
  QString env = qEnvironmentVariable("TESSEL_MODELS_DIR");
  return env.isEmpty() ? QStringLiteral(TESSEL_SOURCE_DIR "/resources/models") : env;
}

QString lessons_dir() {
  QString env = qEnvironmentVariable("TESSEL_LESSONS_DIR");
  return env.isEmpty() ? QStringLiteral(TESSEL_SOURCE_DIR "/resources/lessons") : env;
}

// Selects something worth inspecting: the anchor of the biggest fusion group, else the first op.
void select_interesting_node(tessel::studio::MainWindow& w) {
  auto snap = w.controller()->snapshot();
  if (!snap || !snap->optimized || snap->optimized->nodes.empty()) return;
  const tessel::Graph& g = *snap->optimized;
  tessel::NodeId pick = 0;
  if (snap->fusion) {
    size_t best = 0;
    for (const tessel::FusionGroup& group : snap->fusion->groups)
      if (group.nodes.size() > best && group.anchor >= 0) best = group.nodes.size(), pick = group.anchor;
  }
  w.selection()->set_node(QString::fromStdString(g.nodes[static_cast<size_t>(pick)].name));
  if (snap->fusion)
    for (const tessel::FusionGroup& group : snap->fusion->groups)
      if (group.anchor == pick) w.selection()->set_kernel(QString::fromStdString(group.kernel_name));
}

// The kernel panes show measured results: wait for the selected kernel's lowering and measurement
// (and for a whole-model profile when the profile or roofline pane is asked for).
bool wait_for_kernel_results(tessel::studio::MainWindow& w, const QString& pane_name) {
  if (pane_name == "profile" || pane_name == "roofline" || pane_name.isEmpty()) w.edit_loop()->profile_model();
  return w.edit_loop()->wait_until_idle(120000);
}

int take_screenshot(tessel::studio::MainWindow& w, const QString& pane_name, const QString& out) {
  QWidget* target = pane_name.isEmpty() ? &w : w.pane_by_name(pane_name);
  if (!target) {
    std::fprintf(stderr,
                 "tessel-studio: unknown pane '%s' (graph, passes, inspector, memory, diagnostics, welcome, "
                 "schedule, program, roofline, profile, lesson, tuning)\n",
                 qPrintable(pane_name));
    return 2;
  }
  if (w.controller()->has_document()) {
    if (!w.controller()->wait_until_idle(120000)) {
      std::fprintf(stderr, "tessel-studio: compiling did not finish in time\n");
      return 1;
    }
    w.panes().graph->wait_for_layout(60000);
    select_interesting_node(w);
    if (!wait_for_kernel_results(w, pane_name))
      std::fprintf(stderr, "tessel-studio: measuring did not finish in time\n");
  }
  if (!pane_name.isEmpty()) w.reveal_pane(pane_name);
  QApplication::processEvents();
  if (!target->grab().save(out, "PNG")) {
    std::fprintf(stderr, "tessel-studio: cannot write %s\n", qPrintable(out));
    return 1;
  }
  // Headless, the console is where the user reads what the window shows: the banner (a set-aside
  // recovery file, a refused file) and every diagnostic (the snapshot's and the studio's own, such
  // as a plugin that did not load).
  if (const QString banner = w.banner_text(); !banner.isEmpty())
    std::fprintf(stderr, "tessel-studio: %s\n", qPrintable(banner));
  for (const auto& d : w.panes().diagnostics->model()->diagnostics())
    std::fprintf(stderr, "%s: %s\n", d.stage.c_str(), d.message.c_str());
  return 0;
}

// The command line, declared once: main() parses it twice at most (see there).
struct StudioOptions {
  QCommandLineOption open{"open", "Open FILE.", "FILE"};
  QCommandLineOption screenshot{"screenshot", "Render headless to PNG and exit.", "PNG"};
  QCommandLineOption pane{"pane", "With --screenshot: only this pane.", "NAME"};
  QCommandLineOption size{"size", "Window size, WIDTHxHEIGHT.", "SIZE", "1280x820"};
  QCommandLineOption target{"set-target", "After opening, compile for TARGET (an edit: it is autosaved).", "TARGET"};
  QCommandLineOption recovery{"recovery-file", "Autosave / crash-recovery file.", "PATH"};
  QCommandLineOption restore{"restore", "Restore the recovery file without asking."};

  void declare(QCommandLineParser& parser) const {
    parser.setApplicationDescription("Tessel Studio: watch and steer the compiler.");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument("file", "An ONNX model, a graph text file or a .tessel session.", "[FILE]");
    parser.addOptions({open, screenshot, pane, size, target, recovery, restore});
  }
};

void name_application() {
  QCoreApplication::setOrganizationName("Tessel");
  QCoreApplication::setApplicationName("Tessel Studio");
  QCoreApplication::setApplicationVersion(TESSEL_VERSION);
}

// --help and --version are answered on the console before any window system is touched: a
// QApplication aborts when there is no display, and asking for help must never need one. Anything
// else (including Qt's own -platform/-style arguments) is left to the QApplication's parse.
void answer_console_requests(int argc, char** argv, const StudioOptions& options) {
  const QStringList console_only = {"-h", "--help", "-?", "--help-all", "-v", "--version"};
  bool asked = false;
  for (int i = 1; i < argc; ++i) asked = asked || console_only.contains(QString::fromLocal8Bit(argv[i]));
  if (!asked) return;
  QCoreApplication console(argc, argv);
  name_application();
  QCommandLineParser parser;
  options.declare(parser);
  parser.process(console);  // prints help, version or the error and exits; returns on a valid line
}

}  // namespace

int main(int argc, char** argv) {
  const StudioOptions opts;
  answer_console_requests(argc, argv, opts);
  QApplication app(argc, argv);
  name_application();
  QCommandLineParser parser;
  opts.declare(parser);
  parser.process(app);
  const QCommandLineOption &open_opt = opts.open, &shot_opt = opts.screenshot, &pane_opt = opts.pane,
                           &size_opt = opts.size, &target_opt = opts.target, &recovery_opt = opts.recovery,
                           &restore_opt = opts.restore;

  QString file = parser.value(open_opt);
  if (file.isEmpty() && !parser.positionalArguments().isEmpty()) file = parser.positionalArguments().first();
  const bool screenshot = parser.isSet(shot_opt);

  tessel::studio::MainWindowOptions options;
  options.models_dir = models_dir();
  options.lessons_dir = lessons_dir();
  options.recovery_path = parser.value(recovery_opt);
  // Always read: a recovery found at start is held (never overwritten by this run's autosave) until
  // it is restored or discarded, screenshot runs included; --restore restores it without asking.
  options.offer_recovery = true;
  // A screenshot run is no user session: it leaves the recovery file alone (unless it restores it).
  options.autosave = !screenshot || parser.isSet(restore_opt);
  tessel::studio::MainWindow window(options);
  QStringList size = parser.value(size_opt).split('x');
  if (size.size() == 2) window.resize(size[0].toInt(), size[1].toInt());

  if (parser.isSet(restore_opt) && window.restore_recovered()) {
    std::fprintf(stderr, "tessel-studio: restored the recovered session (%s)\n",
                 qPrintable(QString::fromStdString(window.controller()->document().model_path)));
  } else if (!file.isEmpty()) {
    window.open_file(file);
  } else if (!window.has_recovery_offer()) {
    QString sample = tessel::views::WelcomePane::default_sample(options.models_dir);
    if (!sample.isEmpty()) window.open_file(sample);
  }
  if (parser.isSet(target_opt)) window.controller()->set_target(parser.value(target_opt));

  window.show();
  if (screenshot) return take_screenshot(window, parser.value(pane_opt), parser.value(shot_opt));
  return app.exec();
}
