// The fast CPU schedules: the hand schedule shipped in resources/schedules/ parses, lowers and,
// compiled by the llvm plugin, computes the right matmul; the default CPU schedule of a reduction
// accumulates in a small local (register) tile and still computes what the interpreter computes,
// on shapes that divide the tile and on shapes that leave tails. Structure, not timing: the speed
// is measured by tests/bench/bench_kernels. Also: the llvm code generator's guarded loads under
// a select, which make inlined padding safe at the edges of a buffer.
#include <QtTest>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>

#include "core/compile/kernel_compiler.h"
#include "core/loopir/interpreter.h"
#include "core/loopir/printer.h"
#include "core/lower/pipeline.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/schedule/default_schedule.h"
#include "core/schedule/parallel_work.h"
#include "core/target/cpu_caches.h"
#include "core/te/op_builders.h"
#include "core/te/op_spec.h"

using namespace tessel;

namespace {

constexpr int64_t kLanes = 16;  // AVX-512 fp32; the schedules must be right for any width

std::vector<Tensor> random_args(const loopir::Func& f, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<Tensor> args;
  for (const auto& p : f.params) {
    Tensor t(p->dtype, p->shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
    args.push_back(t);
  }
  return args;
}

std::vector<Tensor*> pointers(std::vector<Tensor>& ts) {
  std::vector<Tensor*> out;
  for (auto& t : ts) out.push_back(&t);
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Lowers `dag` with `sched`, runs it through the llvm plugin and through the interpreter on the
// same inputs, and compares the output (the last parameter).
// C[b, i, j] = Σ A[b, i, k] · B[b, k, j]: attention's batched product.
te::ComputeDag batched_matmul_dag(int64_t batch, int64_t m, int64_t n, int64_t k) {
  te::Tensor a = te::placeholder("A", {batch, m, k}), b = te::placeholder("B", {batch, k, n});
  te::IterVar rk = te::reduce_axis(k, "k");
  te::Tensor c = te::compute("C", {batch, m, n},
                             [&](const std::vector<loopir::Expr>& i) {
                               return te::sum(te::at(a, {i[0], i[1], rk.var}) * te::at(b, {i[0], rk.var, i[2]}), {rk});
                             },
                             {"b", "i", "j"});
  return te::make_dag("batched_matmul", {c});
}

void check_llvm_matches_interpreter(const te::ComputeDag& dag, const schedule::Schedule& sched, const QString& what) {
  loopir::Func f = lower::lower(dag, sched).func;
  std::vector<Tensor> want = random_args(f, 11), got;
  for (auto& t : want) got.push_back(t.clone());
  loopir::interpret(f, want);
  build_module({f}, Target::parse("llvm"))->call_host(f.name, pointers(got));
  const Tensor& w = want.back();
  const Tensor& g = got.back();
  for (int64_t i = 0; i < w.numel(); ++i) {
    double a = w.get_double(i), b = g.get_double(i);
    if (std::abs(a - b) > 1e-4 * (1 + std::abs(a)))
      QFAIL(qPrintable(QString("%1: element %2: interpreter %3, llvm %4\n%5")
                           .arg(what)
                           .arg(i)
                           .arg(a)
                           .arg(b)
                           .arg(QString::fromStdString(schedule::to_text(sched)))));
  }
}

// Softmax as the ONNX importer writes it, with exp a stage of its own (read by the sum and the
// output) and the row reductions keeping an extent-1 axis.
te::ComputeDag softmax_with_exp_stage(int64_t rows, int64_t cols) {
  te::Tensor x = te::placeholder("X", {rows, cols});
  loopir::IterVar k1 = te::reduce_axis(cols, "k"), k2 = te::reduce_axis(cols, "k");
  te::Tensor mx = te::compute("row_max", {rows, 1},
                              [&](const std::vector<loopir::Expr>& i) {
                                return te::max_reduce(te::at(x, {i[0], k1.var}), {k1});
                              },
                              {"i", "j"});
  te::Tensor e = te::compute("e", {rows, cols},
                             [&](const std::vector<loopir::Expr>& i) {
                               return te::exp(te::at(x, i) - te::at(mx, {i[0], loopir::make_int(0)}));
                             },
                             {"i", "j"});
  te::Tensor es = te::compute("exp_sum", {rows, 1},
                              [&](const std::vector<loopir::Expr>& i) {
                                return te::sum(te::at(e, {i[0], k2.var}), {k2});
                              },
                              {"i", "j"});
  te::Tensor y = te::compute("softmax", {rows, cols},
                             [&](const std::vector<loopir::Expr>& i) {
                               return te::at(e, i) / te::at(es, {i[0], loopir::make_int(0)});
                             },
                             {"i", "j"});
  return te::make_dag("softmax", {y});
}

}  // namespace

class TestFastSchedules : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"});
    QVERIFY2(CodeGenRegistry::global().has("llvm"), "the llvm plugin did not load");
  }

