// The accel-sim target through the plugin, as every backend is used: Target::parse with typed
// options, build_module (the code generator the plugin registered), NDArrays in the simulated
// DRAM through the accelerator's DeviceAPI, Module::call and call_host, the instruction listing
// and the last call's profile as artifacts. A tensorized int8 matmul must equal a plain loop.
#include <QtTest>
#include <random>

#include "core/lower/pipeline.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/runtime/ndarray.h"
#include "core/schedule/schedule.h"
#include "core/target/target.h"
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

Tensor reference(const Tensor& a, const Tensor& b) {
  int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  Tensor c(DataType::kInt32, {m, n});
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int32_t s = 0;
      for (int64_t r = 0; r < k; ++r) s += int32_t{a.data<int8_t>()[i * k + r]} * b.data<int8_t>()[r * n + j];
      c.data<int32_t>()[i * n + j] = s;
    }
  return c;
}

// A tensorized int8 matmul in the scratchpads, the row tiles over `vthreads` virtual threads;
// or with the schedule given.
loopir::Func lowered_matmul(int64_t m, int64_t n, int64_t k, int vthreads, std::string given = "") {
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
  std::string split =
      vthreads > 1 ? "split(C.i.outer, nparts=" + std::to_string(vthreads) + ")\nvthread(C.i.outer.outer)\n" : "";
  std::string s =
      "cache_read(A, accel.inp, C)\ncache_read(B, accel.wgt, C)\ncache_write(C, accel.acc)\n"
      "tile(C.i, C.j, 16, 16)\n" +
      split +
      "compute_at(C_acc, C.j.outer)\nsplit(C_acc.k, 16)\n"
      "reorder(C_acc.k.outer, C_acc.i, C_acc.j, C_acc.k.inner)\ncompute_at(A_inp, C_acc.k.outer)\n"
      "compute_at(B_wgt, C_acc.k.outer)\ntensorize(C_acc.i, gemm_16x16x16_i8)";
  return lower::lower(te::make_dag("matmul_i8", {c}), schedule::parse_schedule(given.empty() ? s : given)).func;
}

int64_t cycles_in(const std::string& profile) { return std::stoll(profile.substr(profile.find(": ") + 2)); }

const Device kAccel{DeviceType::kAcceleratorSim, 0};

}  // namespace

