// Auto-tuning's parts: the tuning log (records), the search space, the cost model and the search
// itself with a measurer whose answers the test decides.
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "core/loopir/interpreter.h"
#include "core/loopir/printer.h"
#include "core/lower/pipeline.h"
#include "core/schedule/default_schedule.h"
#include "core/support/error.h"
#include "core/te/op_builders.h"
#include "core/te/op_spec.h"
#include "core/tune/cost_model.h"
#include "core/tune/records.h"
#include "core/tune/search.h"
#include "core/tune/task_scheduler.h"
#include "core/tune/verify.h"
#include "tests/error_of.h"

using namespace tessel;
using tessel::testing::error_of;
using namespace tessel::tune;

namespace {

TuningRecord record(const std::string& key, const std::string& target, double ms, const std::string& error = "") {
  return {key, "fused_mat_mul_0", target, "split(C.i, " + std::to_string(static_cast<int>(ms * 10) + 1) + ")\n",
          ms,  ms * 1.1,          error};
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

// FormulaMeasurer's times × `scale`: a kernel that takes `scale` times as long.
class ScaledMeasurer : public Measurer {
 public:
  explicit ScaledMeasurer(double scale) : scale_(scale) {}
  std::vector<Measurement> measure(const std::vector<std::string>& schedules) override {
    std::vector<Measurement> out = formula_.measure(schedules);
    for (Measurement& m : out) m.ms_min *= scale_, m.ms_median *= scale_;
    calls += static_cast<int>(schedules.size());
    return out;
  }
  int calls = 0;

 private:
  FormulaMeasurer formula_;
  double scale_;
};

// An int8 product with int32 accumulation: the one kernel shape an accelerator's GEMM core takes.
// Targets of the other device classes, without their plugins.
TargetTraits gpu_traits() {
  TargetTraits t = cpu_traits(1);
  t.device_class = DeviceClass::kGpu;
  return t;
}
TargetTraits accelerator_traits(int64_t gemm) {
  TargetTraits t = cpu_traits(1);
  t.device_class = DeviceClass::kAccelerator;
  t.accelerator.gemm = gemm;
  return t;
}

te::ComputeDag int8_matmul(int64_t m, int64_t n, int64_t k) {
  te::Tensor a = te::placeholder("A", {m, k}, DataType::kInt8);
  te::Tensor b = te::placeholder("B", {k, n}, DataType::kInt8);
  loopir::IterVar r = te::reduce_axis(k, "k");
  te::Tensor c = te::compute("C", {m, n},
                             [&](const std::vector<loopir::Expr>& i) {
                               return te::sum(te::cast(DataType::kInt32, te::at(a, {i[0], r.var})) *
                                                  te::cast(DataType::kInt32, te::at(b, {r.var, i[1]})),
                                              {r});
                             },
                             {"i", "j"});
  return te::make_dag("matmul_i8", {c});
}

// C[b, i, j] = sum(A[b, i, k] * B[b, k, j], k), and with `bias` an epilogue C + bias[j] after it
// (a dense layer's shape: the product is then not the kernel's output).
te::ComputeDag batch_matmul(int64_t batch, int64_t m, int64_t n, int64_t k, bool bias = false) {
  te::Tensor a = te::placeholder("A", {batch, m, k}, DataType::kFloat32);
  te::Tensor b = te::placeholder("B", {batch, k, n}, DataType::kFloat32);
  loopir::IterVar r = te::reduce_axis(k, "k");
  te::Tensor c = te::compute("C", {batch, m, n},
                             [&](const std::vector<loopir::Expr>& i) {
                               return te::sum(te::at(a, {i[0], i[1], r.var}) * te::at(b, {i[0], r.var, i[2]}), {r});
                             },
                             {"b", "i", "j"});
  if (!bias) return te::make_dag("batch_matmul", {c});
  te::Tensor v = te::placeholder("bias", {n}, DataType::kFloat32);
  te::Tensor d = te::compute("D", {batch, m, n},
                             [&](const std::vector<loopir::Expr>& i) { return te::at(c, i) + te::at(v, {i[2]}); },
                             {"b", "i", "j"});
  return te::make_dag("batch_dense", {d});
}

QStringList knob_names(const SearchSpace& space) {
  QStringList names;
  for (const Knob& k : space.knobs()) names << QString::fromStdString(k.name);
  return names;
}

// The DAG's outputs computed by `s`'s program in the interpreter, on seeded inputs in [-1, 1).
std::map<std::string, Tensor> run_in_interpreter(const te::ComputeDag& dag, const schedule::Schedule& s) {
  const loopir::Func f = lower::lower(dag, s).func;
  std::set<std::string> outputs;
  for (const te::Tensor& t : dag.outputs) outputs.insert(t->name);
  std::vector<Tensor> args;
  for (const loopir::Buffer& p : f.params) {
    Tensor t(p->dtype, p->shape);
    std::mt19937_64 rng(std::hash<std::string>()(p->name));
    std::uniform_real_distribution<double> u(-1, 1);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, outputs.count(p->name) ? std::nan("") : u(rng));
    args.push_back(t);
  }
  loopir::interpret(f, args);
  std::map<std::string, Tensor> result;
  for (size_t i = 0; i < f.params.size(); ++i)
    if (outputs.count(f.params[i]->name)) result.emplace(f.params[i]->name, args[i]);
  return result;
}

// The largest difference between the outputs of `s` and of the plain loops, relative to each value.
double worst_error(const te::ComputeDag& dag, const std::map<std::string, Tensor>& want, const schedule::Schedule& s) {
  double worst = 0;
  for (const auto& [name, got] : run_in_interpreter(dag, s)) {
    const Tensor& w = want.at(name);
    for (int64_t i = 0; i < w.numel(); ++i) {
      const double e = std::abs(w.get_double(i) - got.get_double(i)) / (1 + std::abs(w.get_double(i)));
      worst = std::isnan(e) ? INFINITY : std::max(worst, e);
    }
  }
  return worst;
}

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

