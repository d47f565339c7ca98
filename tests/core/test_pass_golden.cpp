// Golden tests of the graph passes: tests/golden/graph/<pass>/<case>.in holds an input graph in
// the text format, <case>.out what the pass makes of it (for fuse_ops and plan_memory, the graph
// followed by the analysis as comment lines). Each case also checks that the reference executor
// gives the same outputs for the input graph and the pass's result.
//
// TESSEL_UPDATE_GOLDEN=1 rewrites the .out files; a mismatch prints a line diff.
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/graph/passes/pipeline.h"
#include "core/graph/text_format.h"
#include "core/runtime/reference_executor.h"
#include "tests/random_graph_inputs.h"

using namespace tessel;
namespace fs = std::filesystem;

namespace {

const fs::path kGoldenDir = fs::path(TESSEL_SOURCE_DIR) / "tests/golden/graph";

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string line; std::getline(s, line);) out.push_back(line);
  return out;
}

// A plain line diff: "-expected" / "+actual" around the first differing region (enough to see
// what changed without a diff library).
std::string line_diff(const std::string& expected, const std::string& actual) {
  const auto a = lines_of(expected), b = lines_of(actual);
  size_t first = 0;
  while (first < a.size() && first < b.size() && a[first] == b[first]) ++first;
  size_t ea = a.size(), eb = b.size();
  while (ea > first && eb > first && a[ea - 1] == b[eb - 1]) --ea, --eb;
  std::string out = "@@ line " + std::to_string(first + 1) + " @@\n";
  for (size_t i = first; i < ea; ++i) out += "-" + a[i] + "\n";
  for (size_t i = first; i < eb; ++i) out += "+" + b[i] + "\n";
  return out;
}

std::string fusion_text(const Graph& g, const FusionResult& f) {
  std::string out;
  for (const FusionGroup& grp : f.groups) {
    out += "// group " + grp.kernel_name + ":";
    for (NodeId n : grp.nodes) out += " " + g.nodes[n].name;
    out += " (anchor " + g.nodes[grp.anchor].name + ")\n";
  }
  for (const UnfusedEdge& e : f.unfused_edges)
    out += "// unfused " + g.nodes[e.producer].name + " -> " + g.nodes[e.consumer].name + ": " +
           std::string(fusion_block_name(e.rule)) + "\n";
  return out;
}

std::string memory_text(const Graph& g, const MemoryPlan& p) {
  std::string out = "// peak " + std::to_string(p.peak_bytes) + " bytes, naive " + std::to_string(p.naive_bytes) + "\n";
  for (const PlannedTensor& t : p.tensors) {
    out += "// " + g.value(t.value).name + ": storage " + std::to_string(t.storage_id) + " offset " +
           std::to_string(t.offset) + " bytes " + std::to_string(t.size_bytes) + " live [" +
           std::to_string(t.first_step) + "," + std::to_string(t.last_step) + "]";
    if (t.in_place_of != kNoValue) out += " in place of " + g.value(t.in_place_of).name;
    out += "\n";
  }
  return out;
}

const GraphPass& find_pass(const std::string& name) {
  static const std::vector<GraphPass> passes = graph_pipeline_passes(PipelineOptions{});
  for (const GraphPass& p : passes)
    if (p.name == name) return p;
  throw Error("golden folder '" + name + "' names no pass of the pipeline");
}

// Runs the pass named by the folder; plan_memory runs after fuse_ops, as in the pipeline.
std::string run_case(const std::string& pass, Graph& g) {
  static const Target target = Target::parse("ref -vector_bits=512");
  PassContext ctx{target, PipelineOptions{}, nullptr, nullptr};
  if (pass == "plan_memory") find_pass("fuse_ops").run(g, ctx);
  find_pass(pass).run(g, ctx);
  std::string text = print_graph(g);
  if (pass == "fuse_ops") text += fusion_text(g, *ctx.fusion);
  if (pass == "plan_memory") text += memory_text(g, *ctx.memory_plan);
  return text;
}

}  // namespace

class TestPassGolden : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void golden_cases_data() {
    QTest::addColumn<QString>("pass");
    QTest::addColumn<QString>("input");
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(kGoldenDir))
      if (entry.path().extension() == ".in") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& p : files) {
      const std::string pass = p.parent_path().filename().string();
      QTest::newRow((pass + "/" + p.stem().string()).c_str())
          << QString::fromStdString(pass) << QString::fromStdString(p.string());
    }
  }

  void golden_cases() {
    QFETCH(QString, pass);
    QFETCH(QString, input);
    const fs::path in_path = input.toStdString();
    const fs::path out_path = fs::path(in_path).replace_extension(".out");
    Graph original = parse_graph(read_file(in_path));
    Graph g = original;
    const std::string actual = run_case(pass.toStdString(), g);

    if (qEnvironmentVariableIsSet("TESSEL_UPDATE_GOLDEN")) {
      std::ofstream(out_path) << actual;
      qInfo("updated %s", out_path.c_str());
    } else {
      QVERIFY2(fs::exists(out_path), qPrintable("missing " + QString::fromStdString(out_path.string()) +
                                                 " (run with TESSEL_UPDATE_GOLDEN=1 to create it)"));
      const std::string expected = read_file(out_path);
      QVERIFY2(expected == actual, qPrintable("\n" + QString::fromStdString(line_diff(expected, actual))));
    }

    // The graph the pass produced computes what the input graph computes.
    const Graph& reparsed = g;
    const std::vector<Tensor> inputs = testing::random_graph_inputs(original, 7);
    const std::vector<Tensor> want = run_reference(original, inputs), got = run_reference(reparsed, inputs);
    QCOMPARE(got.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      QCOMPARE(got[k].shape(), want[k].shape());
      for (int64_t i = 0; i < want[k].numel(); ++i) {
        const double a = got[k].get_double(i), b = want[k].get_double(i);
        QVERIFY2(std::abs(a - b) <= 1e-4 * (1 + std::abs(b)),
                 qPrintable(QString("output %1[%2]: %3 vs %4").arg(k).arg(i).arg(a).arg(b)));
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestPassGolden)
#include "test_pass_golden.moc"
