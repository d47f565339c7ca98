// The accelerator's pipeline timeline from the simulator to the profile: a kernel call's lanes
// (Module::last_call_lanes) are one per unit, ordered, inside the call, agree with the unit
// counters, stay bounded on a long program; virtual threads make the load and compute lanes
// overlap more (cycles are deterministic: the inequality is the machine's, not the host's noise);
// a whole model's profile carries the lanes of every offloaded kernel into run_times_json,
// profile_json and the Chrome trace (one track per unit under the device's process).
#include <QtTest>
#include <map>
#include <random>

#include "core/analysis/profile.h"
#include "core/frontend/onnx_import.h"
#include "core/lower/pipeline.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/schedule/schedule.h"
#include "core/te/tensor.h"

using namespace tessel;

namespace {

Tensor random_int8(Shape shape, uint64_t seed) {
  Tensor t(DataType::kInt8, std::move(shape));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(-128, 127);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int8_t>()[i] = static_cast<int8_t>(dist(rng));
  return t;
}

// C = A * B in int8 → int32, tiles in the scratchpads tensorized to the 16x16x16 GEMM core, the
// row tiles over `vthreads` virtual threads (1: no vthread loop).
loopir::Func accel_matmul(int64_t m, int64_t n, int64_t k, int vthreads) {
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
  const std::string vthread =
      vthreads > 1 ? "split(C.i.outer, nparts=" + std::to_string(vthreads) + ")\nvthread(C.i.outer.outer)\n" : "";
  const std::string schedule =
      "cache_read(A, accel.inp, C)\ncache_read(B, accel.wgt, C)\ncache_write(C, accel.acc)\n"
      "tile(C.i, C.j, 16, 16)\n" +
      vthread +
      "compute_at(C_acc, C.j.outer)\nsplit(C_acc.k, 16)\n"
      "reorder(C_acc.k.outer, C_acc.i, C_acc.j, C_acc.k.inner)\ncompute_at(A_inp, C_acc.k.outer)\n"
      "compute_at(B_wgt, C_acc.k.outer)\ntensorize(C_acc.i, gemm_16x16x16_i8)";
  return lower::lower(te::make_dag("matmul_i8", {c}), schedule::parse_schedule(schedule)).func;
}

struct Call {
  std::shared_ptr<const DeviceLanes> lanes;
  std::map<std::string, double> counters;
};

Call run_matmul(int64_t m, int64_t n, int64_t k, int vthreads, const Target& target) {
  loopir::Func f = accel_matmul(m, n, k, vthreads);
  auto module = build_module({f}, target);
  Tensor a = random_int8({m, k}, 1), b = random_int8({k, n}, 2), c(DataType::kInt32, {m, n});
  module->call_host(f.name, {&a, &b, &c});
  Call call{module->last_call_lanes(), {}};
  for (const auto& [name, value] : module->last_call_counters()) call.counters[name] = value;
  return call;
}

// The lanes are the units, in the instruction set's order; each lane's intervals follow one another
// inside the call (a unit runs one instruction at a time); they agree with the unit counters.
void check_lanes(const DeviceLanes& d, const std::map<std::string, double>& counters) {
  QCOMPARE(d.lanes, (std::vector<std::string>{"load", "compute", "store"}));
  QCOMPARE(static_cast<double>(d.cycles), counters.at("cycles"));
  QVERIFY(d.clock_mhz > 0);
  int64_t instructions = 0;
  for (size_t k = 0; k < d.intervals.size(); ++k) {
    const DeviceInterval& i = d.intervals[k];
    QVERIFY(i.lane >= 0 && i.lane < 3 && i.kind >= 0 && static_cast<size_t>(i.kind) < d.kinds.size());
    QVERIFY2(0 <= i.start && i.start < i.end && i.end <= d.cycles, qPrintable(QString("interval %1").arg(k)));
    QVERIFY(i.busy > 0 && i.busy <= i.end - i.start);
    if (k > 0 && d.intervals[k - 1].lane == i.lane) QVERIFY(d.intervals[k - 1].end <= i.start);
    if (k > 0) QVERIFY(d.intervals[k - 1].lane <= i.lane);
    instructions += i.count;
  }
  QCOMPARE(instructions, d.instructions);
  QVERIFY(d.intervals.size() <= kMaxDeviceIntervals);
  for (size_t l = 0; l < d.lanes.size(); ++l) {
    QCOMPARE(static_cast<double>(d.summary.busy[l]), counters.at(d.lanes[l] + "_busy"));
    int64_t busy = 0;
    for (const DeviceInterval& i : d.intervals) busy += i.lane == static_cast<int>(l) ? i.busy : 0;
    QCOMPARE(busy, d.summary.busy[l]);
  }
  for (const char* kind : {"LOAD inp", "LOAD wgt", "GEMM", "STORE"})
    QVERIFY2(std::find(d.kinds.begin(), d.kinds.end(), kind) != d.kinds.end(), kind);
}

// Cycles in which the load and the compute unit are both busy.
int64_t load_compute_overlap(const DeviceLanes& d) {
  std::vector<DeviceInterval> two;
  for (const DeviceInterval& i : d.intervals)
    if (i.lane < 2) two.push_back(i);
  return summarize_lanes(2, two, d.cycles).overlap_cycles;
}

}  // namespace