  // A log is untrusted input (issue 40): a damaged line costs only itself and is named, a cut-off
  // last line is never glued to the next record, and nothing but a regular file is opened.
  void record_log_skips_damaged_lines_and_survives_a_torn_tail() {
    QTemporaryDir dir;
    const std::string log = dir.filePath("shared.jsonl").toStdString();
    append_record(log, record("00aa", "llvm", 0.5));
    TuningRecord bad_schedule = record("00bb", "llvm", 0.4);
    bad_schedule.schedule = "split(C.i,\n";  // does not parse
    append_record(log, bad_schedule);
    std::ofstream(log, std::ios::app) << "not json\n";
    append_record(log, record("00cc", "llvm", 0.3));
    const std::string whole = record_line(record("00dd", "llvm", 0.2));
    std::ofstream(log, std::ios::app) << whole.substr(0, whole.size() / 2);  // killed mid-write
    RecordLog read = read_record_log(log);
    QCOMPARE(read.records.size(), size_t(2));
    QCOMPARE(read.records[0].kernel_key, std::string("00aa"));
    QCOMPARE(read.records[1].kernel_key, std::string("00cc"));
    QCOMPARE(read.skipped.size(), size_t(3));
    QVERIFY2(read.skipped[0].find(log + ":2: field 'schedule'") == 0, read.skipped[0].c_str());
    QVERIFY2(read.skipped[1].find(log + ":3: not a JSON object") == 0, read.skipped[1].c_str());
    QVERIFY2(read.skipped[2].find(log + ":5:") == 0 && read.skipped[2].find("cut off") != std::string::npos,
             read.skipped[2].c_str());
    // The strict reading still stops at the first damaged line, naming it.
    QVERIFY(error_of([&] { read_records(log); }).find(log + ":3: not a JSON object") == 0);

    // Resuming: the torn line is ended first, so the next record is whole and nothing is lost.
    QVERIFY(repair_torn_tail(log));
    QVERIFY(!repair_torn_tail(log));  // whole now
    append_record(log, record("00ee", "llvm", 0.1));
    std::ofstream(log, std::ios::app) << whole.substr(0, 10);
    append_record(log, record("00ff", "llvm", 0.05));  // append_record ends a torn line by itself too
    read = read_record_log(log);
    QCOMPARE(read.records.size(), size_t(4));
    QCOMPARE(read.records[2].kernel_key, std::string("00ee"));
    QCOMPARE(read.records[3].kernel_key, std::string("00ff"));
    QCOMPARE(read.skipped.size(), size_t(4));

    // Not a regular file: refused by name before anything is opened (a FIFO would block).
    QVERIFY(error_of([&] { read_record_log(dir.path().toStdString()); })
                .find("is a folder, not a tuning log file") != std::string::npos);
    QVERIFY(error_of([&] { read_record_log("/dev/zero"); }) == "/dev/zero: is a character device, not a tuning log file");
    QVERIFY(error_of([&] { append_record(dir.path().toStdString(), record("1", "llvm", 1)); })
                .find(dir.path().toStdString() + ": cannot open") == 0);
    QVERIFY(error_of([&] { read_record_log(dir.filePath("missing.jsonl").toStdString()); })
                .find("missing.jsonl: cannot open") != std::string::npos);
  }

