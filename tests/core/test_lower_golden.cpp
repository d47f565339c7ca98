// Golden programs, one per schedule step kind: tests/golden/lower/<case>.txt holds the op, the
// schedule and the lowered program, side by side. TESSEL_UPDATE_GOLDEN=1 rewrites the files;
// a mismatch prints a line diff. Every case is also interpreted and compared with the
// unscheduled program, so a golden file can only record a correct program.
#include <QtTest>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "core/loopir/interpreter.h"
#include "core/loopir/printer.h"
#include "core/lower/line_diff.h"
#include "core/lower/pipeline.h"
#include "core/te/op_spec.h"

using namespace tessel;

namespace {

struct GoldenCase {
  const char* file;
  const char* spec;
  const char* schedule;
};

const GoldenCase kCases[] = {
    {"split", "matmul M=10 N=8 K=4", "split(C.i, 4)"},
    {"split_nparts", "matmul M=8 N=8 K=4", "split(C.j, nparts=2)"},
    {"tile", "matmul M=8 N=8 K=4", "tile(C.i, C.j, 4, 4)"},
    {"fuse", "matmul M=4 N=6 K=4", "fuse(C.i, C.j)"},
    {"reorder", "matmul M=4 N=4 K=4", "reorder(C.k, C.j, C.i)"},
    {"vectorize", "add shape=4x8", "split(Y.j, 4)\nvectorize(Y.j.inner)"},
    {"unroll", "matmul M=4 N=4 K=4", "split(C.k, 2)\nunroll(C.k.inner)"},
    {"parallel", "relu shape=4x4", "parallel(Y.i)"},
    {"bind", "matmul M=8 N=8 K=4", "split(C.i, 4)\nbind(C.i.outer, blockIdx.x)\nbind(C.i.inner, threadIdx.x)"},
    {"vthread", "matmul M=4 N=4 K=2", "split(C.i, nparts=2)\nvthread(C.i.outer)"},
    {"vthread_tokens", "matmul M=4 N=4 K=8",
     "cache_read(A, accel.inp, C)\ncache_read(B, accel.wgt, C)\ncache_write(C, accel.acc)\nsplit(C.i, nparts=2)\n"
     "compute_at(C_acc, C.i.outer)\nvthread(C.i.outer)\nsplit(C_acc.k, 4)\ncompute_at(A_inp, C_acc.k.outer)\n"
     "compute_at(B_wgt, C_acc.k.outer)"},
    {"compute_at", "conv2d N=1 C=1 H=4 W=4 K=1 R=3 S=3 stride=1 pad=1", "compute_at(pad, conv.y)"},
    {"compute_inline", "conv2d N=1 C=1 H=4 W=4 K=1 R=3 S=3 stride=1 pad=1", "compute_inline(pad)"},
    {"compute_root", "conv2d N=1 C=1 H=4 W=4 K=1 R=3 S=3 stride=1 pad=1", "compute_at(pad, conv.y)\ncompute_root(pad)"},
    {"cache_read", "matmul M=8 N=8 K=8", "split(C.k, 4)\ncache_read(A, shared, C)\ncompute_at(A_shared, C.k.outer)"},
    {"cache_write", "matmul M=4 N=4 K=4", "cache_write(C, local)\ncompute_at(C_local, C.i)"},
    // A packed panel of B per column of register tiles (the default GEMM schedule's shape): the
    // copy is computed at the column loop, further out than its reader C_local, and holds only
    // the K x 4 slice that column reads, contiguous in the order the tile reads it.
    {"cache_read_panel", "matmul M=4 N=8 K=4",
     "cache_write(C, local)\ntile(C.i, C.j, 2, 4)\nreorder(C.j.outer, C.i.outer)\ncompute_at(C_local, C.i.outer)\n"
     "cache_read(B, global, C_local)\ncompute_at(B_global, C.j.outer)"},
    {"storage_align", "matmul M=4 N=4 K=4", "cache_read(A, shared, C)\nstorage_align(A_shared.ax0, 8, 1)"},
    {"double_buffer", "matmul M=4 N=4 K=16",
     "split(C.k, 4)\ncache_read(A, shared, C)\ncompute_at(A_shared, C.k.outer)\ndouble_buffer(A_shared)"},
    {"pragma", "matmul M=4 N=4 K=4", "split(C.k, 2)\npragma(C.j, auto_unroll_max_step=4)"},
    {"rfactor", "matmul M=4 N=4 K=8", "split(C.k, 4)\nrfactor(C.k.inner)"},
    // The GPU default for a row reduction: partial results per thread in shared memory, the final
    // value in each thread's registers; the barrier goes between the partials and their reader.
    {"set_scope", "softmax M=2 N=8",
     "split(row_max.k, 4)\nrfactor(row_max.k.inner)\nset_scope(row_max_rf, shared)\nset_scope(row_max, local)\n"
     "bind(softmax.i, blockIdx.x)\nsplit(softmax.j, 4)\nbind(softmax.j.inner, threadIdx.x)\n"
     "compute_at(exp_sum, softmax.i)\ncompute_at(row_max, softmax.i)\ncompute_at(row_max_rf, softmax.i)\n"
     "bind(row_max_rf.k.inner, threadIdx.x)"},
    // A reduction axis bound to threadIdx: the block's threads reduce together. Each thread's
    // partial result in its lane of a shared buffer, then a tree over the lanes (3 lanes: a fold
    // of lane 2, then one halving), a barrier after each step; thread 0 stores the result.
    {"bind_reduce", "softmax M=2 N=10",
     "split(row_max.k, 3)\nreorder(row_max.k.inner, row_max.k.outer)\nbind(row_max.k.inner, threadIdx.x)\n"
     "bind(row_max.i, blockIdx.x)"},
    // The same for a kernel's output, with a tail (40 = 3 x 16 - 8: the last part is guarded).
    {"bind_reduce_output", "matmul M=2 N=1 K=40",
     "fuse(C.i, C.j)\nbind(C.i.j.fused, blockIdx.x)\nsplit(C.k, 16)\nreorder(C.k.inner, C.k.outer)\n"
     "bind(C.k.inner, threadIdx.x)"},
    {"tensorize", "matmul M=32 N=16 K=32",
     "tile(C.i, C.j, 16, 16)\nsplit(C.k, 16)\nreorder(C.i.outer, C.j.outer, C.k.outer, C.i.inner, C.j.inner, "
     "C.k.inner)\ntensorize(C.i.inner, gemm_16x16x16_f32)"},
};

std::string golden_text(const GoldenCase& c, const std::string& program) {
  return std::string("# op: ") + c.spec + "\n# schedule:\n" + c.schedule + "\n# program:\n" + program;
}

std::vector<float> run(const te::ComputeDag& dag, const schedule::Schedule& s) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<Tensor> args;
  for (auto& t : dag.inputs()) {
    Tensor x(t->dtype, t->shape);
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = dist(rng);
    args.push_back(x);
  }
  Tensor out(dag.outputs[0]->dtype, dag.outputs[0]->shape);
  args.push_back(out);
  loopir::interpret(lower::lower(dag, s).func, args);
  auto v = out.values<float>();
  return {v.begin(), v.end()};
}

}  // namespace