  void shipped_matmul_schedule_computes_the_product() {
    const std::string path = TESSEL_SOURCE_DIR "/resources/schedules/matmul_1024.sched";
    const std::string text = read_text(path);
    QVERIFY2(!text.empty(), qPrintable(QString::fromStdString("cannot read " + path)));
    schedule::Schedule sched = schedule::parse_schedule(text);
    QVERIFY(sched.steps.size() >= 5);
    const int64_t n = 1024;
    te::ComputeDag dag = te::matmul_dag(n, n, n);
    loopir::Func f = lower::lower(dag, sched).func;
    std::vector<Tensor> args = random_args(f, 5);
    build_module({f}, Target::parse("llvm"))->call_host(f.name, pointers(args));
    // The reference: a plain i-k-j product accumulated in double, on every 7th row (every row
    // position within a register tile, whatever its height) and the last rows (the tail tile);
    // all of them would take too long under the sanitizers.
    const float* a = args[0].data<float>();
    const float* b = args[1].data<float>();
    const float* c = args[2].data<float>();
    std::vector<double> row(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      if (i % 7 != 0 && i < n - 8) continue;
      std::fill(row.begin(), row.end(), 0.0);
      for (int64_t k = 0; k < n; ++k) {
        double aik = a[i * n + k];
        for (int64_t j = 0; j < n; ++j) row[static_cast<size_t>(j)] += aik * b[k * n + j];
      }
      for (int64_t j = 0; j < n; ++j)
        if (std::abs(row[static_cast<size_t>(j)] - c[i * n + j]) > 1e-3 * (1 + std::abs(row[static_cast<size_t>(j)])))
          QFAIL(qPrintable(QString("C[%1, %2]: expected %3, got %4")
                               .arg(i)
                               .arg(j)
                               .arg(row[static_cast<size_t>(j)])
                               .arg(c[i * n + j])));
    }
  }

  void default_matmul_accumulates_in_a_local_register_tile() {
    te::ComputeDag dag = te::matmul_dag(256, 256, 256);
    schedule::Schedule sched = schedule::default_cpu_schedule(dag, kLanes);
    std::string text = schedule::to_text(sched);
    QVERIFY2(text.find("cache_write(C, local)") != std::string::npos, text.c_str());
    QVERIFY2(text.find("compute_at(C_local, C.j.outer)") != std::string::npos, text.c_str());
    QVERIFY2(text.find("vectorize(C_local.j.inner)") != std::string::npos, text.c_str());
    QVERIFY2(text.find("unroll(C_local.i)") != std::string::npos, text.c_str());
    // Lowered: one small local accumulator per output tile, the k loop outside the unrolled
    // micro-kernel, whose accesses to the accumulator have constant offsets.
    std::string program = loopir::to_string(lower::lower(dag, sched).func);
    std::smatch m;
    QVERIFY2(std::regex_search(program, m, std::regex(R"(allocate C_local: f32\[(\d+)\] local)")), program.c_str());
    int64_t elements = std::stoll(m[1]);
    QVERIFY2(elements >= 4 * kLanes && elements <= 24 * kLanes, program.c_str());  // fits the 32 vector registers
    QVERIFY2(
        std::regex_search(program, std::regex(R"(for k\.outer in 0\.\.64 \{\s*for j\.inner in 0\.\.16 vectorized \{\s*)"
                                              R"(C_local\[j\.inner\] = C_local\[j\.inner\] \+)")),
        program.c_str());
    // The last accumulator vector of the tile is named by a constant offset, once per unrolled k.
    const std::string last = "C_local[j.inner + " + std::to_string(elements - kLanes) + "] = C_local";
    size_t updates = 0;
    for (size_t at = program.find(last); at != std::string::npos; at = program.find(last, at + 1)) ++updates;
    QVERIFY2(updates >= 4, program.c_str());
  }

  // Softmax: one row at a time; the row max and sum as 16 partial results in a vector (rfactor),
  // exp computed once per element into a row-local buffer that the sum and the output read.
  void default_softmax_works_row_by_row() {
    te::ComputeDag dag = softmax_with_exp_stage(64, 128);
    schedule::Schedule sched = schedule::default_cpu_schedule(dag, kLanes);
    std::string text = schedule::to_text(sched);
    for (const char* step :
         {"rfactor(row_max.k.inner)", "rfactor(exp_sum.k.inner)", "compute_at(row_max, softmax.i.inner)",
          "compute_at(exp_sum, softmax.i.inner)", "vectorize(exp_sum_rf.k.inner)", "unroll(softmax.i.inner)"})
      QVERIFY2(text.find(step) != std::string::npos, qPrintable(QString("no %1 in\n%2").arg(step, text.c_str())));
    // 64 rows are too little work to share among threads (schedule/parallel_work.h); 1024 are not.
    QVERIFY2(text.find("parallel(") == std::string::npos, text.c_str());
    std::string many_rows =
        schedule::to_text(schedule::default_cpu_schedule(softmax_with_exp_stage(1024, 128), kLanes));
    QVERIFY2(many_rows.find("parallel(softmax.i.outer)") != std::string::npos, many_rows.c_str());
    std::string program = loopir::to_string(lower::lower(dag, sched).func);
    size_t exps = 0;
    for (size_t at = program.find("exp("); at != std::string::npos; at = program.find("exp(", at + 1)) ++exps;
    QVERIFY2(exps == 4, program.c_str());  // once in each of the 4 unrolled rows
    QVERIFY2(program.find("allocate exp_sum_rf: f32[16]") != std::string::npos, program.c_str());
    // Reductions without the kept axis too: the 16 partial sums stay a vector.
    te::ComputeDag norm = te::layernorm_dag(64, 96);
    std::string norm_program = loopir::to_string(lower::lower(norm, schedule::default_cpu_schedule(norm, kLanes)).func);
    for (const char* buffer : {"allocate row_sum_rf: f32[16]", "allocate row_var_rf: f32[16]"})
      QVERIFY2(norm_program.find(buffer) != std::string::npos, norm_program.c_str());
  }

