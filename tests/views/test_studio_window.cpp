// The studio as a user drives it: open the default sample, click a node and read the inspector,
// step through passes and see the differences, use the command palette, keep the pane layout;
// and the headless screenshots of every pane (tessel-studio --screenshot, a child process).
#include <QDockWidget>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QLineEdit>
#include <QProcess>
#include <QSettings>
#include <QTableView>
#include <QtTest>

#include "app/studio/command_palette.h"
#include "app/studio/main_window.h"
#include "studio_fixtures.h"
#include "views/graph/graph_items.h"

using namespace tessel;
using namespace tessel::views;
using tessel::studio::MainWindow;

class StudioWindowTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir home_;

  std::unique_ptr<MainWindow> open_sample() {
    studio::MainWindowOptions options;
    options.models_dir = QFileInfo(test::sample_model()).absolutePath();
    options.recovery_path = home_.filePath("recovery.tessel");
    options.offer_recovery = false;
    auto w = std::make_unique<MainWindow>(options);
    w->resize(1280, 820);
    w->show();
    w->open_file(test::sample_model());
    if (!w->controller()->wait_until_idle(60000)) return nullptr;
    if (!w->panes().graph->wait_for_layout(30000)) return nullptr;
    return w;
  }

  static NodeItem* node_item(MainWindow& w, const QString& name) {
    for (QGraphicsItem* item : w.panes().graph->scene()->items())
      if (item->type() == NodeItem::kType && static_cast<NodeItem*>(item)->node().name == name.toStdString())
        return static_cast<NodeItem*>(item);
    return nullptr;
  }

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // QSettings and autosave stay out of the user's folders
    QCoreApplication::setOrganizationName("TesselTest");
    QCoreApplication::setApplicationName("studio_window_test");
    QSettings().clear();
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
      QVERIFY2(snap->passes[static_cast<size_t>(p)]->changed, snap->passes[static_cast<size_t>(p)]->name.c_str());
    }
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
                            Expect{"memory", 6}, Expect{"diagnostics", 2}, Expect{"welcome", 4},
                            Expect{"schedule", 6}, Expect{"program", 6}, Expect{"roofline", 6},
                            Expect{"profile", 6}}) {
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