  // The log says in which cache condition each time was taken; a log written before the field
  // existed reads as warm; where a kernel has both, the cold records are the ones that count.
  void records_say_their_cache_condition_and_cold_ones_count_first() {
    TuningRecord cold = record("a", "llvm", 0.5);
    cold.cache = measure::CacheCondition::kCold;
    QCOMPARE(parse_record_line(record_line(cold), "x"), cold);
    QVERIFY(record_line(cold).find(R"("cache":"cold")") != std::string::npos);
    const TuningRecord old = parse_record_line(
        R"({"kernel_key":"a","kernel":"k","target":"llvm","schedule":"","ms_min":0.1,"ms_median":0.1,"error":""})",
        "x");
    QVERIFY(old.cache == measure::CacheCondition::kWarm);
    QCOMPARE(QString::fromStdString(error_of([] {
               parse_record_line(R"({"kernel_key":"a","kernel":"k","target":"llvm","schedule":"","ms_min":0.1,)"
                                 R"("ms_median":0.1,"error":"","cache":"tepid"})",
                                 "log:3");
             })),
             QString(R"(log:3: field 'cache': expected "warm" or "cold", got "tepid")"));
    TuningRecord cold_slow = record("a", "llvm", 0.7);
    cold_slow.cache = measure::CacheCondition::kCold;
    const BestRecords best({record("a", "llvm", 0.2), cold, record("a", "llvm", 0.1), cold_slow});
    QCOMPARE(best.best("a", "llvm")->ms_min, 0.5);  // the fastest cold one, not the faster warm ones
  }

  // The final race's records (verified) outrank the search's own, whose best may be a lucky moment.
  void verified_records_count_first() {
    TuningRecord lucky = record("a", "llvm", 0.5), raced_candidate = record("a", "llvm", 0.8),
                 raced_default = record("a", "llvm", 0.7);
    raced_candidate.verified = raced_default.verified = true;
    raced_default.schedule = "";
    QCOMPARE(parse_record_line(record_line(raced_candidate), "x"), raced_candidate);
    QVERIFY(record_line(lucky).find("verified") == std::string::npos);  // only written when true
    const BestRecords best({lucky, raced_candidate, raced_default});
    QCOMPARE(best.best("a", "llvm")->ms_min, 0.7);
    QCOMPARE(QString::fromStdString(best.best("a", "llvm")->schedule), QString());  // the default won the race
    QVERIFY(!error_of([] {
               parse_record_line(R"({"kernel_key":"a","kernel":"k","target":"llvm","schedule":"","ms_min":0.1,)"
                                 R"("ms_median":0.1,"error":"","verified":"yes"})",
                                 "log:2");
             }).empty());
  }

  // The race measures candidate and default in alternation, one batch, and keeps each side's minimum.
  void the_race_alternates_the_best_and_the_default() {
    struct Recording : Measurer {
      std::vector<std::string> seen;
      double t = 2.0;
      std::vector<Measurement> measure(const std::vector<std::string>& schedules) override {
        std::vector<Measurement> out;
        for (const std::string& s : schedules) {
          seen.push_back(s);
          t -= 0.1;
          out.push_back({s == "best" ? t + 0.05 : t, t, ""});
        }
        return out;
      }
    } m;
    const RaceResult r = race(m, "best", "default", 3);
    QCOMPARE(m.seen, (std::vector<std::string>{"best", "default", "best", "default", "best", "default"}));
    QCOMPARE(r.measurements.size(), size_t(6));
    QVERIFY(qFuzzyCompare(r.candidate_ms, 1.5 + 0.05));  // its last: 2 - 0.5
    QVERIFY(qFuzzyCompare(r.default_ms, 1.4));
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
      SearchSpace space(dag, cpu_traits(16));
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
    SearchSpace mm(te::dag_from_spec("matmul M=128 N=256 K=64"), cpu_traits(16));
    QStringList names;
    for (const Knob& k : mm.knobs()) names << QString::fromStdString(k.name);
    QCOMPARE(names, QStringList({"tile_rows", "tile_vectors", "k_unroll", "reduce_split", "panel", "pack", "k_block",
                                 "k_block_outer", "parallel_loops"}));
  }

