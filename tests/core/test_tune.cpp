// Auto-tuning's parts: the tuning log (records), the search space, the cost model and the search
// itself with a measurer whose answers the test decides.
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <map>
#include <set>

#include "core/loopir/printer.h"
#include "core/lower/pipeline.h"
#include "core/schedule/default_schedule.h"
#include "core/support/error.h"
#include "core/te/op_spec.h"
#include "core/tune/cost_model.h"
#include "core/tune/records.h"
#include "core/tune/search.h"

using namespace tessel;
using namespace tessel::tune;

namespace {

TuningRecord record(const std::string& key, const std::string& target, double ms, const std::string& error = "") {
  return {key, "fused_mat_mul_0", target, "split(C.i, " + std::to_string(static_cast<int>(ms * 10) + 1) + ")\n",
          ms,  ms * 1.1,          error};
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

// Times from a formula of the register tile: fastest at 3 rows, worse the further away.
// The default schedule for this matmul has another tile, so the search must find it.
class FormulaMeasurer : public Measurer {
 public:
  std::vector<Measurement> measure(const std::vector<std::string>& schedules) override {
    std::vector<Measurement> out;
    for (const std::string& s : schedules) {
      ++calls;
      const size_t at = s.find("tile(");
      if (at == std::string::npos) {
        out.push_back({0, 0, "no tile"});
        continue;
      }
      // tile(C.i, C.j, ROWS, COLUMNS)
      const size_t comma = s.find(',', s.find(',', at) + 1);
      const int rows = std::stoi(s.substr(comma + 1));
      const double ms = 1.0 + std::abs(rows - 3) * 0.25;
      out.push_back({ms, ms, ""});
    }
    return out;
  }
  int calls = 0;
};

}  // namespace

class TestTune : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void records_round_trip_and_name_the_line_of_a_damaged_one() {
    const TuningRecord r = record("00ff", "llvm", 0.5);
    QCOMPARE(parse_record_line(record_line(r), "x"), r);
    QTemporaryDir dir;
    const std::string log = dir.filePath("tune.jsonl").toStdString();
    append_record(log, r);
    append_record(log, record("00ff", "llvm", 0.25));
    QCOMPARE(read_records(log).size(), size_t(2));
    std::ofstream(log, std::ios::app)
        << "{\"kernel_key\": \"1\", \"kernel\": \"k\", \"target\": \"llvm\", "
           "\"schedule\": \"\", \"ms_min\": \"fast\", \"ms_median\": 1, \"error\": \"\"}\n";
    const std::string e = error_of([&] { read_records(log); });
    QVERIFY2(e.find(log + ":3: field 'ms_min'") != std::string::npos, e.c_str());
    std::ofstream(log, std::ios::trunc) << "not json\n";
    QVERIFY(error_of([&] { read_records(log); }).find(":1: not a JSON object") != std::string::npos);
  }

  void best_records_take_the_fastest_correct_one_per_kernel_and_target() {
    BestRecords best({record("a", "llvm", 0.5), record("a", "llvm", 0.1, "wrong result"), record("a", "llvm", 0.3),
                      record("a", "c", 0.2), record("b", "llvm", 0.9)});
    QCOMPARE(best.best("a", "llvm")->ms_min, 0.3);
    QCOMPARE(best.best("a", "c")->ms_min, 0.2);
    QCOMPARE(best.best("b", "llvm")->ms_min, 0.9);
    QVERIFY(best.best("a", "interp") == nullptr);
    QCOMPARE(best.size(), size_t(3));
  }

  void kernel_key_follows_the_computation_not_the_object() {
    const auto a = te::dag_from_spec("matmul M=64 N=64 K=64");
    QCOMPARE(kernel_key(a), kernel_key(te::dag_from_spec("matmul M=64 N=64 K=64")));
    QVERIFY(kernel_key(a) != kernel_key(te::dag_from_spec("matmul M=64 N=64 K=32")));
    QCOMPARE(kernel_key(a).size(), size_t(16));
  }