class TestLowerGolden : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void programs_match_golden_files_data() {
    QTest::addColumn<int>("index");
    for (size_t i = 0; i < std::size(kCases); ++i) QTest::newRow(kCases[i].file) << static_cast<int>(i);
  }
  void programs_match_golden_files() {
    QFETCH(int, index);
    const GoldenCase& c = kCases[index];
    te::ComputeDag dag = te::dag_from_spec(c.spec);
    schedule::Schedule s = schedule::parse_schedule(c.schedule);
    std::string actual = golden_text(c, loopir::to_string(lower::lower(dag, s).func));

    auto scheduled = run(dag, s), plain = run(dag, {});
    for (size_t i = 0; i < plain.size(); ++i) QVERIFY2(std::fabs(scheduled[i] - plain[i]) < 1e-5, c.file);

    std::string path = std::string(TESSEL_SOURCE_DIR) + "/tests/golden/lower/" + c.file + ".txt";
    if (qEnvironmentVariableIsSet("TESSEL_UPDATE_GOLDEN")) {
      std::ofstream(path) << actual;
      return;
    }
    std::ifstream in(path);
    QVERIFY2(in.good(), qPrintable(QString::fromStdString("missing " + path + " (run with TESSEL_UPDATE_GOLDEN=1)")));
    std::stringstream expected;
    expected << in.rdbuf();
    if (expected.str() != actual)
      QFAIL(qPrintable(QString::fromStdString(path + " differs (- golden, + actual):\n" +
                                              lower::line_diff(expected.str(), actual))));
  }
};

QTEST_APPLESS_MAIN(TestLowerGolden)
#include "test_lower_golden.moc"