  // Each kind of target opens up its own default schedule: the knobs a matmul, a conv and an
  // element-wise kernel have there, candidate 0 that kind's default schedule, and every candidate
  // of the (small) GPU and accelerator spaces lowers.
  void each_target_kind_opens_up_its_own_default_schedule_data() {
    using Kind = DeviceClass;
    QTest::addColumn<QString>("spec");
    QTest::addColumn<int>("kind");
    QTest::addColumn<QStringList>("knobs");
    const QString mm = "matmul M=128 N=256 K=64", conv = "conv2d N=1 C=16 H=14 W=14 K=32 R=3 S=3 stride=1 pad=1",
                  relu = "relu shape=64x256", i8 = "int8 matmul";
    const int cpu = static_cast<int>(Kind::kCpu), gpu = static_cast<int>(Kind::kGpu),
              accel = static_cast<int>(Kind::kAccelerator);
    QTest::newRow("cpu matmul") << mm << cpu
                                << QStringList{"tile_rows", "tile_vectors", "k_unroll",      "reduce_split",  "panel",
                                               "pack",      "k_block",      "k_block_outer", "parallel_loops"};
    QTest::newRow("cpu conv") << conv << cpu
                              << QStringList{"tile_rows", "reduce_split", "reduce_order", "parallel_loops"};
    // ResNet-18's layer4 conv in NCHW32c: its 9.4 MB of weights can be hinted into L2 a block ahead.
    QTest::newRow("cpu conv nchwc, weights beyond L2")
        << "conv2d_nchwc N=1 C=512 H=7 W=7 K=512 R=3 S=3 stride=1 pad=1 block=32" << cpu
        << QStringList{"tile_rows", "tile_vectors", "reduce_split", "reduce_order", "prefetch", "parallel_loops"};
    QTest::newRow("cpu relu") << relu << cpu << QStringList{"vector_split", "parallel_loops"};
    QTest::newRow("gpu matmul") << mm << gpu << QStringList{"tile"};
    QTest::newRow("gpu conv") << conv << gpu << QStringList{"tile"};
    QTest::newRow("gpu relu") << relu << gpu << QStringList{"threads"};
    QTest::newRow("accelerator int8 matmul") << i8 << accel << QStringList{"vthreads", "k_tiles"};
  }
  void each_target_kind_opens_up_its_own_default_schedule() {
    using Kind = DeviceClass;
    QFETCH(QString, spec);
    QFETCH(int, kind);
    QFETCH(QStringList, knobs);
    const te::ComputeDag dag = spec == "int8 matmul" ? int8_matmul(64, 64, 256) : te::dag_from_spec(spec.toStdString());
    TargetTraits target = cpu_traits(16);
    target.device_class = static_cast<Kind>(kind);
    target.accelerator.gemm = 16;
    const SearchSpace space(dag, target);
    QVERIFY2(space.unsupported().empty(), space.unsupported().c_str());
    QCOMPARE(knob_names(space), knobs);
    std::optional<schedule::Schedule> want;
    switch (target.device_class) {
      case Kind::kCpu:
        want = schedule::default_cpu_schedule(dag, 16);
        break;
      case Kind::kGpu:
        want = schedule::default_gpu_schedule(dag);
        break;
      case Kind::kAccelerator:
        want = schedule::default_accel_schedule(dag, {.gemm = 16, .vthreads = 2});
        break;
    }
    QVERIFY2(space.schedule_of(space.default_candidate()) == want, spec.toUtf8().constData());
    if (target.is_cpu()) return;  // its space is large; the test above samples it
    // Every candidate: odometer over the knobs' values.
    std::set<std::string> schedules;
    Candidate c = space.default_candidate();
    for (;;) {
      auto s = space.schedule_of(c);
      QVERIFY2(s, space.describe(c).c_str());
      (void)lower::lower(dag, *s);  // throws if it does not lower
      schedules.insert(schedule::to_text(*s));
      size_t i = 0;
      for (; i < c.size(); ++i) {
        if (++c[i] < static_cast<int>(space.knobs()[i].values.size())) break;
        c[i] = 0;
      }
      if (i == c.size()) break;
    }
    QVERIFY2(schedules.size() >= space.knobs().back().values.size() - 1, spec.toUtf8().constData());
  }