  void default_schedules_compute_what_the_interpreter_computes_data() {
    QTest::addColumn<QString>("spec");
    QTest::newRow("matmul even") << "matmul M=64 N=64 K=32";
    QTest::newRow("matmul tails") << "matmul M=37 N=45 K=19";
    QTest::newRow("matmul narrow") << "matmul M=5 N=3 K=7";
    QTest::newRow("gemv") << "matmul M=1 N=128 K=40";
    QTest::newRow("conv nchw") << "conv2d N=1 C=3 H=12 W=12 K=8 R=3 S=3 stride=1 pad=1";
    QTest::newRow("conv stride 2 wide") << "conv2d N=1 C=3 H=40 W=40 K=8 R=7 S=7 stride=2 pad=3";
    QTest::newRow("conv bias relu") << "conv2d_bias_relu N=1 C=4 H=10 W=18 K=5 R=3 S=3 stride=2 pad=1";
    QTest::newRow("conv nchw16c") << "conv2d_nchwc N=1 C=32 H=9 W=9 K=32 R=3 S=3 stride=1 pad=1 block=16";
    QTest::newRow("depthwise") << "depthwise_conv2d N=1 C=20 H=9 W=21 R=3 S=3 stride=1 pad=1";
    QTest::newRow("max pool") << "max_pool N=1 C=4 H=40 W=40 size=2 stride=2";
    QTest::newRow("avg pool") << "avg_pool N=1 C=3 H=9 W=9 size=3 stride=2";
    QTest::newRow("softmax") << "softmax M=8 N=40";
    QTest::newRow("softmax whole vectors") << "softmax M=3 N=128";
    QTest::newRow("softmax short rows") << "softmax M=5 N=20";
    QTest::newRow("layernorm") << "layernorm M=6 N=48";
    QTest::newRow("layernorm tails") << "layernorm M=2 N=100";
    // Enough work to run in parallel: a conv of two 32-channel blocks, whose parallel loop is
    // fused with the rows inside it (widened_for_threads), and an element-wise op.
    // (7x7: the interpreter is slow under the sanitizers, and 20x20 ran past QtTest's 5-minute
    // watchdog on session 12's machine.)
    QTest::newRow("conv nchw32c parallel") << "conv2d_nchwc N=1 C=64 H=7 W=7 K=64 R=3 S=3 stride=1 pad=1 block=32";
    QTest::newRow("add parallel") << "add shape=3x200000";
  }
  void default_schedules_compute_what_the_interpreter_computes() {
    QFETCH(QString, spec);
    te::ComputeDag dag = te::dag_from_spec(spec.toStdString());
    check_llvm_matches_interpreter(dag, schedule::default_cpu_schedule(dag, kLanes), spec);
  }

  // Where masked vector loads are slow (AVX2, 8 lanes), the padding of a depthwise conv is copied
  // one channel plane at a time inside the conv's parallel loop, vectorized along its rows; with
  // AVX-512's cheap masked loads (16 lanes) it stays inlined. The plane copy computes the same
  // values, tails included (31 columns, 33 with the border).
  void depthwise_padding_is_copied_per_plane_without_cheap_masked_loads() {
    te::ComputeDag dag = te::dag_from_spec("depthwise_conv2d N=1 C=48 H=29 W=31 R=3 S=3 stride=1 pad=1");
    schedule::Schedule avx2 = schedule::default_cpu_schedule(dag, 8);
    std::string text = schedule::to_text(avx2);
    for (const char* step : {"parallel(dwconv.c)", "compute_at(pad, dwconv.c)", "vectorize(pad.w.inner)"})
      QVERIFY2(text.find(step) != std::string::npos, qPrintable(QString("no %1 in\n%2").arg(step, text.c_str())));
    std::string program = loopir::to_string(lower::lower(dag, avx2).func);
    std::smatch m;
    QVERIFY2(std::regex_search(program, m, std::regex(R"(allocate pad: f32\[(\d+)\])")), program.c_str());
    QVERIFY2(std::stoll(m[1]) < 2 * 31 * 33, program.c_str());  // one plane, not all 48
    check_llvm_matches_interpreter(dag, avx2, "depthwise, padding per plane");
    std::string avx512 = schedule::to_text(schedule::default_cpu_schedule(dag, 16));
    QVERIFY2(avx512.find("compute_inline(pad)") != std::string::npos, avx512.c_str());
    // A scalar select (DynamicQuantizeLinear's clamped zero point, read by element-wise stages)
    // has no axis to vectorize or copy by: inlined, not a crash.
    te::Tensor x = te::placeholder("X", {40});
    te::Tensor clamp = te::compute("clamp", {}, [&](const std::vector<loopir::Expr>&) {
      return loopir::make_select(loopir::make_binary(loopir::BinaryOp::kGT, te::at(x, {loopir::make_int(0)}), loopir::make_float(0.0)),
                                 te::at(x, {loopir::make_int(0)}), loopir::make_float(0.0));
    });
    te::Tensor scaled = te::compute("scaled", {40}, [&](const std::vector<loopir::Expr>& i) {
      return te::at(x, i) * te::at(clamp, {});
    });
    te::ComputeDag scalar = te::make_dag("scalar_select", {scaled});
    check_llvm_matches_interpreter(scalar, schedule::default_cpu_schedule(scalar, 8), "scalar select");
    // A padding in the blocked layout (NCHW16c) tests the pixel, not the lane: no copy for it.
    te::ComputeDag blocked = te::dag_from_spec("conv2d_nchwc N=1 C=32 H=9 W=9 K=32 R=3 S=3 stride=1 pad=1 block=16");
    std::string blocked_text = schedule::to_text(schedule::default_cpu_schedule(blocked, 8));
    QVERIFY2(blocked_text.find("compute_at(pad") == std::string::npos, blocked_text.c_str());
  }