class TestAccelSimTarget : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"});
    QVERIFY2(CodeGenRegistry::global().has("accel-sim"), "the accel_sim plugin did not load");
  }

  void target_has_typed_options() {
    Target t = Target::parse("accel-sim -dram_bytes_per_cycle=4 -dram_latency=100");
    QCOMPARE(t.get_int("gemm"), int64_t{16});
    QCOMPARE(t.get_int("dram_bytes_per_cycle"), int64_t{4});
    QCOMPARE(t.get_int("inp_bytes"), int64_t{32 * 1024});
    QCOMPARE(t.kind_info().device, std::string("accel-sim"));
    try {
      Target::parse("accel-sim -gemm=12");
      QFAIL("gemm=12 was accepted");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("8 or 16") != std::string::npos, e.what());
    }
  }

  void device_api_reports_the_machine_and_copies() {
    DeviceAPI& api = DeviceAPIRegistry::global().get(DeviceType::kAcceleratorSim);
    QCOMPARE(api.device_count(), 1);
    auto name = std::get<std::string>(api.attribute(0, DeviceAttr::kName));
    QVERIFY2(name.find("gemm 16x16x16") != std::string::npos, name.c_str());
    QCOMPARE(std::get<int64_t>(api.attribute(0, DeviceAttr::kClockRateKHz)), int64_t{200'000});
    Tensor x = random_int8({7, 5}, 1);
    NDArray d = NDArray::from_host(x, kAccel);
    Tensor back = d.to_host();
    QVERIFY(std::memcmp(back.raw_data(), x.raw_data(), x.nbytes()) == 0);
    try {
      api.set_device(1);
      QFAIL("accel-sim:1 was accepted");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("accel-sim:1 does not exist") != std::string::npos, e.what());
    }
  }

  void compiled_int8_matmul_matches_reference_data() {
    QTest::addColumn<int>("vthreads");
    QTest::newRow("1 virtual thread") << 1;
    QTest::newRow("2 virtual threads") << 2;
  }
  void compiled_int8_matmul_matches_reference() {
    QFETCH(int, vthreads);
    const int64_t m = 64, n = 48, k = 32;
    loopir::Func f = lowered_matmul(m, n, k, vthreads);
    auto module = build_module({f}, Target::parse("accel-sim"));
    QCOMPARE(module->target_kind(), std::string("accel-sim"));
    auto artifacts = module->artifacts();
    const std::string& listing = artifacts.at("accel_program");
    QVERIFY2(listing.find("compute GEMM") != std::string::npos && listing.find("load LOAD") != std::string::npos &&
                 listing.find("store STORE") != std::string::npos && listing.find("pop(") != std::string::npos,
             listing.c_str());
    QVERIFY(artifacts.at("accel_profile").empty());  // nothing ran yet

    Tensor a = random_int8({m, k}, 11), b = random_int8({k, n}, 12), want = reference(a, b);
    // On the device: NDArrays in simulated DRAM.
    NDArray da = NDArray::from_host(a, kAccel), db = NDArray::from_host(b, kAccel);
    NDArray dc = NDArray::empty(DataType::kInt32, {m, n}, kAccel);
    module->call(f.name, {&da, &db, &dc});
    Tensor got = dc.to_host();
    QVERIFY(std::memcmp(got.raw_data(), want.raw_data(), want.nbytes()) == 0);
    std::string profile = module->artifacts().at("accel_profile");
    QVERIFY2(profile.find("matmul_i8: ") == 0 && cycles_in(profile) > 0, profile.c_str());
    std::string timeline = module->artifacts().at("accel_timeline");
    for (const char* lane : {" load ", " compute ", " store "})
      QVERIFY2(timeline.find(lane) != std::string::npos, timeline.c_str());
    // From the host: copied in and out by the module.
    Tensor host_c(DataType::kInt32, {m, n});
    module->call_host(f.name, {&a, &b, &host_c});
    QVERIFY(std::memcmp(host_c.raw_data(), want.raw_data(), want.nbytes()) == 0);
  }

  void virtual_threads_cut_cycles_on_a_memory_bound_target() {
    // A tile's fetch outlasts its GEMM: one thread waits for each, two overlap them.
    const int64_t m = 64, n = 32, k = 256;
    Target slow = Target::parse("accel-sim -dram_latency=16 -dram_bytes_per_cycle=16");
    Tensor a = random_int8({m, k}, 21), b = random_int8({k, n}, 22), want = reference(a, b);
    int64_t cycles[2];
    for (int v = 1; v <= 2; ++v) {
      loopir::Func f = lowered_matmul(m, n, k, v);
      auto module = build_module({f}, slow);
      Tensor c(DataType::kInt32, {m, n});
      module->call_host(f.name, {&a, &b, &c});
      QVERIFY(std::memcmp(c.raw_data(), want.raw_data(), want.nbytes()) == 0);
      cycles[v - 1] = cycles_in(module->artifacts().at("accel_profile"));
    }
    QVERIFY2(cycles[1] < cycles[0],
             qPrintable(QString("1 vthread %1 cycles, 2 vthreads %2").arg(cycles[0]).arg(cycles[1])));
  }

  // The int8 GEMM intrinsic the accelerator compiles also runs on the CPU backends (the
  // interpreter runs its declaration, llvm and c call libtessel_core's tessel_intrin_*_i8).
  void int8_intrinsic_runs_on_cpu_backends_data() {
    QTest::addColumn<QString>("target");
    for (const char* t : {"interp", "llvm", "c"})
      if (CodeGenRegistry::global().has(t)) QTest::newRow(t) << QString(t);
  }
  void int8_intrinsic_runs_on_cpu_backends() {
    QFETCH(QString, target);
    const int64_t m = 32, n = 48, k = 64;
    loopir::Func f = lowered_matmul(m, n, k, 1,
                                    "tile(C.i, C.j, 16, 16)\nsplit(C.k, 16)\nreorder(C.i.outer, C.j.outer, C.k.outer, "
                                    "C.i.inner, C.j.inner, C.k.inner)\ntensorize(C.i.inner, gemm_16x16x16_i8)");
    Tensor a = random_int8({m, k}, 31), b = random_int8({k, n}, 32), want = reference(a, b);
    Tensor c(DataType::kInt32, {m, n});
    build_module({f}, Target::parse(target.toStdString()))->call_host(f.name, {&a, &b, &c});
    QVERIFY(std::memcmp(c.raw_data(), want.raw_data(), want.nbytes()) == 0);
  }

  void kernel_it_cannot_lower_is_refused() {
    loopir::Func f = lowered_matmul(32, 32, 32, 1);
    try {
      build_module({f}, Target::parse("accel-sim -gemm=8"));
      QFAIL("a 16x16 GEMM was compiled for the 8x8 core");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("kernel 'matmul_i8': accel-sim codegen: tessel_intrin_gemm_16x16x16_i8") !=
                   std::string::npos,
               e.what());
    }
  }
};

QTEST_APPLESS_MAIN(TestAccelSimTarget)
#include "test_accel_sim_target.moc"