  // A kernel the target's schedules do not take has no space, and says why.
  void a_kernel_the_target_does_not_take_has_no_space() {
    const SearchSpace host(te::dag_from_spec("matmul M=64 N=64 K=64"),
                           accelerator_traits(16));
    QVERIFY2(host.unsupported().find("not an int32 accumulation") != std::string::npos, host.unsupported().c_str());
    QVERIFY(host.knobs().empty());
    QVERIFY(!host.schedule_of(host.default_candidate()));
    const SearchSpace odd(int8_matmul(24, 16, 16),
                          accelerator_traits(16));
    QVERIFY2(odd.unsupported().find("not multiples") != std::string::npos, odd.unsupported().c_str());
  }

  // The reduction's tiling and loop order (CpuKnobs::reduce_split, reduce_order), every value on
  // small shapes, with and without the k unroll: each schedule lowers and computes what the plain
  // loops compute, and the knobs change the program.
  void reduction_knobs_compute_what_the_plain_loops_compute_data() {
    QTest::addColumn<QString>("kernel");
    QTest::newRow("gemm") << "gemm";
    QTest::newRow("conv nchw") << "conv";
    QTest::newRow("conv + bias + relu") << "conv_bias_relu";
    QTest::newRow("conv nchw4c") << "conv_nchwc";
    QTest::newRow("depthwise") << "depthwise";
  }
  void reduction_knobs_compute_what_the_plain_loops_compute() {
    QFETCH(QString, kernel);
    const te::Conv2dParams p{1, 16, 6, 8, 8, 3, 3, 1, 1};
    const te::ComputeDag dag = kernel == "gemm"             ? te::matmul_dag(12, 16, 64)
                               : kernel == "conv"           ? te::conv2d_dag(p)
                               : kernel == "conv_bias_relu" ? te::conv2d_bias_relu_dag(p)
                               : kernel == "conv_nchwc"     ? te::conv2d_nchwc_dag(p, 4)
                                                            : te::depthwise_conv2d_dag(p);
    constexpr int64_t kLanes = 4;
    const std::map<std::string, Tensor> want = run_in_interpreter(dag, {});
    using Order = schedule::CpuKnobs::ReduceOrder;
    std::vector<std::optional<Order>> orders{std::nullopt, Order::kMainOuter, Order::kWindowOuter, Order::kSplitAround};
    std::set<std::string> programs;
    for (std::optional<int64_t> split :
         {std::optional<int64_t>(), std::optional<int64_t>(4), std::optional<int64_t>(8), std::optional<int64_t>(3)})
      for (std::optional<Order> order : orders)
        for (int64_t unroll : {1, 4}) {
          schedule::CpuKnobs knobs;
          knobs.k_unroll = unroll, knobs.reduce_split = split, knobs.reduce_order = order;
          const QString what = QString("%1 split %2 order %3 unroll %4")
                                   .arg(kernel)
                                   .arg(split.value_or(0))
                                   .arg(order ? static_cast<int>(*order) : -1)
                                   .arg(unroll);
          const schedule::Schedule s = schedule::default_cpu_schedule(dag, kLanes, knobs);
          programs.insert(loopir::to_string(lower::lower(dag, s).func));
          for (const auto& [name, got] : run_in_interpreter(dag, s)) {
            const Tensor& w = want.at(name);
            for (int64_t i = 0; i < w.numel(); ++i)
              if (std::abs(w.get_double(i) - got.get_double(i)) > 1e-4 * (1 + std::abs(w.get_double(i))))
                QFAIL(qPrintable(QString("%1: %2[%3]: plain loops %4, scheduled %5\n%6")
                                     .arg(what, name.c_str())
                                     .arg(i)
                                     .arg(w.get_double(i))
                                     .arg(got.get_double(i))
                                     .arg(schedule::to_text(s).c_str())));
          }
        }
    const size_t distinct = kernel == "gemm" ? 6 : kernel == "depthwise" ? 2 : 4;
    QVERIFY2(programs.size() >= distinct, qPrintable(QString::number(programs.size())));
  }

