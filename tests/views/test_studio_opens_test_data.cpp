// Every model of the ONNX test data opens in the studio's real main window: it imports (unknown
// ops as opaque nodes, sequences and optionals as values of their kind) and its graph is drawn,
// whatever the graph pipeline says about it afterwards (a model the passes cannot take, such as one
// with sequences, is still drawn, with the reason in the diagnostics pane). One window opens model
// after model, as a user would, so a crash or a refused model fails the test. All 1072 take about
// 45 s (import and passes only: the studio compiles kernels when one is selected).
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/views/studio_fixtures.h"
#include "tests/views/studio_window_fixtures.h"
#include "views/graph/display_graph.h"
#include "views/graph/graph_pane.h"
#include "views/session/session_controller.h"

namespace fs = std::filesystem;
using namespace tessel;
using namespace tessel::views;

namespace {

const fs::path kTestData = "/usr/share/libonnx-testdata/data";

std::vector<fs::path> test_data_models() {
  std::vector<fs::path> models;
  for (const char* folder : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    const fs::path dir = kTestData / folder;
    if (!fs::is_directory(dir)) continue;
    for (const fs::directory_entry& e : fs::directory_iterator(dir))
      if (fs::exists(e.path() / "model.onnx")) models.push_back(e.path() / "model.onnx");
  }
  std::sort(models.begin(), models.end());
  return models;
}

}  // namespace

class TestStudioOpensTestData : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { test::isolate_studio("studio_opens_test_data_test", home_.path()); }

  void every_model_opens_and_is_drawn() {
    const std::vector<fs::path> all = test_data_models();
    // The Debian package is a CI dependency (scripts/packages.txt): its absence is a failure.
    QVERIFY2(all.size() > 1000, qPrintable(QString("found %1 models under %2; is libonnx-testdata installed?")
                                               .arg(all.size())
                                               .arg(QString::fromStdString(kTestData.string()))));
    auto w = test::show_window(test::window_options(home_.path()));
    QStringList failures;
    for (const fs::path& path : all) {
      const QString model = QString::fromStdString(path.string());
      if (!test::open_and_wait(*w, model)) {
        failures << model + ": did not finish opening";
        continue;
      }
      const StudioSnapshotPtr snap = w->controller()->snapshot();
      if (!snap || !snap->imported) {
        QString why;
        if (snap)
          for (const Diagnostic& d : snap->diagnostics) why += QString::fromStdString(d.message) + "; ";
        failures << model + ": not imported: " + why;
        continue;
      }
      const DisplayGraph* shown = w->panes().graph->display_graph();
      if (!snap->imported->nodes.empty() && (!shown || shown->nodes.empty()))
        failures << model + ": imported but no graph drawn";
    }
    qInfo("opened %zu models; %lld failed", all.size(), static_cast<long long>(failures.size()));
    QVERIFY2(failures.isEmpty(), qPrintable(failures.mid(0, 20).join("\n")));
  }

 private:
  QTemporaryDir home_;
};

QTEST_MAIN(TestStudioOpensTestData)
#include "test_studio_opens_test_data.moc"
