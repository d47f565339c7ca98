// A tensorized matmul through every backend: the interpreter runs the intrinsic's declared
// computation, the llvm and c backends call libtessel_core's tessel_intrin_* functions; all three
// must equal a plain reference loop written here. Likewise a matmul over virtual threads with
// dependence tokens (which CPU backends satisfy by running in program order).
#include <QtTest>
#include <random>

#include "core/loopir/interpreter.h"
#include "core/loopir/printer.h"
#include "core/lower/pipeline.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/runtime/thread_pool.h"
#include "core/schedule/schedule.h"
#include "core/target/target.h"
#include "core/te/op_spec.h"

using namespace tessel;

namespace {

struct Case {
  const char* spec;
  int64_t m, n, k;
  const char* schedule;
};

const Case kCases[] = {
    {"matmul M=64 N=64 K=64", 64, 64, 64,
     "tile(C.i, C.j, 16, 16)\nsplit(C.k, 16)\nreorder(C.i.outer, C.j.outer, C.k.outer, C.i.inner, C.j.inner, "
     "C.k.inner)\ntensorize(C.i.inner, gemm_16x16x16_f32)\nparallel(C.i.outer)"},
    {"matmul M=32 N=48 K=8", 32, 48, 8, "tile(C.i, C.j, 8, 8)\ntensorize(C.i.inner, gemm_8x8x8_f32)"},
    {"matmul M=8 N=6 K=16", 8, 6, 16,
     "cache_read(A, accel.inp, C)\ncache_read(B, accel.wgt, C)\ncache_write(C, accel.acc)\nsplit(C.i, nparts=2)\n"
     "compute_at(C_acc, C.i.outer)\nvthread(C.i.outer)\nsplit(C_acc.k, 4)\ncompute_at(A_inp, C_acc.k.outer)\n"
     "compute_at(B_wgt, C_acc.k.outer)"},
    {"matmul M=32 N=32 K=32", 32, 32, 32,
     "cache_write(C, local)\ntile(C.i, C.j, 16, 16)\ncompute_at(C_local, C.j.outer)\nsplit(C_local.k, 16)\n"
     "reorder(C_local.k.outer, C_local.i, C_local.j, C_local.k.inner)\ntensorize(C_local.i, gemm_16x16x16_f32)"},
    {"matmul M=32 N=24 K=32", 32, 24, 32,
     "cache_read(B, local, C)\ntile(C.i, C.j, 8, 8)\nsplit(C.k, 8)\nreorder(C.i.outer, C.j.outer, C.k.outer, "
     "C.i.inner, C.j.inner, C.k.inner)\ncompute_at(B_local, C.k.outer)\ntensorize(C.i.inner, gemm_8x8x8_f32)"},
};

Tensor random_tensor(Shape shape, uint64_t seed) {
  Tensor out(DataType::kFloat32, std::move(shape));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] = dist(rng);
  return out;
}

}  // namespace

class TestTensorizeBackends : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"});
    for (const char* kind : {"llvm", "c", "interp"})
      QVERIFY2(CodeGenRegistry::global().has(kind), qPrintable(QString("the plugin for '%1' did not load").arg(kind)));
    ThreadPool::set_global_threads(2);
  }

  void tensorized_matmul_matches_reference_data() {
    QTest::addColumn<int>("index");
    QTest::addColumn<QString>("target");
    for (int c = 0; c < static_cast<int>(std::size(kCases)); ++c)
      for (const char* t : {"llvm", "c", "interp"})
        QTest::newRow(qPrintable(QString("%1 on %2").arg(kCases[c].spec, t))) << c << QString(t);
  }
  void tensorized_matmul_matches_reference() {
    QFETCH(int, index);
    QFETCH(QString, target);
    const Case& c = kCases[index];
    te::ComputeDag dag = te::dag_from_spec(c.spec);
    loopir::Func f = lower::lower(dag, schedule::parse_schedule(c.schedule)).func;
    std::string text = loopir::to_string(f);
    QVERIFY2(text.find("tessel_intrin_gemm_") != std::string::npos || text.find("dep_pop(") != std::string::npos,
             text.c_str());

    Tensor a = random_tensor({c.m, c.k}, 1), b = random_tensor({c.k, c.n}, 2);
    Tensor want(DataType::kFloat32, {c.m, c.n});
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double acc = 0;
        for (int64_t r = 0; r < c.k; ++r) acc += double(a.data<float>()[i * c.k + r]) * b.data<float>()[r * c.n + j];
        want.data<float>()[i * c.n + j] = float(acc);
      }
    // Garbage in the output: the reset must really initialize it.
    Tensor got = random_tensor({c.m, c.n}, 3);
    auto module = build_module({f}, Target::parse(target.toStdString()));
    std::vector<Tensor*> args = {&a, &b, &got};
    module->call_host(f.name, args);
    for (int64_t i = 0; i < want.numel(); ++i) {
      float w = want.data<float>()[i], g = got.data<float>()[i];
      if (std::abs(w - g) > 1e-4f * (1 + std::abs(w)))
        QFAIL(qPrintable(QString("element %1: reference %2, %3 gives %4").arg(i).arg(w).arg(target).arg(g)));
    }
  }
};

QTEST_APPLESS_MAIN(TestTensorizeBackends)
#include "test_tensorize_backends.moc"