  // K blocking (CpuKnobs::k_block, k_blocked_gemm.h) on GEMMs with tails in every direction (rows,
  // tile columns), batched or not, each block size, order, packing, unroll and tile: the program
  // computes what the plain loops compute, its panel is k_block deep, and the knobs change it.
  void k_blocking_computes_what_the_plain_loops_compute() {
    constexpr int64_t kLanes = 4;
    for (const te::ComputeDag& dag :
         {te::matmul_dag(13, 36, 64), batch_matmul(2, 7, 12, 32), batch_matmul(1, 13, 36, 32, /*bias=*/true)}) {
      const std::map<std::string, Tensor> want = run_in_interpreter(dag, {});
      const bool dense = !dag.outputs[0]->reduction();
      te::Tensor product = dag.outputs[0];
      for (const te::Tensor& in : dag.outputs[0]->inputs)
        if (in->reduction()) product = in;
      const int64_t k = product->reduction()->axes[0].extent;
      std::set<std::string> programs;
      for (int64_t block : {8, 16})
        for (bool outer : {false, true})
          for (bool pack : {true, false})
            for (int64_t unroll : {1, 4})
              for (int64_t rows : {3, 5})
                for (int64_t vectors : {1, 2}) {
                  schedule::CpuKnobs knobs;
                  knobs.k_block = block, knobs.k_block_outer = outer, knobs.pack = pack, knobs.k_unroll = unroll;
                  knobs.tile_rows = rows, knobs.tile_vectors = vectors;
                  const schedule::Schedule s = schedule::default_cpu_schedule(dag, kLanes, knobs);
                  const std::string text = schedule::to_text(s);
                  QVERIFY2(text.find("rfactor(C.k.outer)") != std::string::npos, text.c_str());
                  // A dense layer's bias: a pass over the whole product, vectorized.
                  if (dense) QVERIFY2(text.find("vectorize(D.j.inner)") != std::string::npos, text.c_str());
                  const std::string program = loopir::to_string(lower::lower(dag, s).func);
                  // The packed panel is one block deep and one tile column wide.
                  const std::string panel =
                      "allocate B_global: f32[" + std::to_string(block * vectors * kLanes) + "] global";
                  QVERIFY2((program.find(panel) != std::string::npos) == pack, program.c_str());
                  programs.insert(program);
                  const double error = worst_error(dag, want, s);
                  QVERIFY2(error < 1e-4,
                           qPrintable(QString("k=%1: error %2 with\n%3").arg(k).arg(error).arg(text.c_str())));
                }
      QVERIFY2(programs.size() >= 48, qPrintable(QString::number(programs.size())));
    }
  }