  // Whether the default schedules share a kernel among threads, and over how many iterations.
  void default_parallel_loops_depend_on_the_work() {
    auto text_of = [](const te::ComputeDag& dag) {
      return schedule::to_text(schedule::default_cpu_schedule(dag, kLanes));
    };
    // mlp's first Gemm: 16 K multiply-adds, about a microsecond on one thread.
    QVERIFY(schedule::kernel_work(te::matmul_dag(4, 64, 64)) < schedule::kParallelWorkMin);
    std::string small = text_of(te::matmul_dag(4, 64, 64));
    QVERIFY2(small.find("parallel(") == std::string::npos, small.c_str());
    // ResNet-18's layer1 conv in NCHW32c: 2 channel blocks, fused with the 56 rows into 112
    // iterations (a loop of 2 would give each of two threads one, the late one stalling the other),
    // the rows outside: each thread's band of rows is the one it wrote in the kernel before.
    te::Conv2dParams p;
    p.in_channels = p.out_channels = 64;
    p.height = p.width = 56;
    te::ComputeDag conv = te::conv2d_nchwc_dag(p, 32);
    QVERIFY(schedule::kernel_work(conv) >= schedule::kParallelWorkMin);
    std::string text = text_of(conv);
    QVERIFY2(text.find("fuse(conv.y, conv.f)\nparallel(conv.y.f.fused)") != std::string::npos, text.c_str());
    // Work counts multiply-adds and the elements moved: 1×64×56×56 outputs × 576.
    QVERIFY(schedule::kernel_work(conv) > 64 * 56 * 56 * 576);
    // Layer3's: 8 blocks of 2.4 MB of weights in all, more than stay in L2; the blocks stay outside
    // (rows outside would read every block's weights again for each band of rows).
    p.in_channels = p.out_channels = 256;
    p.height = p.width = 14;
    std::string layer3 = text_of(te::conv2d_nchwc_dag(p, 32));
    QVERIFY2(layer3.find("fuse(conv.f, conv.y)\nparallel(conv.f.y.fused)") != std::string::npos, layer3.c_str());

    // BERT's attention scores: 12 heads of 128×128 by 64. The 12 heads are few, but the rows are
    // tiled by 5 with a tail, which loop_partition peels off the last row tile: fused with the
    // heads, that tile would no longer be a loop's last iteration and every tile would be guarded.
    te::ComputeDag heads = batched_matmul_dag(12, 128, 128, 64);
    std::string heads_text = text_of(heads);
    QVERIFY2(heads_text.find("tile(C.i, C.j, 5, 64)") != std::string::npos, heads_text.c_str());
    QVERIFY2(heads_text.find("parallel(C.b)") != std::string::npos, heads_text.c_str());
    check_llvm_matches_interpreter(heads, schedule::default_cpu_schedule(heads, kLanes), "12 heads 128x128x64");
  }

  // A GEMM whose B is over half the L2: the tile columns outermost (in parallel), B's K x (tile
  // width) slice packed per column; forced on small shapes (tails included) to check the values.
  void packed_gemm_panels() {
    te::ComputeDag big = te::matmul_dag(1024, 1024, 1024);
    std::string text = schedule::to_text(schedule::default_cpu_schedule(big, kLanes));
    for (const char* step :
         {"reorder(C.j.outer, C.i.outer)", "compute_at(C_local, C.i.outer)", "cache_read(B, global, C_local)",
          "compute_at(B_global, C.j.outer)", "parallel(C.j.outer)"})
      QVERIFY2(text.find(step) != std::string::npos, qPrintable(QString("no %1 in\n%2").arg(step, text.c_str())));
    std::string program = loopir::to_string(lower::lower(big, schedule::default_cpu_schedule(big, kLanes)).func);
    const std::string panel = "allocate B_global: f32[" + std::to_string(1024 * 4 * kLanes) + "] global";
    QVERIFY2(program.find(panel) != std::string::npos, program.c_str());
    // A GEMV reads B once: nothing to pack. A small B fits the cache: no packing either.
    for (const char* spec : {"matmul M=1 N=4096 K=1024", "matmul M=256 N=256 K=256"}) {
      te::ComputeDag dag = te::dag_from_spec(spec);
      QVERIFY2(schedule::to_text(schedule::default_cpu_schedule(dag, kLanes)).find("cache_read") == std::string::npos,
               spec);
    }
    // The target's l2_cache_bytes decides: an L2 that holds B, no packing; a small one, packing.
    auto packs = [](const te::ComputeDag& dag, const std::string& target) {
      return schedule::to_text(compile::default_schedule(dag, Target::parse(target))).find("cache_read") !=
             std::string::npos;
    };
    QVERIFY(Target::parse("llvm").get_int("l2_cache_bytes") == host_cache_bytes(2));
    QVERIFY(!packs(big, "llvm -vector_bits=512 -l2_cache_bytes=67108864"));
    QVERIFY(packs(te::matmul_dag(256, 256, 256), "llvm -vector_bits=512 -l2_cache_bytes=65536"));
    schedule::CpuKnobs pack;
    pack.pack = true;
    for (const char* spec : {"matmul M=64 N=64 K=32", "matmul M=37 N=45 K=19", "matmul M=30 N=96 K=9"}) {
      te::ComputeDag dag = te::dag_from_spec(spec);
      schedule::Schedule sched = schedule::default_cpu_schedule(dag, kLanes, pack);
      QVERIFY2(schedule::to_text(sched).find("compute_at(B_global") != std::string::npos, spec);
      check_llvm_matches_interpreter(dag, sched, QString("packed %1").arg(spec));
    }
  }