  // Candidate 0 is the default schedule; every candidate either does not apply or lowers; a
  // large share apply, and the knobs change the program.
  void the_search_space_is_the_default_schedule_opened_up() {
    for (const char* spec :
         {"matmul M=128 N=256 K=64", "conv2d N=1 C=16 H=14 W=14 K=32 R=3 S=3 stride=1 pad=1", "relu shape=64x256"}) {
      const te::ComputeDag dag = te::dag_from_spec(spec);
      SearchSpace space(dag, 16);
      QVERIFY2(space.schedule_of(space.default_candidate()) == schedule::default_cpu_schedule(dag, 16), spec);
      std::mt19937_64 rng(7);
      int applied = 0;
      std::set<std::string> programs;
      for (int k = 0; k < 60; ++k) {
        auto s = space.schedule_of(space.random_candidate(rng));
        if (!s) continue;
        ++applied;
        programs.insert(loopir::to_string(lower::lower(dag, *s).func));  // throws if it does not lower
      }
      QVERIFY2(applied >= 40, spec);
      QVERIFY2(programs.size() >= 4, spec);
    }
    SearchSpace mm(te::dag_from_spec("matmul M=128 N=256 K=64"), 16);
    QStringList names;
    for (const Knob& k : mm.knobs()) names << QString::fromStdString(k.name);
    QCOMPARE(names, QStringList({"tile_rows", "tile_vectors", "k_unroll", "panel", "pack", "parallel_loops"}));
  }

  void the_cost_model_learns_an_order() {
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> u(0, 8);
    auto f = [](const Features& x) { return x[0] - 2 * x[1] + (x[2] > 4 ? 3 : 0); };
    std::vector<Features> xs;
    std::vector<double> ys;
    for (int i = 0; i < 200; ++i) {
      Features x{};
      for (double& v : x) v = u(rng);
      xs.push_back(x), ys.push_back(f(x));
    }
    CostModel model;
    model.fit(xs, ys);
    int agree = 0, pairs = 0;
    std::vector<Features> test;
    for (int i = 0; i < 30; ++i) {
      Features x{};
      for (double& v : x) v = u(rng);
      test.push_back(x);
    }
    for (size_t i = 0; i < test.size(); ++i)
      for (size_t j = i + 1; j < test.size(); ++j) {
        if (std::abs(f(test[i]) - f(test[j])) < 2) continue;
        ++pairs;
        agree += (model.predict(test[i]) > model.predict(test[j])) == (f(test[i]) > f(test[j]));
      }
    QVERIFY2(agree >= pairs * 9 / 10, qPrintable(QString("%1 of %2").arg(agree).arg(pairs)));
  }

  void the_search_measures_the_default_first_and_finds_the_best_tile() {
    SearchSpace space(te::dag_from_spec("matmul M=96 N=128 K=64"), 16);
    FormulaMeasurer measurer;
    SearchOptions o;
    o.trials = 24;
    o.batch = 4;
    o.explore = 1;
    std::vector<Trial> seen;
    int progress = 0;
    SearchResult r = search(
        space, measurer, o, [&](const Trial& t) { seen.push_back(t); }, [&](const SearchProgress&) { ++progress; });
    QCOMPARE(static_cast<int>(r.trials.size()), 24);
    QCOMPARE(measurer.calls, 24);
    QCOMPARE(seen.size(), r.trials.size());
    QVERIFY(progress >= 6);
    QCOMPARE(r.trials[0].candidate, space.default_candidate());
    QCOMPARE(r.default_ms, r.trials[0].result.ms_min);
    QVERIFY(r.best >= 0);
    QCOMPARE(r.trials[static_cast<size_t>(r.best)].result.ms_min, 1.0);  // 3 rows: the formula's optimum
    std::set<Candidate> distinct;
    for (const Trial& t : r.trials) distinct.insert(t.candidate);
    QCOMPARE(distinct.size(), r.trials.size());  // nothing measured twice
  }

  void the_search_stops_when_asked() {
    SearchSpace space(te::dag_from_spec("matmul M=96 N=128 K=64"), 16);
    FormulaMeasurer measurer;
    SearchOptions o;
    o.trials = 100;
    o.batch = 4;
    int batches = 0;
    o.stop = [&] { return ++batches > 2; };
    SearchResult r = search(space, measurer, o);
    QVERIFY(r.stopped);
    QCOMPARE(static_cast<int>(r.trials.size()), 1 + 2 * 4);
  }
};

QTEST_APPLESS_MAIN(TestTune)
#include "test_tune.moc"
