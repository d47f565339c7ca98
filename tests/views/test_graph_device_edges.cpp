// The graph pane's host↔device edges, through the real main window on the opencl target: a model
// whose Det has no device kernel runs Det on the host, so after "Profile model" the edges where
// data crosses between host and device memory are drawn apart, with direction and bytes, and the
// edges that stay on one side are not. Labelled opencl: it needs an OpenCL device (PoCL in CI).
#include <QFile>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QtTest>

#include "app/studio/main_window.h"
#include "core/plugin/plugin_manager.h"
#include "studio_fixtures.h"
#include "studio_window_fixtures.h"
#include "views/graph/graph_items.h"
#include "views/profile/profile_table_model.h"

using namespace tessel;
using namespace tessel::views;
using tessel::studio::MainWindow;

namespace {

constexpr int kWaitMs = 180000;

// Mul and Relu, Exp and Add compile for the device; Det runs on the reference kernels on the host.
constexpr const char* kMixedModel = R"(graph mixed(%x: f32[2,3,3]) {
  %w = constant f32[2,3,3] random(3)
  %a = Mul(%x, %w) : f32[2,3,3]
  %r = Relu(%a) : f32[2,3,3]
  %d = Det(%r) : f32[2]
  %e = Exp(%d) : f32[2]
  %s = Add(%d, %e) : f32[2]
  return %s, %r
}
)";

// value → tooltip of every edge drawn as host↔device, with the op (or input/output) it enters.
std::multimap<std::string, QString> marked_edges(const GraphPane& pane) {
  std::multimap<std::string, QString> out;
  const DisplayGraph* g = pane.display_graph();
  for (QGraphicsItem* item : pane.scene()->items())
    if (item->type() == EdgeItem::kType && item->data(3).toString() == "host-device") {
      const DisplayEdge& e = static_cast<EdgeItem*>(item)->edge();
      out.emplace(e.value + "→" + g->nodes[static_cast<size_t>(e.to)].op, item->toolTip());
    }
  return out;
}

}  // namespace

class GraphDeviceEdgesTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir home_;

 private Q_SLOTS:
  void initTestCase() {
    test::isolate_studio("graph_device_edges_test", home_.path());
    PluginManager::global().load_all();
  }

  void copies_of_a_device_run_mark_the_edges_that_cross() {
    const QString model = QDir(home_.path()).filePath("mixed.graph");
    QFile file(model);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(kMixedModel);
    file.close();
    auto w = test::show_window(test::window_options(home_.path()));
    QVERIFY(test::open_and_wait(*w, model));
    w->controller()->set_target("opencl");
    QVERIFY(w->controller()->wait_until_idle(kWaitMs) && w->panes().graph->wait_for_layout(kWaitMs));
    QVERIFY(w->panes().graph->host_device_edges().isEmpty());  // nothing has run yet

    w->panes().profile->set_profiling();
    w->edit_loop()->profile_model();
    QVERIFY(w->edit_loop()->wait_until_idle(kWaitMs));
    QVERIFY2(w->panes().profile->model()->rowCount() > 0, qPrintable(w->panes().profile->status_text()));
    QVERIFY(w->panes().graph->wait_for_layout(kWaitMs));

    // In: x for the first kernel; r to the host for Det, d back to the device for Exp and Add;
    // out: s. r's edge to the output is not marked: it is on the host already.
    const auto marked = marked_edges(*w->panes().graph);
    QStringList keys;
    for (const auto& [key, tip] : marked) keys << QString::fromStdString(key);
    QCOMPARE(keys, QStringList({"d→Add", "d→Exp", "r→Det", "s→output", "x→Mul"}));
    auto tip = [&](const std::string& key) { return marked.find(key)->second; };
    QVERIFY2(tip("x→Mul").contains("host↔device: host→device 72 B, the run's input"), qPrintable(tip("x→Mul")));
    QVERIFY2(tip("r→Det").contains(QRegularExpression("device→host 72 B, for fused_det")), qPrintable(tip("r→Det")));
    QVERIFY2(tip("d→Exp").contains("host→device 8 B, for fused_"), qPrintable(tip("d→Exp")));
    QVERIFY2(tip("s→output").contains("device→host 8 B, the run's output"), qPrintable(tip("s→output")));
    int labels = 0;
    for (QGraphicsItem* item : w->panes().graph->scene()->items())
      labels += item->data(1).toString() == "host-device-label";
    QCOMPARE(labels, 5);

    // Another compile (back on the CPU) forgets them.
    w->controller()->set_target("ref");
    QVERIFY(w->controller()->wait_until_idle(kWaitMs) && w->panes().graph->wait_for_layout(kWaitMs));
    QVERIFY(w->panes().graph->host_device_edges().isEmpty());
  }
};

QTEST_MAIN(GraphDeviceEdgesTest)
#include "test_graph_device_edges.moc"