  // AVX2's tiles are 16 floats wide: a packed GEMM whose A outgrows L2 groups its tile columns into
  // panels of 64 (4 tiles), the panel loop outermost and in parallel, one packed B panel per panel.
  // Not for 32-wide tiles (AVX-512), an A that stays in L2 (BERT's 128 rows), a panel over half the
  // L2, or too few panels for the threads.
  void narrow_gemm_tiles_share_a_rows_across_a_panel() {
    auto text_of = [](const te::ComputeDag& dag, int64_t lanes, int64_t l2_bytes) {
      return schedule::to_text(schedule::default_cpu_schedule(dag, lanes, {}, {32 * 1024, l2_bytes}));
    };
    te::ComputeDag big = te::matmul_dag(1024, 1024, 1024);
    const std::string avx2 = text_of(big, 8, 512 * 1024);
    for (const char* step : {"tile(C.i, C.j, 6, 16)", "split(C.j.outer, 4)", "compute_at(C_local, C.j.outer.inner)",
                             "compute_at(B_global, C.j.outer.outer)", "parallel(C.j.outer.outer)"})
      QVERIFY2(avx2.find(step) != std::string::npos, qPrintable(QString("no %1 in\n%2").arg(step, avx2.c_str())));
    const std::string program =
        loopir::to_string(lower::lower(big, schedule::default_cpu_schedule(big, 8, {}, {32 * 1024, 512 * 1024})).func);
    const std::string panel = "allocate B_global: f32[" + std::to_string(1024 * 64) + "] global";
    QVERIFY2(program.find(panel) != std::string::npos, program.c_str());
    QVERIFY(text_of(big, 16, 512 * 1024).find("split(C.j.outer") == std::string::npos);
    QVERIFY(text_of(te::matmul_dag(128, 768, 768), 8, 512 * 1024).find("split(C.j.outer") == std::string::npos);
    QVERIFY(text_of(te::matmul_dag(2048, 512, 2048), 8, 512 * 1024).find("split(C.j.outer") == std::string::npos);
    QVERIFY(text_of(te::matmul_dag(1024, 256, 1024), 8, 512 * 1024).find("split(C.j.outer") == std::string::npos);
    // 1028 columns: 128 tiles of one vector and a tail of 4 — no panels over a loop with a tail.
    QVERIFY(text_of(te::matmul_dag(1024, 1028, 1024), 8, 512 * 1024).find("split(C.j.outer") == std::string::npos);
    // The values, on a shape small enough for the interpreter (0.5 M multiply-adds): A 132 x 8
    // outgrows a 4 KB L2, a panel of B (8 x 64) fits half of it, 512 columns make 8 panels.
    te::ComputeDag small = te::matmul_dag(132, 512, 8);
    schedule::Schedule sched = schedule::default_cpu_schedule(small, 8, {}, {32 * 1024, 4 * 1024});
    QVERIFY2(schedule::to_text(sched).find("split(C.j.outer, 4)") != std::string::npos,
             schedule::to_text(sched).c_str());
    check_llvm_matches_interpreter(small, sched, "gemm in panels of 64 columns");
  }