  // K blocking is offered where it applies: a GEMM whose product is the kernel's output or read by
  // an element-wise epilogue alone, K with two blocks at least. A conv, a short K and a product
  // read by a reduction (softmax of a matmul) have no such knob; a knob setting that does not
  // apply leaves the default's schedule.
  void k_blocking_is_offered_where_it_applies() {
    const auto has = [](const SearchSpace& space) { return knob_names(space).contains("k_block"); };
    QVERIFY(has(SearchSpace(te::matmul_dag(64, 64, 128), cpu_traits(16))));
    QVERIFY(has(SearchSpace(batch_matmul(2, 8, 32, 64), cpu_traits(16))));
    QVERIFY(has(SearchSpace(batch_matmul(2, 8, 32, 64, /*bias=*/true), cpu_traits(16))));
    QVERIFY(!has(SearchSpace(te::matmul_dag(64, 64, 48), cpu_traits(16))));
    QVERIFY(!has(SearchSpace(te::dag_from_spec("conv2d N=1 C=64 H=14 W=14 K=32 R=3 S=3 stride=1 pad=1"), cpu_traits(16))));
    const SearchSpace mm(te::matmul_dag(64, 64, 256), cpu_traits(16));
    for (const Knob& knob : mm.knobs())
      if (knob.name == "k_block") QCOMPARE(knob.values, std::vector<int64_t>({-1, 32, 64, 128}));
    schedule::CpuKnobs odd;
    odd.k_block = 48;  // does not divide K
    const te::ComputeDag dag = te::matmul_dag(64, 64, 256);
    QVERIFY(schedule::default_cpu_schedule(dag, 16, odd) == schedule::default_cpu_schedule(dag, 16));
    // Every reader but one element-wise output of the product's shape keeps the register tile.
    const te::ComputeDag product = te::matmul_dag(8, 32, 64);
    const te::Tensor& c = product.outputs[0];
    loopir::IterVar j = te::reduce_axis(32, "j");
    te::Tensor row_sum = te::compute("S", {8},
                                     [&](const std::vector<loopir::Expr>& i) {
                                       return te::sum(te::at(c, {i[0], j.var}), {j});
                                     },
                                     {"i"});
    const te::ComputeDag summed = te::make_dag("matmul_sum", {row_sum});
    const SearchSpace summed_space(summed, cpu_traits(16));
    QVERIFY2(summed_space.unsupported().empty(), summed_space.unsupported().c_str());
    QVERIFY(knob_names(summed_space).contains("tile_rows"));
    QVERIFY(!has(summed_space));
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
    SearchSpace space(te::dag_from_spec("matmul M=96 N=128 K=64"), cpu_traits(16));
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

  // The features are read off the loop program, not the knobs: the search and its model work the
  // same on a GPU's and an accelerator's space, measuring each schedule once, the default first.
  void the_search_runs_on_every_kind_of_space() {
    struct ByText : Measurer {
      std::vector<Measurement> measure(const std::vector<std::string>& schedules) override {
        std::vector<Measurement> out;
        for (const std::string& s : schedules) {
          const double ms = 1.0 + static_cast<double>(std::hash<std::string>()(s) % 97) / 10;
          out.push_back({ms, ms, ""});
        }
        return out;
      }
    };
    const SearchSpace gpu(te::dag_from_spec("matmul M=128 N=256 K=64"), gpu_traits());
    const SearchSpace accel(int8_matmul(64, 64, 256),
                            accelerator_traits(16));
    for (const SearchSpace* space : {&gpu, &accel}) {
      ByText measurer;
      SearchOptions o;
      o.trials = 12;
      o.batch = 4;
      o.explore = 1;
      const SearchResult r = search(*space, measurer, o);
      QCOMPARE(static_cast<int>(r.trials.size()), std::min(12, static_cast<int>(space->size())));
      QCOMPARE(r.trials[0].candidate, space->default_candidate());
      std::set<std::string> schedules;
      for (const Trial& t : r.trials) schedules.insert(t.schedule);
      QCOMPARE(schedules.size(), r.trials.size());
      QVERIFY(r.best >= 0);
    }
  }

  // A search stepped by its caller measures what search() would: the default alone, then batches.
  void a_kernel_search_goes_one_batch_at_a_time() {
    SearchSpace space(te::dag_from_spec("matmul M=96 N=128 K=64"), cpu_traits(16));
    FormulaMeasurer measurer;
    SearchOptions o;
    o.trials = 10;
    o.batch = 4;
    KernelSearch s(space, measurer, o);
    QCOMPARE(s.step(), 1);
    QCOMPARE(s.result().trials[0].candidate, space.default_candidate());
    QCOMPARE(s.step(2), 2);  // the caller's limit
    QCOMPARE(s.step(), 4);
    QCOMPARE(s.step(), 3);  // the options' trials
    QVERIFY(s.done());
    QCOMPARE(s.step(), 0);
    QCOMPARE(static_cast<int>(s.result().trials.size()), 10);
  }

  // Asked to, the search measures the default again in each batch, and the default's time is the
  // minimum of its measurements (a noisy machine's luck no longer favours the candidates).
  void the_search_can_measure_the_default_again_in_every_batch() {
    SearchSpace space(te::dag_from_spec("matmul M=96 N=128 K=64"), cpu_traits(16));
    struct Drifting : Measurer {
      FormulaMeasurer formula;
      double next_default = 3.0;
      std::string default_text;
      std::vector<Measurement> measure(const std::vector<std::string>& schedules) override {
        std::vector<Measurement> out = formula.measure(schedules);
        for (size_t i = 0; i < schedules.size(); ++i)
          if (schedules[i] == default_text) out[i].ms_min = out[i].ms_median = (next_default -= 0.5);
        return out;
      }
    } measurer;
    measurer.default_text = schedule::to_text(*space.schedule_of(space.default_candidate()));
    SearchOptions o;
    o.trials = 13;
    o.batch = 4;
    o.remeasure_default = true;
    const SearchResult r = search(space, measurer, o);
    QCOMPARE(static_cast<int>(r.trials.size()), 13);
    int defaults = 0;
    for (const Trial& t : r.trials) defaults += t.schedule == measurer.default_text;
    QCOMPARE(defaults, 1 + 3);    // first alone, then one in each of the three batches of 4
    QCOMPARE(r.default_ms, 1.0);  // 2.5, 2.0, 1.5, 1.0: the minimum
    QCOMPARE(r.trials.back().schedule, measurer.default_text);
  }

  // Two kernels, one taking ten times as long: the budget goes mostly to it, every trial is spent,
  // and each kernel measured its default schedule first.
  void the_scheduler_gives_more_trials_to_the_kernel_with_more_time() {
    SearchSpace space(te::dag_from_spec("matmul M=96 N=128 K=64"), cpu_traits(16));
    ScaledMeasurer slow(10), fast(1);
    SchedulerOptions o;
    o.trials = 30;
    o.search.batch = 3;
    o.search.explore = 1;
    std::vector<int> trials_of(2);
    std::vector<SchedulerProgress> progress;
    const SchedulerResult r = tune_tasks(
        {{"fast", 1, &space, &fast}, {"slow", 1, &space, &slow}}, o,
        [&](int task, const Trial&) { ++trials_of[static_cast<size_t>(task)]; },
        [&](const SchedulerProgress& p) { progress.push_back(p); });
    QCOMPARE(trials_of[0] + trials_of[1], 30);
    QCOMPARE(fast.calls, trials_of[0]);
    QCOMPARE(slow.calls, trials_of[1]);
    QVERIFY2(trials_of[1] >= 3 * trials_of[0],
             qPrintable(QString("slow %1, fast %2").arg(trials_of[1]).arg(trials_of[0])));
    for (const SearchResult& task : r.tasks) QCOMPARE(task.trials[0].candidate, space.default_candidate());
    QCOMPARE(progress.at(0).task, 0);  // the first round: each task's default, in order
    QCOMPARE(progress.at(1).task, 1);
    QCOMPARE(progress.back().trials, 30);
    QVERIFY(qFuzzyCompare(progress.back().default_model_ms, 11 * r.tasks[0].default_ms));
    QVERIFY(progress.back().best_model_ms <
            progress.back().default_model_ms);  // the formula's optimum is not the default
    QVERIFY(!r.stopped);
  }

  // The same time per kernel, but one computation is four kernels of the model: it gets more.
  void the_scheduler_weighs_a_kernel_by_its_count_in_the_model() {
    SearchSpace space(te::dag_from_spec("matmul M=96 N=128 K=64"), cpu_traits(16));
    ScaledMeasurer once(1), four_times(1);
    SchedulerOptions o;
    o.trials = 24;
    o.search.batch = 3;
    o.search.explore = 1;
    const SchedulerResult r = tune_tasks({{"once", 1, &space, &once}, {"four", 4, &space, &four_times}}, o);
    QVERIFY2(four_times.calls >= 2 * once.calls,
             qPrintable(QString("%1 against %2").arg(four_times.calls).arg(once.calls)));
    QCOMPARE(once.calls + four_times.calls, 24);
  }

  void the_scheduler_stops_when_asked() {
    SearchSpace space(te::dag_from_spec("matmul M=96 N=128 K=64"), cpu_traits(16));
    ScaledMeasurer a(1), b(2);
    SchedulerOptions o;
    o.trials = 100;
    o.search.batch = 4;
    int asked = 0;
    o.stop = [&] { return ++asked > 3; };  // the two defaults, one batch, then stop
    const SchedulerResult r = tune_tasks({{"a", 1, &space, &a}, {"b", 1, &space, &b}}, o);
    QVERIFY(r.stopped);
    QCOMPARE(a.calls + b.calls, 1 + 1 + 4);
  }

  void the_search_stops_when_asked() {
    SearchSpace space(te::dag_from_spec("matmul M=96 N=128 K=64"), cpu_traits(16));
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
