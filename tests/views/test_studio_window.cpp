// The studio as a user drives it: open the default sample, click a node and read the inspector,
// step through passes and see the differences, use the command palette, keep the pane layout;
// and the headless screenshots of every pane (tessel-studio --screenshot, a child process).
#include <QDockWidget>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProcess>
#include <QSettings>
#include <QTabBar>
#include <QTableView>
#include <QTextBrowser>
#include <QtTest>

#include "app/studio/command_palette.h"
#include "app/studio/main_window.h"
#include "studio_fixtures.h"
#include "studio_window_fixtures.h"
#include "views/graph/graph_items.h"
#include "views/profile/profile_table_model.h"

using namespace tessel;
using namespace tessel::views;
using tessel::studio::MainWindow;

class StudioWindowTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir home_;

  std::unique_ptr<MainWindow> open_sample() {
    auto w = test::show_window(test::window_options(home_.path()));
    if (!test::open_and_wait(*w, test::sample_model())) return nullptr;
    return w;
  }

  // What the user sees of the graph: readable, no node cut by the view's edges across its width
  // (when the graph fits across) and none beneath the minimap. Empty when all is well.
  static QString placement_problem(MainWindow& w) {
    GraphPane* pane = w.panes().graph;
    QGraphicsView* view = pane->view();
    const double scale = view->transform().m11();
    if (scale < GraphPane::kMinReadableScale - 1e-9) return QString("zoomed out to %1").arg(scale);
    const QRect port = view->viewport()->rect();
    const QRectF drawn = view->mapFromScene(pane->scene()->itemsBoundingRect()).boundingRect();
    const bool fits_across = drawn.width() <= port.width();
    QRect minimap = pane->minimap()->isVisible() ? pane->minimap()->geometry() : QRect();
    minimap.translate(-view->viewport()->pos());
    int visible = 0;
    for (QGraphicsItem* item : pane->scene()->items()) {
      if (item->type() != NodeItem::kType) continue;
      const QRect r = view->mapFromScene(item->sceneBoundingRect()).boundingRect();
      if (!r.intersects(port)) continue;
      ++visible;
      const QString name = QString::fromStdString(static_cast<NodeItem*>(item)->node().name);
      if (fits_across && (r.left() < port.left() || r.right() > port.right())) return name + " is cut off";
      if (!minimap.isNull() && r.intersects(minimap)) return name + " is under the minimap";
    }
    return visible > 0 ? QString() : QString("no node visible");
  }

  // The title of the dock in front of the tab group that holds the dock titled `title`.
  static QString front_tab(MainWindow& w, const QString& title) {
    for (QTabBar* bar : w.findChildren<QTabBar*>(QString(), Qt::FindDirectChildrenOnly))
      for (int i = 0; i < bar->count(); ++i)
        if (bar->tabText(i) == title) return bar->tabText(bar->currentIndex());
    return {};
  }

  static NodeItem* node_item(MainWindow& w, const QString& name) {
    for (QGraphicsItem* item : w.panes().graph->scene()->items())
      if (item->type() == NodeItem::kType && static_cast<NodeItem*>(item)->node().name == name.toStdString())
        return static_cast<NodeItem*>(item);
    return nullptr;
  }

 private Q_SLOTS:
  void initTestCase() {
    test::isolate_studio("studio_window_test", home_.path());  // the kernel panes measure for real
  }

  void welcome_lists_the_samples_and_the_default_is_the_resnet_block() {
    QString dir = QFileInfo(test::sample_model()).absolutePath();
    QCOMPARE(QFileInfo(WelcomePane::default_sample(dir)).fileName(), QString("resnet_block.onnx"));
    WelcomePane welcome;
    welcome.set_samples_dir(dir);
    QStringList names;
    for (const QString& s : welcome.samples()) names << QFileInfo(s).completeBaseName();
    for (const char* expected : {"resnet_block", "mlp", "mobilenet_block", "attention_block"})
      QVERIFY2(names.contains(expected), qPrintable(names.join(",")));
  }

  void clicking_a_node_fills_the_inspector() {
    auto w = open_sample();
    QVERIFY(w);
    // The optimized graph is shown; the first conv is there under its original name or its blocked form.
    NodeItem* relu = node_item(*w, "/layer1/relu/Relu");
    QVERIFY(relu);
    relu->setSelected(true);
    QCOMPARE(w->selection()->node(), QString("/layer1/relu/Relu"));
    InspectorModel* inspector = w->panes().inspector->model();
    QCOMPARE(inspector->value_of("op"), QString("Relu"));
    QCOMPARE(inspector->value_of("(none)", "Attributes"), QString());  // Relu has no attributes
    QVERIFY(inspector->find("(none)", "Attributes"));
    // Back to the imported graph: the Conv there has its ONNX attributes.
    w->selection()->set_pass(-1);
    QVERIFY(w->panes().graph->wait_for_layout(30000));
    w->selection()->set_node("/layer1/conv1/Conv");
    QCOMPARE(inspector->value_of("kernel_shape", "Attributes"), QString("[3,3]"));
    QCOMPARE(inspector->value_of("strides", "Attributes"), QString("[1,1]"));
    QVERIFY(node_item(*w, "/layer1/conv1/Conv")->isSelected());
  }

  void stepping_passes_highlights_what_each_pass_changed() {
    auto w = open_sample();
    QVERIFY(w);
    StudioSnapshotPtr snap = w->controller()->snapshot();
    int simplify = test::pass_index(*snap, "simplify_inference");
    QVERIFY(simplify > 0);
    // Keyboard stepping: from the last pass back to simplify_inference, one pass at a time.
    QCOMPARE(w->selection()->pass(), snap->last_pass());
    for (int p = snap->last_pass(); p > simplify; --p) w->panes().passes->step(-1);
    QCOMPARE(w->selection()->pass(), simplify);
    QVERIFY(w->panes().graph->wait_for_layout(30000));
    QCOMPARE(w->panes().graph->shown_pass(), simplify);
    // Both batch norms are drawn ghosted (removed), and the pass list row is the selected one.
    int removed = 0;
    for (QGraphicsItem* item : w->panes().graph->scene()->items())
      if (item->type() == NodeItem::kType &&
          static_cast<NodeItem*>(item)->node().change == DisplayNode::Change::kRemoved) {
        QCOMPARE(static_cast<NodeItem*>(item)->node().op, std::string("BatchNormalization"));
        ++removed;
      }
    QCOMPARE(removed, 2);
    QVERIFY(w->panes().graph->status_text().contains("2 removed"));
    QModelIndex current = w->panes().passes->view()->currentIndex();
    QCOMPARE(w->panes().passes->model()->pass_of_row(current.row()), simplify);
    // Hide unchanged passes: stepping only lands on passes that changed the graph.
    w->panes().passes->set_hide_unchanged(true);
    w->selection()->set_pass(-1);
    for (int k = 0; k < 4; ++k) {
      w->panes().passes->step(+1);
      int p = w->selection()->pass();
      QVERIFY(p >= 0);
      QVERIFY2(snap->pass_changed(p), snap->passes[static_cast<size_t>(p)]->name.c_str());
    }
  }

  // Issue 18: fuse_ops, the pass that makes the kernels, was shown "unchanged" and greyed out, so
  // "Hide unchanged passes" hid it. Grouping is a change.
  void fuse_ops_is_shown_as_a_change() {
    auto w = open_sample();
    QVERIFY(w);
    StudioSnapshotPtr snap = w->controller()->snapshot();
    const int fuse = test::pass_index(*snap, "fuse_ops");
    QVERIFY(fuse >= 0);
    QVERIFY(!snap->passes[static_cast<size_t>(fuse)]->changed);  // the core's record: no node changed
    QCOMPARE(snap->grouping_pass, fuse);
    QVERIFY(snap->pass_changed(fuse));
    PassListModel* model = w->panes().passes->model();
    w->panes().passes->set_hide_unchanged(true);
    const int row = model->row_of_pass(fuse);
    QVERIFY(row >= 0);
    QCOMPARE(model->data(model->index(row, PassListModel::kChanged), Qt::DisplayRole).toString(), QString("grouped"));
    QVERIFY(!model->data(model->index(row, PassListModel::kName), Qt::ForegroundRole).isValid());  // not grey
    QVERIFY(model->data(model->index(row, PassListModel::kChanged), Qt::ToolTipRole).toString().contains("kernel"));
    // Stepping with unchanged passes hidden lands on it.
    w->selection()->set_pass(fuse - 1);
    w->panes().passes->step(+1);
    QCOMPARE(w->selection()->pass(), fuse);
    w->panes().passes->set_hide_unchanged(false);
  }

  // Issue 18: a tall graph was placed against the right edge with nodes cut off (again after
  // stepping to fuse_ops), the minimap covered nodes, and Fit Graph zoomed out until nothing was
  // readable.
  void the_graph_opens_readable_centred_and_clear_of_the_minimap() {
    auto w = open_sample();
    QVERIFY(w);
    for (const char* model : {"mobilenet_block", "attention_block", "resnet_block"}) {
      w->open_file(test::sample_model(model));
      QVERIFY(w->controller()->wait_until_idle(60000));
      QVERIFY(w->panes().graph->wait_for_layout(30000));
      QCoreApplication::processEvents();
      QString problem = placement_problem(*w);
      QVERIFY2(problem.isEmpty(), qPrintable(QString(model) + " opened: " + problem));
      StudioSnapshotPtr snap = w->controller()->snapshot();
      w->selection()->set_pass(test::pass_index(*snap, "fuse_ops"));
      QVERIFY(w->panes().graph->wait_for_layout(30000));
      problem = placement_problem(*w);
      QVERIFY2(problem.isEmpty(), qPrintable(QString(model) + " at fuse_ops: " + problem));
      w->panes().graph->fit();
      problem = placement_problem(*w);
      QVERIFY2(problem.isEmpty(), qPrintable(QString(model) + " after Fit Graph: " + problem));
      // The selected node stays in view across pass changes.
      const std::string last = snap->optimized->nodes.back().name;
      w->selection()->set_node(QString::fromStdString(last));
      w->selection()->set_pass(snap->last_pass());
      QVERIFY(w->panes().graph->wait_for_layout(30000));
      NodeItem* item = node_item(*w, QString::fromStdString(last));
      QVERIFY(item);
      QGraphicsView* view = w->panes().graph->view();
      QVERIFY2(view->viewport()->rect().contains(view->mapFromScene(item->sceneBoundingRect().center())), model);
      // A bigger window: the graph follows the size until the user moves it.
      w->resize(1600, 1000);
      QCoreApplication::processEvents();
      problem = placement_problem(*w);
      QVERIFY2(problem.isEmpty(), qPrintable(QString(model) + " at 1600x1000: " + problem));
      w->resize(1280, 820);
      QCoreApplication::processEvents();
    }
  }

  // Issue 18: after opening another model, the Schedule and Program panes still showed the old
  // model's kernel.
  void opening_another_model_resets_the_kernel_panes() {
    auto w = open_sample();
    QVERIFY(w);
    const QString kernel = QString::fromStdString(w->controller()->snapshot()->fusion->groups.front().kernel_name);
    w->selection()->set_kernel(kernel);
    QCOMPARE(w->panes().schedule->kernel(), kernel);
    QTRY_VERIFY_WITH_TIMEOUT(w->panes().program->lowering() != nullptr, 60000);
    QCOMPARE(QString::fromStdString(w->panes().program->lowering()->kernel), kernel);
    w->open_file(test::sample_model("mlp"));
    QVERIFY(w->controller()->wait_until_idle(60000));
    QVERIFY(w->edit_loop()->wait_until_idle(60000));
    QCoreApplication::processEvents();
    QVERIFY(w->selection()->kernel().isEmpty());
    QVERIFY(w->panes().schedule->kernel().isEmpty());
    QVERIFY(!w->panes().schedule->isEnabled());
    QVERIFY(w->panes().schedule->entries().empty());
    QVERIFY(!w->panes().program->lowering());
    // Recompiling the same model (a target change) keeps the kernel the user is working on.
    const QString mlp_kernel = QString::fromStdString(w->controller()->snapshot()->fusion->groups.front().kernel_name);
    w->selection()->set_kernel(mlp_kernel);
    w->controller()->set_target("ref -vector_bits=256");
    QVERIFY(w->controller()->wait_until_idle(60000));
    QCOMPARE(w->selection()->kernel(), mlp_kernel);
    QCOMPARE(w->panes().schedule->kernel(), mlp_kernel);
  }

  void command_palette_finds_and_runs_actions() {
    auto w = open_sample();
    QVERIFY(w);
    studio::CommandPalette* palette = w->command_palette();
    palette->open_palette();
    QList<QAction*> found = palette->matching("next pass");
    QCOMPARE(found.size(), 1);
    QCOMPARE(found[0]->text(), QString("Next Pass"));
    QVERIFY(!palette->matching("graph fit").isEmpty());
    QVERIFY(palette->matching("xyzzy").isEmpty());
    w->selection()->set_pass(-1);
    palette->edit()->setText("next pass");
    QVERIFY(palette->trigger_current());
    QCOMPARE(w->selection()->pass(), 0);
    // Every menu action with a shortcut is reachable by its name.
    QVERIFY(!palette->matching("save session as").isEmpty());
    QVERIFY(!palette->matching("find node").isEmpty());
  }

  void pane_layout_survives_a_restart() {
    {
      auto w = open_sample();
      QVERIFY(w);
      auto* dock = w->findChild<QDockWidget*>("dock_inspector");
      QVERIFY(dock && dock->isVisible());
      dock->hide();
      QVERIFY(w->close());
    }
    auto again = open_sample();
    QVERIFY(again);
    auto* dock = again->findChild<QDockWidget*>("dock_inspector");
    QVERIFY(dock && !dock->isVisible());
    dock->show();
    QVERIFY(again->close());
    QSettings settings;
    QVERIFY(settings.contains("window/state"));
    QVERIFY(settings.value("recent_files").toStringList().contains(QFileInfo(test::sample_model()).absoluteFilePath()));
  }

  // Issue 18 "A layout that can be read": at common window sizes every pane gets room to be read
  // (the program's code ≥ 60 characters, the profile table ≥ 8 rows, the lesson text ≥ 15 lines,
  // the inspector's description inside the pane), and the graph still gets a third of the width.
  // Screenshots of each pane go to the folder printed below.
  void panes_are_readable_at_common_window_sizes() {
    const QString out = QDir(QCoreApplication::applicationDirPath()).filePath("studio_layout_screenshots");
    QDir().mkpath(out);
    qInfo("pane screenshots: %s", qPrintable(out));
    for (const QSize size : {QSize(1280, 820), QSize(1600, 1000)}) {
      const QString at = QString("%1x%2").arg(size.width()).arg(size.height());
      auto w = open_sample();
      QVERIFY(w);
      w->resize(size);
      w->reset_layout();
      QCoreApplication::processEvents();
      auto dock_width = [&](const char* name) {
        auto* d = w->findChild<QDockWidget*>(QString("dock_") + name);
        return QString("%1 %2 (min %3)").arg(name).arg(d->width()).arg(d->minimumSizeHint().width());
      };
      QVERIFY2(w->panes().graph->width() >= size.width() / 3,
               qPrintable(at + QString(": graph %1, ").arg(w->panes().graph->width()) + dock_width("passes") + ", " +
                          dock_width("schedule") + ", " + dock_width("inspector") + ", " + dock_width("program") +
                          ", " + dock_width("roofline") + ", " + dock_width("lesson")));

      w->reveal_pane("program");
      QCoreApplication::processEvents();
      QPlainTextEdit* code = w->panes().program->program_edit();
      const int chars = code->viewport()->width() / code->fontMetrics().horizontalAdvance('x');
      QVERIFY2(chars >= 60, qPrintable(at + ": program code " + QString::number(chars) + " characters wide"));

      w->reveal_pane("profile");
      QCoreApplication::processEvents();
      QTableView* table = w->panes().profile->table();
      const int rows = (table->viewport()->height()) / table->verticalHeader()->defaultSectionSize();
      QVERIFY2(rows >= 8, qPrintable(at + ": profile table shows " + QString::number(rows) + " rows"));

      const std::string node = w->controller()->snapshot()->optimized->nodes.front().name;
      w->selection()->set_node(QString::fromStdString(node));
      w->reveal_pane("inspector");
      QCoreApplication::processEvents();
      QTableView* inspector = w->panes().inspector->view();
      const int description = InspectorModel::kDescription;
      QVERIFY2(inspector->columnViewportPosition(description) + inspector->columnWidth(description) <=
                   inspector->viewport()->width() + 1,
               qPrintable(at + ": the inspector's description is cut off"));
      QVERIFY2(inspector->columnWidth(description) >= 100, qPrintable(at));

      // Every pane with something in it: a kernel picked and measured, the model profiled.
      w->selection()->set_kernel(
          QString::fromStdString(w->controller()->snapshot()->fusion->groups.front().kernel_name));
      w->panes().profile->set_profiling();
      w->edit_loop()->profile_model();
      QVERIFY(w->edit_loop()->wait_until_idle(180000));
      QVERIFY2(w->panes().profile->model()->rowCount() > 0, qPrintable(w->panes().profile->status_text()));
      for (const char* pane :
           {"graph", "passes", "schedule", "inspector", "program", "roofline", "profile", "memory", "diagnostics"}) {
        w->reveal_pane(pane);
        QCoreApplication::processEvents();
        w->pane_by_name(pane)->grab().save(QDir(out).filePath(at + "_" + pane + ".png"));
      }
      w->start_lesson(QStringLiteral(TESSEL_SOURCE_DIR "/resources/lessons/optimize_matmul.json"));
      QVERIFY(w->controller()->wait_until_idle(60000));
      QCoreApplication::processEvents();
      auto* lesson_text = w->pane_by_name("lesson")->findChild<QTextBrowser*>();
      QVERIFY(lesson_text);
      const int lines = lesson_text->viewport()->height() / lesson_text->fontMetrics().lineSpacing();
      QVERIFY2(lines >= 15, qPrintable(at + ": lesson text " + QString::number(lines) + " lines"));

      QVERIFY2(w->pane_by_name("roofline")->width() >= 460, qPrintable(at));
      // The roofline's legend, with a machine's worth of ceilings: every entry whole (nothing
      // elided) and its text inside its box.
      analysis::MachineCeilings ceilings;
      ceilings.machine = "fixture";
      ceilings.compute = {{"fma_512", 1480}, {"fma_256", 760}, {"scalar_fma", 98}};
      ceilings.bandwidth = {{"l2", 410}, {"dram", 38}};
      QVERIFY(w->edit_loop()->wait_until_idle(180000));  // the lesson model's own ceilings lookup is answered
      w->panes().roofline->set_ceilings(ceilings);
      w->reveal_pane("roofline");
      QCoreApplication::processEvents();
      QLabel* legend = w->panes().roofline->legend();
      QVERIFY(legend->isVisible());
      for (const char* entry : {"fma_512", "fma_256", "scalar_fma", "l2", "dram", "kernels", "selected"})
        QVERIFY2(legend->text().contains(entry), qPrintable(at + ": " + legend->text()));
      QVERIFY2(!legend->text().contains(QString::fromUtf8("…")), qPrintable(legend->text()));
      QVERIFY2(legend->heightForWidth(legend->contentsRect().width()) <= legend->contentsRect().height() + 1,
               qPrintable(at + QString(": the legend needs %1 px, has %2")
                                   .arg(legend->heightForWidth(legend->contentsRect().width()))
                                   .arg(legend->contentsRect().height())));
      w->reveal_pane("lesson");
      QCoreApplication::processEvents();
      w->pane_by_name("lesson")->grab().save(QDir(out).filePath(at + "_lesson.png"));
      w->grab().save(QDir(out).filePath(at + "_window.png"));
      // No pane's contents (a long measuring error, a wide form) pushed the window much wider.
      QVERIFY2(w->width() <= size.width() + 20,
               qPrintable(at + QString(": the window grew to %1; ").arg(w->width()) + dock_width("passes") + ", " +
                          dock_width("schedule") + ", " + dock_width("inspector") + ", " + dock_width("program") +
                          ", " + dock_width("roofline") + ", " + dock_width("lesson") + ", " + dock_width("profile") + ", " +
                          dock_width("memory")));
    }
  }

  // The kernels' group labels and the edges' labels never cover each other, on the pass that
  // makes the groups and on the last one, in two real models.
  void group_labels_never_cover_edge_labels() {
    auto w = open_sample();
    QVERIFY(w);
    for (const QString model : {"resnet_block", "mobilenet_block"}) {
      w->open_file(test::sample_model(model));
      QVERIFY(w->controller()->wait_until_idle(60000));
      const StudioSnapshotPtr snap = w->controller()->snapshot();
      for (int pass : {test::pass_index(*snap, "fuse_ops"), snap->last_pass()}) {
        QVERIFY(pass >= 0);
        w->selection()->set_pass(pass);
        QVERIFY(w->panes().graph->wait_for_layout(30000));
        std::vector<QRectF> groups, edges;
        for (QGraphicsItem* item : w->panes().graph->scene()->items()) {
          if (item->data(1).toString() == "group-label") groups.push_back(item->sceneBoundingRect());
          if (item->data(1).toString() == "edge-label") edges.push_back(item->sceneBoundingRect());
        }
        QVERIFY2(!groups.empty() && !edges.empty(), qPrintable(model));
        for (const QRectF& g : groups)
          for (const QRectF& e : edges)
            QVERIFY2(!g.intersects(e),
                     qPrintable(QString("%1, pass %2: group label at (%3, %4) covers an edge label at (%5, %6)")
                                    .arg(model)
                                    .arg(pass)
                                    .arg(g.x())
                                    .arg(g.y())
                                    .arg(e.x())
                                    .arg(e.y())));
      }
    }
  }

  void view_menu_raises_panes_and_reset_layout_restores_them() {
    auto w = open_sample();
    QVERIFY(w);
    w->reset_layout();  // the layout autosaved by the tests before
    w->findChild<QDockWidget*>("dock_memory")->raise();
    QTest::qWait(20);
    studio::CommandPalette* palette = w->command_palette();
    palette->open_palette();
    auto* profile_dock = w->findChild<QDockWidget*>("dock_profile");
    QCOMPARE(front_tab(*w, "Profile"), QString("Memory"));  // open, behind the memory tab
    QList<QAction*> show_profile = palette->matching("view profile");
    QCOMPARE(show_profile.size(), 1);
    QVERIFY(show_profile[0]->isCheckable() && show_profile[0]->isChecked());  // open, behind a tab
    show_profile[0]->trigger();
    QCoreApplication::processEvents();
    QCOMPARE(front_tab(*w, "Profile"), QString("Profile"));  // in front now, not closed
    QVERIFY(show_profile[0]->isChecked());
    profile_dock->close();
    QVERIFY(!show_profile[0]->isChecked());
    // Alt+7 is the same entry, pressed as keys: the pane it opens comes to the front, takes the
    // focus and is framed. Shortcuts go to the active window (the palette is a window of its own).
    QCOMPARE(show_profile[0]->shortcut(), QKeySequence(Qt::ALT | Qt::Key_7));
    palette->hide();
    w->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    // Through the window, as the platform delivers a key: QGuiApplication tries the shortcut map
    // before any widget sees the key.
    auto press_alt = [&](int digit) {
      QTest::keyClick(w->windowHandle(), static_cast<Qt::Key>(Qt::Key_0 + digit), Qt::AltModifier);
      QCoreApplication::processEvents();
    };
    press_alt(7);
    QVERIFY(profile_dock->isVisible());
    QVERIFY(show_profile[0]->isChecked());
    QCOMPARE(front_tab(*w, "Profile"), QString("Profile"));
    QCOMPARE(w->focused_pane(), static_cast<QWidget*>(w->panes().profile));
    // Every Alt+N, in the View menu's order, from wherever the focus is now (a kernel is picked,
    // so the kernel panes have something to type into).
    w->selection()->set_kernel(QString::fromStdString(w->controller()->snapshot()->fusion->groups.front().kernel_name));
    QCoreApplication::processEvents();
    const std::vector<std::pair<QString, QString>> order = {
        {"passes", "Passes"},     {"schedule", "Schedule"}, {"inspector", "Inspector"}, {"program", "Program"},
        {"roofline", "Roofline"}, {"profile", "Profile"},   {"memory", "Memory"},       {"diagnostics", "Diagnostics"}};
    for (size_t k = 0; k < order.size(); ++k) {
      const auto& [name, title] = order[k];
      press_alt(static_cast<int>(k) + 2);
      QCOMPARE(front_tab(*w, title), title);
      QVERIFY2(w->pane_by_name(name)->isEnabled(), qPrintable(name));
      QCOMPARE(w->focused_pane(), w->pane_by_name(name));
    }
    press_alt(1);
    QCOMPARE(w->focused_pane(), static_cast<QWidget*>(w->panes().graph));
    // Recent files show their path.
    w->open_file(test::sample_model("mlp"));  // now in File ▸ Open Recent
    QVERIFY(w->controller()->wait_until_idle(60000));
    palette->open_palette();
    QVERIFY(!palette->matching(QFileInfo(test::sample_model()).absolutePath() + "/mlp.onnx").isEmpty());
    // Reset Layout: floating and closed panes come back where they start.
    auto* inspector = w->findChild<QDockWidget*>("dock_inspector");
    inspector->setFloating(true);
    w->findChild<QDockWidget*>("dock_passes")->close();
    QList<QAction*> reset = palette->matching("reset layout");
    QCOMPARE(reset.size(), 1);
    reset[0]->trigger();
    QVERIFY(!inspector->isFloating());
    QCOMPARE(w->dockWidgetArea(inspector), Qt::RightDockWidgetArea);
    QVERIFY(w->tabifiedDockWidgets(inspector).contains(w->findChild<QDockWidget*>("dock_program")));
    QVERIFY(!w->findChild<QDockWidget*>("dock_passes")->isHidden());
    QVERIFY(w->findChild<QDockWidget*>("dock_lesson")->isHidden());  // no lesson runs
  }

  void a_broken_model_shows_a_banner_and_the_studio_stays_usable() {
    QTemporaryDir dir;
    QString bad = dir.filePath("bad.onnx");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("garbage");
    f.close();
    auto w = open_sample();
    QVERIFY(w);
    w->open_file(bad);
    QVERIFY(w->controller()->wait_until_idle(60000));
    QVERIFY2(w->banner_text().contains("bad.onnx"), qPrintable(w->banner_text()));
    QVERIFY(w->panes().diagnostics->model()->error_count() >= 1);
    w->open_file(test::sample_model());
    QVERIFY(w->controller()->wait_until_idle(60000));
    QVERIFY(w->banner_text().isEmpty());
  }

  void screenshots_of_every_pane() {
    QTemporaryDir home;
    struct Expect {
      QString pane;
      int min_colors;
    };
    for (const Expect& e : {Expect{"", 16}, Expect{"graph", 16}, Expect{"passes", 4}, Expect{"inspector", 4},
                            Expect{"memory", 6}, Expect{"diagnostics", 2}, Expect{"welcome", 4}, Expect{"schedule", 6},
                            Expect{"program", 6}, Expect{"roofline", 6}, Expect{"profile", 6}}) {
      QString out = home.filePath("shot_" + (e.pane.isEmpty() ? QString("window") : e.pane) + ".png");
      QProcess studio;
      studio.setEnvironment(test::child_environment(home.path()));
      QStringList args{"--open", test::sample_model(), "--screenshot", out, "--size", "1280x820"};
      if (!e.pane.isEmpty()) args << "--pane" << e.pane;
      studio.start(TESSEL_STUDIO_EXE, args);
      QVERIFY(studio.waitForFinished(120000));
      QVERIFY2(studio.exitCode() == 0, studio.readAllStandardError().constData());
      QImage image(out);
      QVERIFY2(!image.isNull(), qPrintable(out));
      if (e.pane.isEmpty()) {
        QCOMPARE(image.size(), QSize(1280, 820));
      } else {
        QVERIFY2(image.width() >= 200 && image.width() <= 1280, qPrintable(e.pane));
        QVERIFY2(image.height() >= 150 && image.height() <= 820, qPrintable(e.pane));
      }
      QVERIFY2(test::distinct_colors(image) >= e.min_colors, qPrintable(e.pane));
    }
    QProcess bad;
    bad.setEnvironment(test::child_environment(home.path()));
    bad.start(TESSEL_STUDIO_EXE, {"--screenshot", home.filePath("x.png"), "--pane", "nope"});
    QVERIFY(bad.waitForFinished(60000));
    QCOMPARE(bad.exitCode(), 2);
  }
};

QTEST_MAIN(StudioWindowTest)
#include "test_studio_window.moc"