  // The AVX2 GEMM shapes of session 16 (Zen 1, 512 KB L2): rows a 2-vector tile leaves a tail take 4
  // x 3 vectors; a GEMV whose width no wide tile divides takes 8 vectors with a tail; a rows operand
  // beyond L2 blocks K (the largest block >= 256 whose M x kc slice fits 3/4 of L2). Each checked
  // for its values on a shape the interpreter runs quickly.
  void avx2_gemm_tiles_and_k_blocks_follow_the_shape() {
    constexpr int64_t kAvx2 = 8;
    const schedule::CpuCaches zen1{32 * 1024, 512 * 1024};
    auto text_of = [&](const te::ComputeDag& dag, const schedule::CpuCaches& caches) {
      return schedule::to_text(schedule::default_cpu_schedule(dag, kAvx2, {}, caches));
    };
    auto has = [](const std::string& text, const char* step) { return text.find(step) != std::string::npos; };
    const std::string qkv = text_of(te::matmul_dag(128, 768, 768), zen1);  // BERT's 128 rows: 5 x 2 left 3
    QVERIFY2(has(qkv, "tile(C.i, C.j, 4, 24)"), qkv.c_str());
    QVERIFY2(!has(qkv, "rfactor("), qkv.c_str());  // A (384 KB) stays in L2
    const std::string big = text_of(te::matmul_dag(1024, 1024, 1024), zen1);
    QVERIFY2(has(big, "tile(C.i, C.j, 6, 16)"), big.c_str());  // 1024 is no multiple of 24
    QVERIFY2(!has(big, "rfactor("), big.c_str());              // kc would be 96: too shallow
    const std::string ffn_down = text_of(te::matmul_dag(128, 768, 3072), zen1);
    QVERIFY2(has(ffn_down, "split(C.k, 768)") && has(ffn_down, "rfactor(C.k.outer)"), ffn_down.c_str());
    const std::string classifier = text_of(te::matmul_dag(1, 1000, 1280), zen1);
    QVERIFY2(has(classifier, "tile(C.i, C.j, 1, 64)"), classifier.c_str());

    te::ComputeDag rows44 = te::matmul_dag(44, 48, 16);  // 5 rows would leave 4: 4 x 3 vectors
    schedule::Schedule tile43 = schedule::default_cpu_schedule(rows44, kAvx2, {}, zen1);
    QVERIFY2(has(schedule::to_text(tile43), "tile(C.i, C.j, 4, 24)"), schedule::to_text(tile43).c_str());
    check_llvm_matches_interpreter(rows44, tile43, "4 x 3-vector tile");
    te::ComputeDag gemv = te::matmul_dag(1, 264, 12);  // 4 tiles of 64 (at least 4) and a tail of 8
    schedule::Schedule wide = schedule::default_cpu_schedule(gemv, kAvx2, {}, zen1);
    QVERIFY2(has(schedule::to_text(wide), "tile(C.i, C.j, 1, 64)"), schedule::to_text(wide).c_str());
    check_llvm_matches_interpreter(gemv, wide, "GEMV tile with a tail");
    te::ComputeDag deep = te::matmul_dag(8, 32, 1024);  // A 32 KB beyond a 16 KB L2: kc = 256
    schedule::Schedule blocked = schedule::default_cpu_schedule(deep, kAvx2, {}, {32 * 1024, 16 * 1024});
    QVERIFY2(has(schedule::to_text(blocked), "split(C.k, 256)"), schedule::to_text(blocked).c_str());
    check_llvm_matches_interpreter(deep, blocked, "K blocked by default");
    // Only float products: an int8 one of the same shape keeps its k loop whole.
    te::Tensor a8 = te::placeholder("A", {8, 1024}, DataType::kInt8), b8 = te::placeholder("B", {1024, 32}, DataType::kInt8);
    loopir::IterVar r = te::reduce_axis(1024, "k");
    te::Tensor c32 = te::compute("C", {8, 32}, [&](const std::vector<loopir::Expr>& i) {
      return te::sum(te::cast(DataType::kInt32, te::at(a8, {i[0], r.var})) * te::cast(DataType::kInt32, te::at(b8, {r.var, i[1]})),
                     {r});
    });
    te::ComputeDag deep_int8 = te::make_dag("matmul_i8", {c32});
    const std::string int8_text =
        schedule::to_text(schedule::default_cpu_schedule(deep_int8, kAvx2, {}, {32 * 1024, 16 * 1024}));
    QVERIFY2(!has(int8_text, "rfactor("), int8_text.c_str());
  }

  // Weights packed at compile time (transform_layout's matmul_packed, B [N/b, K, b]) are read
  // straight from their panels: a tile b columns wide, the tile columns outside the rows as with a
  // run-time packed panel, no copy and no K blocks; the program indexes B without a division. A
  // panel of another width than the shape's own tile (packed for another target) sets the tile.
  void weights_packed_at_compile_time_are_read_without_a_copy() {
    constexpr int64_t kAvx2 = 8;
    const schedule::CpuCaches zen1{32 * 1024, 512 * 1024};
    auto text_of = [&](const te::ComputeDag& dag) {
      return schedule::to_text(schedule::default_cpu_schedule(dag, kAvx2, {}, zen1));
    };
    auto has = [](const std::string& text, const char* step) { return text.find(step) != std::string::npos; };
    const std::string ffn_up = text_of(te::matmul_packed_dag(128, 3072, 768, 24));
    QVERIFY2(has(ffn_up, "tile(C.i, C.j, 4, 24)") && has(ffn_up, "reorder(C.j.outer, C.i.outer)"), ffn_up.c_str());
    QVERIFY2(!has(ffn_up, "cache_read("), ffn_up.c_str());
    const std::string ffn_down = text_of(te::matmul_packed_dag(128, 768, 3072, 24));
    QVERIFY2(!has(ffn_down, "rfactor(") && !has(ffn_down, "cache_read("), ffn_down.c_str());
    // A beyond L2 (1024 x 1024 rows): the tile columns in cache panels of 64, as with a run-time pack.
    const std::string big = text_of(te::matmul_packed_dag(1024, 1024, 1024, 16));
    QVERIFY2(has(big, "split(C.j.outer, 4)") && !has(big, "cache_read("), big.c_str());
    const std::string other = text_of(te::matmul_packed_dag(128, 768, 768, 16));
    QVERIFY2(has(other, "tile(C.i, C.j, 5, 16)"), other.c_str());  // 2 vectors: rows as for 16 columns

    for (const auto& [m, n, k, block] : {std::tuple{12, 48, 20, 24}, std::tuple{13, 32, 9, 16}}) {
      te::ComputeDag dag = te::matmul_packed_dag(m, n, k, block);
      schedule::Schedule sched = schedule::default_cpu_schedule(dag, kAvx2, {}, zen1);
      const std::string program = loopir::to_string(lower::lower(dag, sched).func);
      QVERIFY2(program.find(" / ") == std::string::npos && program.find(" % ") == std::string::npos, program.c_str());
      check_llvm_matches_interpreter(dag, sched, QString("packed weights, block %1").arg(block));
    }
  }