class TestAccelTimeline : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"});
    QVERIFY2(CodeGenRegistry::global().has("accel-sim"), "the accel_sim plugin did not load");
  }

  void virtual_threads_overlap_load_and_compute() {
    // A memory-bound machine: a tile's fetch outlasts its GEMMs, so hiding it shows.
    const Target slow = Target::parse("accel-sim -dram_latency=16 -dram_bytes_per_cycle=16");
    int64_t overlap[2], cycles[2];
    for (int v = 1; v <= 2; ++v) {
      const Call call = run_matmul(64, 32, 256, v, slow);
      QVERIFY(call.lanes);
      check_lanes(*call.lanes, call.counters);
      QVERIFY(call.lanes->note.empty());  // a small program: one interval per instruction
      overlap[v - 1] = load_compute_overlap(*call.lanes);
      cycles[v - 1] = call.lanes->cycles;
      QVERIFY(call.lanes->summary.overlap_cycles >= overlap[v - 1]);
    }
    const QString what = QString("load+compute overlap: 1 vthread %1 of %2 cycles, 2 vthreads %3 of %4 cycles")
                             .arg(overlap[0])
                             .arg(cycles[0])
                             .arg(overlap[1])
                             .arg(cycles[1]);
    qInfo("%s", qPrintable(what));
    QVERIFY2(overlap[1] > overlap[0], qPrintable(what));
    QVERIFY2(cycles[1] < cycles[0], qPrintable(what));
  }

  void a_long_program_is_merged_within_the_cap() {
    // 256x256x256: 4096 GEMMs and their loads, more intervals than a call may keep.
    const Call call = run_matmul(256, 256, 256, 2, Target::parse("accel-sim"));
    QVERIFY(call.lanes);
    check_lanes(*call.lanes, call.counters);
    QVERIFY(call.lanes->instructions > static_cast<int64_t>(kMaxDeviceIntervals));
    QVERIFY2(call.lanes->note.find("instructions shown as") != std::string::npos, call.lanes->note.c_str());
    QVERIFY(call.lanes->summary.overlap_cycles > 0);
  }

  // resnet_block on accel-sim: the quantized convolutions run on the accelerator, the rest on the
  // host; only the former have lanes, and every export has them.
  void model_profile_carries_the_lanes() {
    const std::string dir = std::string(TESSEL_SOURCE_DIR) + "/resources/models/resnet_block";
    auto graph = std::make_shared<const Graph>(import_onnx(dir + ".onnx"));
    auto compiled = compile::CompiledModel::compile(graph, Target::parse("accel-sim"));
    const analysis::Profile p =
        analysis::profile_model(*compiled, analysis::random_inputs(compiled->graph()), 0, 1, std::nullopt);
    size_t offloaded = 0, intervals = 0;
    for (size_t k = 0; k < p.kernels.size(); ++k) {
      const compile::CompiledKernel& kernel = compiled->kernels()[k];
      const bool on_device = kernel.compiled && !kernel.on_host;
      QVERIFY2(static_cast<bool>(p.kernels[k].device_lanes) == on_device, kernel.name.c_str());
      if (!on_device) continue;
      ++offloaded;
      intervals += p.kernels[k].device_lanes->intervals.size();
      std::map<std::string, double> counters(p.kernels[k].device_counters.begin(), p.kernels[k].device_counters.end());
      check_lanes(*p.kernels[k].device_lanes, counters);
    }
    QVERIFY(offloaded > 0);
    QCOMPARE(p.last_run.device_lanes.size(), offloaded);

    // run_times_json: counters and lanes, and back.
    const nlohmann::json run = analysis::run_times_json(p.last_run);
    QCOMPARE(run.at("device_lanes").size(), offloaded);
    QCOMPARE(run.at("device_counters").size(), offloaded);
    const compile::RunTimes back = analysis::run_times_from_json(run);
    QCOMPARE(back.device_counters.size(), offloaded);
    QCOMPARE(back.device_counters[0].values, p.last_run.device_counters[0].values);
    const DeviceLanes &sent = *p.last_run.device_lanes[0].lanes, &got = *back.device_lanes[0].lanes;
    QCOMPARE(back.device_lanes[0].kernel, p.last_run.device_lanes[0].kernel);
    QCOMPARE(got.lanes, sent.lanes);
    QCOMPARE(got.kinds, sent.kinds);
    QCOMPARE(got.intervals.size(), sent.intervals.size());
    QCOMPARE(got.intervals.back().end, sent.intervals.back().end);
    QCOMPARE(got.summary.busy, sent.summary.busy);
    QCOMPARE(got.summary.overlap_cycles, sent.summary.overlap_cycles);

    // profile_json (tessel profile --json): per offloaded kernel.
    const nlohmann::json j = analysis::profile_json(p);
    size_t with_lanes = 0;
    for (const nlohmann::json& k : j.at("kernels"))
      if (k.contains("device_lanes")) {
        ++with_lanes;
        QVERIFY(!k.at("device_lanes").at("intervals").empty());
        QCOMPARE(k.at("device_lanes").at("summary").at("utilization").size(), size_t{3});
        QVERIFY(k.contains("device"));
      }
    QCOMPARE(with_lanes, offloaded);

    // The Chrome trace: the device's process, a track per unit, every interval on its track,
    // inside its kernel's span on the device (cycles at 200 MHz).
    const nlohmann::json trace = nlohmann::json::parse(analysis::chrome_trace(p));
    std::map<int, std::string> tracks;
    bool device_process = false;
    for (const nlohmann::json& e : trace.at("traceEvents"))
      if (e.at("ph") == "M" && e.at("pid") == 2) {
        if (e.at("name") == "process_name") device_process = true;
        if (e.at("name") == "thread_name") tracks[e.at("tid").get<int>()] = e.at("args").at("name").get<std::string>();
      }
    QVERIFY(device_process);
    QCOMPARE(tracks, (std::map<int, std::string>{{1, "load unit"}, {2, "compute unit"}, {3, "store unit"}}));
    std::map<std::string, std::pair<double, double>> span_us;  // kernel → its span on the device
    for (const compile::RunTimes::DeviceSpan& s : p.last_run.device_spans)
      span_us[p.kernels[static_cast<size_t>(s.kernel)].name] = {s.begin_ms * 1000, s.end_ms * 1000};
    size_t events = 0;
    for (const nlohmann::json& e : trace.at("traceEvents")) {
      if (e.at("ph") != "X" || e.at("pid") != 2) continue;
      ++events;
      const auto [begin, end] = span_us.at(e.at("args").at("kernel").get<std::string>());
      const double ts = e.at("ts").get<double>(), dur = e.at("dur").get<double>();
      QVERIFY2(ts >= begin - 1e-3 && ts + dur <= end + 1e-3, e.dump().c_str());
    }
    QCOMPARE(events, intervals);
  }
};

QTEST_APPLESS_MAIN(TestAccelTimeline)
#include "test_accel_timeline.moc"