  // A conv whose channel block is three AVX2 vectors (transform_layout's 24-channel block) takes a
  // 4-pixel x 3-vector register tile, not 8 x 1 vector; the values match the interpreter.
  void avx2_conv_in_blocks_of_24_takes_a_three_vector_tile() {
    te::Conv2dParams p;
    p.in_channels = 48;
    p.out_channels = 24;
    p.height = p.width = 12;
    p.kernel_h = p.kernel_w = 1;
    p.pad = 0;
    te::ComputeDag dag = te::conv2d_nchwc_dag(p, 24);
    schedule::Schedule sched = schedule::default_cpu_schedule(dag, 8, {}, {32 * 1024, 512 * 1024});
    const std::string text = schedule::to_text(sched);
    QVERIFY2(text.find("tile(conv.x, conv.fb, 4, 24)") != std::string::npos, text.c_str());
    check_llvm_matches_interpreter(dag, sched, "conv, 24-channel blocks");
  }

  // A conv whose weights are over half the L2 cache (ResNet-18's layer4: 9.4 MB) hints the next
  // output-channel block's weights into L2 from its micro-kernel's reduce loop; one whose weights
  // stay in L2 (layer1: 147 KB) has no hints. Forced on small shapes to check the values.
  void default_conv_prefetches_weights_beyond_the_l2_cache() {
    te::Conv2dParams p;
    p.in_channels = p.out_channels = 512;
    p.height = p.width = 7;
    te::ComputeDag layer4 = te::conv2d_nchwc_dag(p, 32);
    std::string text = schedule::to_text(schedule::default_cpu_schedule(layer4, kLanes));
    QVERIFY2(text.find("prefetch(conv_local.rb.outer, Wt, conv.f, 1)") != std::string::npos, text.c_str());
    std::string program = loopir::to_string(lower::lower(layer4, schedule::default_cpu_schedule(layer4, kLanes)).func);
    QVERIFY2(program.find("prefetch(address_of(") != std::string::npos, program.c_str());
    p.in_channels = p.out_channels = 64;
    p.height = p.width = 56;
    te::ComputeDag layer1 = te::conv2d_nchwc_dag(p, 32);
    std::string small = schedule::to_text(schedule::default_cpu_schedule(layer1, kLanes));
    QVERIFY2(small.find("prefetch(") == std::string::npos, small.c_str());
    schedule::CpuKnobs hint;
    hint.prefetch = true;
    for (const char* spec : {"conv2d_nchwc N=1 C=32 H=9 W=9 K=64 R=3 S=3 stride=1 pad=1 block=16",
                             "conv2d_nchwc N=1 C=16 H=7 W=5 K=48 R=3 S=3 stride=2 pad=1 block=16"}) {
      te::ComputeDag dag = te::dag_from_spec(spec);
      schedule::Schedule sched = schedule::default_cpu_schedule(dag, kLanes, hint);
      QVERIFY2(schedule::to_text(sched).find("prefetch(") != std::string::npos, spec);
      check_llvm_matches_interpreter(dag, sched, QString("prefetching %1").arg(spec));
    }
  }

  // A conv whose weights stream and whose channel blocks are many (ResNet-18's layer4: 16 blocks of
  // 590 KB) accumulates each block's whole output plane, the image rows inside the outer reduce
  // loops, so each slice of weights is read from memory once for all rows; layer1 keeps its tile
  // per row. Forced on small shapes (16 blocks, the weights hinted) to check the values.
  void default_conv_with_streamed_weights_accumulates_its_plane() {
    te::Conv2dParams p;
    p.in_channels = p.out_channels = 512;
    p.height = p.width = 7;
    std::string layer4 = schedule::to_text(schedule::default_cpu_schedule(te::conv2d_nchwc_dag(p, 32), kLanes));
    QVERIFY2(layer4.find("compute_at(conv_local, conv.f)\nparallel(conv.f)") != std::string::npos, layer4.c_str());
    QVERIFY2(layer4.find("reorder(conv_local.rc, conv_local.ry, conv_local.y, conv_local.rx,") != std::string::npos,
             layer4.c_str());
    // On AVX2 (8 lanes, NCHW16c, a 512 KB L2) the tile is 4 of the row's 7 pixels: the plane
    // still, each row walked in tiles inside the outer reduce loops.
    std::string avx2 = schedule::to_text(
        schedule::default_cpu_schedule(te::conv2d_nchwc_dag(p, 16), 8, {}, {32 * 1024, 512 * 1024}));
    QVERIFY2(avx2.find("compute_at(conv_local, conv.f)\nparallel(conv.f)") != std::string::npos, avx2.c_str());
    QVERIFY2(avx2.find("split(conv_local.x, 4)") != std::string::npos, avx2.c_str());
    QVERIFY2(avx2.find("reorder(conv_local.rc, conv_local.ry, conv_local.y, conv_local.x.outer, conv_local.rx,") !=
                 std::string::npos,
             avx2.c_str());
    p.in_channels = p.out_channels = 64;
    p.height = p.width = 56;
    std::string layer1 = schedule::to_text(schedule::default_cpu_schedule(te::conv2d_nchwc_dag(p, 32), kLanes));
    QVERIFY2(layer1.find("compute_at(conv_local, conv.fb.outer)") != std::string::npos, layer1.c_str());
    schedule::CpuKnobs hint;
    hint.prefetch = true;
    for (const char* spec : {"conv2d_nchwc N=1 C=16 H=4 W=4 K=256 R=3 S=3 stride=1 pad=1 block=16",
                             "conv2d_nchwc N=1 C=32 H=8 W=7 K=256 R=3 S=3 stride=2 pad=1 block=16"}) {
      te::ComputeDag dag = te::dag_from_spec(spec);
      schedule::Schedule sched = schedule::default_cpu_schedule(dag, kLanes, hint);
      const std::string text = schedule::to_text(sched);
      QVERIFY2(text.find("compute_at(conv_local, conv.f)\n") != std::string::npos, (spec + ("\n" + text)).c_str());
      check_llvm_matches_interpreter(dag, sched, QString("plane per block %1").arg(spec));
    }
    // Rows of 7 in tiles of 4 and a tail of 3 (8 lanes).
    te::ComputeDag tiled_rows = te::dag_from_spec("conv2d_nchwc N=1 C=16 H=3 W=7 K=256 R=3 S=3 stride=1 pad=1 block=16");
    schedule::Schedule sched = schedule::default_cpu_schedule(tiled_rows, 8, hint);
    QVERIFY2(schedule::to_text(sched).find("split(conv_local.x, 4)") != std::string::npos,
             schedule::to_text(sched).c_str());
    check_llvm_matches_interpreter(tiled_rows, sched, "plane per block, rows in tiles");
  }

  // Padding is copied into its own buffer for a conv (each padded element read hundreds of times)
  // and inlined where each is read a few times (a 3x3 depthwise conv: 9; ResNet-18's 3x3/2 max pool:
  // about 2), where the copy would be most of the work.
  void padding_is_copied_for_convs_and_inlined_for_pools() {
    auto materializes_pad = [](const char* spec) {
      te::ComputeDag dag = te::dag_from_spec(spec);
      return schedule::to_text(schedule::default_cpu_schedule(dag, kLanes)).find("compute_inline(pad)") ==
             std::string::npos;
    };
    QVERIFY(materializes_pad("conv2d N=1 C=16 H=14 W=14 K=16 R=3 S=3 stride=1 pad=1"));
    QVERIFY(!materializes_pad("depthwise_conv2d N=1 C=16 H=28 W=28 R=3 S=3 stride=1 pad=1"));
  }

  void default_softmax_with_an_exp_stage_computes_what_the_interpreter_computes() {
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{4, 128}, {3, 40}, {5, 20}, {2, 7}}) {
      te::ComputeDag dag = softmax_with_exp_stage(rows, cols);
      check_llvm_matches_interpreter(dag, schedule::default_cpu_schedule(dag, kLanes),
                                     QString("softmax with exp stage %1 x %2").arg(rows).arg(cols));
    }
  }

  // A select that guards a load (a padded conv's border, inlined) must not read where its guard
  // is false: here the unguarded index lies gigabytes outside the buffer, so an unguarded load,
  // scalar, gathered or contiguous, would fault instead of producing the expected values.
  void select_never_loads_outside_its_guard_data() {
    QTest::addColumn<int>("kind");
    QTest::newRow("scalar loop") << int(loopir::ForKind::kSerial);
    QTest::newRow("vectorized loop") << int(loopir::ForKind::kVectorized);
    QTest::newRow("unrolled loop") << int(loopir::ForKind::kUnrolled);
  }
  void select_never_loads_outside_its_guard() {
    QFETCH(int, kind);
    using namespace loopir;
    const int64_t far = int64_t{1} << 30;
    auto A = make_buffer("A", DataType::kFloat32, {16});
    auto Out = make_buffer("Out", DataType::kFloat32, {5, 16});
    auto r = make_var("r"), i = make_var("i");
    // Row 0: lane 8 reads A[8], the others are 0 (a gather whose far lanes are masked off).
    // Row 1: every lane reads A[i] (contiguous); rows 2 and 3 read nothing (a guarded vector load).
    Expr lane_ok = make_binary(BinaryOp::kEQ, Expr(i), make_int(8));
    Expr gathered = make_select(lane_ok, make_load(A, {(Expr(i) - 8) * far + 8}), make_float(0));
    Expr row_ok = make_binary(BinaryOp::kEQ, Expr(r), make_int(1));
    Expr contiguous = make_select(row_ok, make_load(A, {Expr(i) + (Expr(r) - 1) * far}), make_float(-1));
    // Row 4: lanes below 8 read A[2 i] (a stride-2 load, masked per lane), the others are -2.
    Expr strided =
        make_select(make_binary(BinaryOp::kLT, Expr(i), make_int(8)), make_load(A, {Expr(i) * 2}), make_float(-2));
    Expr value = make_select(make_binary(BinaryOp::kEQ, Expr(r), make_int(0)), gathered,
                             make_select(make_binary(BinaryOp::kEQ, Expr(r), make_int(4)), strided, contiguous));
    Stmt body =
        make_for(r, make_int(0), make_int(5),
                 make_for(i, make_int(0), make_int(16), make_store(Out, {r, i}, value), static_cast<ForKind>(kind)));
    Func f{"guarded", {A, Out}, body};
    Tensor a(DataType::kFloat32, {16}), out(DataType::kFloat32, {5, 16});
    for (int64_t k = 0; k < 16; ++k) a.data<float>()[k] = static_cast<float>(k + 1);
    std::vector<Tensor*> args{&a, &out};
    build_module({f}, Target::parse("llvm"))->call_host(f.name, args);
    for (int64_t row = 0; row < 5; ++row)
      for (int64_t k = 0; k < 16; ++k) {
        float want = row == 0   ? (k == 8 ? 9.0f : 0.0f)
                     : row == 1 ? static_cast<float>(k + 1)
                     : row == 4 ? (k < 8 ? static_cast<float>(2 * k + 1) : -2.0f)
                                : -1.0f;
        QCOMPARE(out.data<float>()[row * 16 + k], want);
      }
  }
};

QTEST_GUILESS_MAIN(TestFastSchedules)
#include "test_fast_schedules.moc"
