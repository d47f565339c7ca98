// Schedules as data: text and JSON round trips, and the clear error of every misuse.
#include <QtTest>
#include <algorithm>

#include "core/schedule/schedule.h"
#include "core/support/error.h"
#include "core/te/op_spec.h"

using namespace tessel;
using namespace tessel::schedule;

namespace {

// Replays `text` on the DAG of `spec`; returns the error message ("" when it is valid).
std::string replay_error(const std::string& spec, const std::string& text) {
  try {
    replay(te::dag_from_spec(spec), parse_schedule(text));
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

const char* kMm = "matmul M=16 N=16 K=16";
const char* kConv = "conv2d N=1 C=3 H=7 W=7 K=4 R=3 S=3 stride=1 pad=1";
const char* kFused = "conv2d_bias_relu N=1 C=3 H=6 W=6 K=4 R=3 S=3 stride=1 pad=1";
const char* kSoftmax = "softmax M=4 N=8";

}  // namespace

class TestSchedule : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // A stage computed at a loop that is then split or fused moves to the loop that replaces it
  // (split: the inner loop; fuse: the fused one). It used to stay at the vanished loop and drop out
  // of the program, which then failed in code generation ("C_local is not allocated").
  void splitting_or_fusing_a_loop_keeps_what_is_computed_there() {
    const te::ComputeDag dag = te::dag_from_spec(kMm);
    for (const char* text : {"cache_write(C, local)\ncompute_at(C_local, C.j)\nsplit(C.j, 4)\n",
                             "cache_write(C, local)\ncompute_at(C_local, C.j)\nfuse(C.i, C.j)\n",
                             "cache_write(C, local)\ncompute_at(C_local, C.j)\ntile(C.i, C.j, 4, 4)\n"}) {
      const ScheduleState st = replay(dag, parse_schedule(text));
      const Stage* local = st.find("C_local");
      const Stage* c = st.find("C");
      QVERIFY(local && c);
      QCOMPARE(local->attach, Attach::kAt);
      QVERIFY2(std::find(c->leaf.begin(), c->leaf.end(), local->attach_axis) != c->leaf.end(), text);
    }
  }

  void text_form_round_trips_exactly() {
    const std::string text =
        "cache_read(A, shared, C)\n"
        "cache_write(C, local)\n"
        "split(C.i, 8)\n"
        "split(C.j, nparts=4)\n"
        "tile(C_local.i, C_local.j, 4, 4)\n"
        "fuse(C.i.outer, C.i.inner)\n"
        "reorder(C.j.outer, C.i.outer.i.inner.fused, C.j.inner)\n"
        "vectorize(C.j.inner)\n"
        "unroll(C_local.k)\n"
        "parallel(C.j.outer)\n"
        "bind(C.j.outer, blockIdx.x)\n"
        "vthread(C_local.i.outer)\n"
        "compute_at(C_local, C.j.outer)\n"
        "compute_inline(P)\n"
        "compute_root(P)\n"
        "storage_align(A_shared.ax0, 16, 1)\n"
        "double_buffer(A_shared)\n"
        "pragma(C.j.outer, auto_unroll_max_step=16)\n"
        "rfactor(C_local.k)\n";
    Schedule s = parse_schedule(text);
    QCOMPARE(s.steps.size(), size_t(19));
    QCOMPARE(to_text(s), text);
    QCOMPARE(s.steps[3].args[1].key, std::string("nparts"));
    QCOMPARE(std::get<int64_t>(s.steps[3].args[1].value), int64_t(4));
  }

  void parser_ignores_blank_lines_and_comments() {
    Schedule s = parse_schedule("# tile first\n\n  split( C.i ,8 )  \n");
    QCOMPARE(to_text(s), std::string("split(C.i, 8)\n"));
  }

  void json_round_trips() {
    Schedule s = parse_schedule("split(C.i, nparts=4)\ncache_read(A, shared, C)\nbind(C.i.outer, threadIdx.x)\n");
    nlohmann::json j = to_json(s);
    QCOMPARE(j["steps"][0]["kind"].get<std::string>(), std::string("split"));
    QCOMPARE(j["steps"][0]["args"][1]["nparts"].get<int64_t>(), int64_t(4));
    QCOMPARE(schedule_from_json(nlohmann::json::parse(j.dump())), s);
  }

  void every_step_kind_is_listed_with_a_signature() {
    QVERIFY(step_kinds().size() >= 18);
    for (auto& k : step_kinds()) {
      QVERIFY(std::string(k.signature).rfind(k.name, 0) == 0);
      QVERIFY(find_step_kind(k.name) == &k);
      // One row holds everything about a kind: its argument count and what it does.
      QVERIFY2(k.apply != nullptr && k.min_args >= 1 && k.min_args <= k.max_args, k.name);
      // ... and what each argument refers to, for the studio's form: every kind describes at least
      // its required arguments (a list argument stands for the rest), each depending only on an
      // earlier one.
      QVERIFY2(!k.args.empty(), k.name);
      const bool list = std::any_of(k.args.begin(), k.args.end(), [](const StepArgSpec& a) {
        return a.role == StepArgSpec::Role::kAxisList || a.role == StepArgSpec::Role::kReaders;
      });
      QVERIFY2(list || k.args.size() >= k.min_args, k.name);
      for (size_t i = 0; i < k.args.size(); ++i) QVERIFY2(k.args[i].ref < static_cast<int>(i), k.name);
    }
  }

  void steps_change_the_stage_state() {
    ScheduleState st =
        replay(te::dag_from_spec(kMm), parse_schedule("tile(C.i, C.j, 4, 8)\nsplit(C.k, 2)\nparallel(C.i.outer)"));
    const Stage* c = st.find("C");
    QVERIFY(c);
    QCOMPARE(c->leaf_names(), std::string("i.outer, j.outer, i.inner, j.inner, k.outer, k.inner"));
    QCOMPARE(c->axes[c->find_axis("i.outer")].kind, loopir::ForKind::kParallel);
  }

  void cache_stages_are_inserted_before_their_readers() {
    ScheduleState st =
        replay(te::dag_from_spec(kMm), parse_schedule("cache_read(B, shared, C)\ncache_write(C, local)"));
    QCOMPARE(st.stages.size(), size_t(3));
    QCOMPARE(st.stages[0].name, std::string("B_shared"));
    QCOMPARE(st.stages[0].scope, std::string("shared"));
    QCOMPARE(st.stages[1].name, std::string("C_local"));
    QCOMPARE(st.stages[2].name, std::string("C"));
    QVERIFY(st.stages[2].is_output);
  }

  void misuse_gives_a_clear_error_data() {
    QTest::addColumn<QString>("spec");
    QTest::addColumn<QString>("schedule");
    QTest::addColumn<QString>("expected");
    struct Case {
      const char* name;
      const char* spec;
      const char* text;
      const char* error;
    };
    const Case cases[] = {
        {"zero factor", kMm, "tile(C.i, C.j, 4, 4)\nsplit(C.k, 2)\nsplit(C.i.inner, 0)",
         "step 3 split(C.i.inner, 0): factor must be >= 1, got 0"},
        {"negative nparts", kMm, "split(C.i, nparts=-2)", "step 1 split(C.i, nparts=-2): nparts must be >= 1"},
        {"unknown split key", kMm, "split(C.i, parts=2)", "unknown key 'parts'"},
        {"factor is a name", kMm, "split(C.i, eight)", "argument 2 (factor) must be an integer, got 'eight'"},
        {"too few arguments", kMm, "split(C.i)",
         "expects 2 arguments (split(axis, factor) | split(axis, nparts=N)), got 1"},
        {"unknown stage", kMm, "split(D.i, 2)", "no stage named 'D' (stages: C)"},
        {"placeholder scheduled", kMm, "split(A.i, 2)", "A is an input placeholder"},
        {"unknown axis", kMm, "split(C.q, 2)", "stage C has no axis 'q' (its loops: i, j, k)"},
        {"axis without stage", kMm, "vectorize(i)", "'i' is not an axis; write STAGE.AXIS"},
        {"axis already split", kMm, "split(C.i, 2)\nsplit(C.i, 2)",
         "step 2 split(C.i, 2): axis C.i was already split or fused"},
        {"fuse not adjacent", kMm, "fuse(C.i, C.k)", "k must come right after i to fuse them"},
        {"fuse spatial with reduction", kMm, "fuse(C.j, C.k)",
         "cannot fuse a data-parallel axis with a reduction axis"},
        {"fuse across stages", kSoftmax, "fuse(row_max.i, softmax.j)", "belong to different stages"},
        {"reorder twice the same axis", kMm, "reorder(C.i, C.i)", "argument 2: axis C.i is listed twice"},
        {"reorder across stages", kSoftmax, "reorder(row_max.i, softmax.i)", "all axes must belong to one stage"},
        {"parallel reduction", kMm, "parallel(C.k)", "C.k is a reduction axis; parallel needs a data-parallel axis"},
        {"vectorize reduction", kMm, "vectorize(C.k)", "C.k is a reduction axis; vectorize needs a data-parallel axis"},
        {"annotate twice", kMm, "parallel(C.i)\nvectorize(C.i)", "step 2 vectorize(C.i): C.i is already parallel"},
        {"bad thread tag", kMm, "bind(C.i, threadIdx.w)", "unknown thread tag 'threadIdx.w'"},
        {"thread tag used twice", kMm, "bind(C.i, threadIdx.x)\nbind(C.j, threadIdx.x)",
         "threadIdx.x is already bound to C.i"},
        {"bind reduction", kMm, "bind(C.k, blockIdx.x)", "C.k is a reduction axis; bind needs a data-parallel axis"},
        {"compute_at output", kFused, "compute_at(relu, conv.y)", "relu is an output of the kernel"},
        {"compute_at non-reader", kFused, "compute_at(pad, relu.y)",
         "compute_at needs every reader of pad to be relu or computed at relu.y or a loop inside it (readers: conv)"},
        {"compute_at outside a reader", kMm,
         "cache_write(C, local)\ncompute_at(C_local, C.i)\ncache_read(B, global, C_local)\ncompute_at(B_global, C.j)",
         "step 4 compute_at(B_global, C.j): compute_at needs every reader of B_global to be C or computed at C.j or a "
         "loop inside it (readers: C_local)"},
        {"compute_at two readers", kSoftmax, "compute_at(row_max, softmax.i)", "readers: exp_sum, softmax"},
        {"compute_at itself", kConv, "compute_at(conv, conv.y)", "a stage cannot be computed at its own loop"},
        {"inline reduction", kFused, "compute_inline(conv)",
         "conv is a reduction; only injective stages can be inlined"},
        {"inline output", kFused, "compute_inline(relu)", "relu is an output of the kernel and cannot be inlined"},
        {"inline a compute_at target", kFused, "compute_at(conv, bias_add.y)\ncompute_inline(bias_add)",
         "conv is computed at bias_add; move it first"},
        {"schedule an inlined stage", kConv, "compute_inline(pad)\nsplit(pad.h, 2)",
         "stage pad is inlined and has no loops of its own"},
        {"bad scope", kMm, "cache_read(A, sharde, C)", "unknown memory scope 'sharde'"},
        {"cache_read non-reader", kSoftmax, "cache_read(row_max, shared, softmax, row_max)",
         "argument 4: row_max does not read row_max"},
        {"cache_read unknown tensor", kMm, "cache_read(Z, shared, C)", "no tensor named 'Z'"},
        {"cache_write after split", kMm, "split(C.i, 2)\ncache_write(C, local)",
         "cache_write must come before C is split"},
        {"storage_align innermost", kMm, "cache_read(A, shared, C)\nstorage_align(A_shared.ax1, 8, 1)",
         "is the innermost dimension"},
        {"storage_align offset", kMm, "cache_read(A, shared, C)\nstorage_align(A_shared.ax0, 8, 8)",
         "offset must be in [0, factor), got 8"},
        {"double_buffer at root", kMm, "cache_read(A, shared, C)\ndouble_buffer(A_shared)",
         "must be computed at a loop (compute_at)"},
        {"unknown pragma", kMm, "pragma(C.i, unroll_everything=1)", "unknown pragma 'unroll_everything'"},
        {"rfactor spatial axis", kMm, "rfactor(C.i)", "C.i is not a reduction axis"},
        {"rfactor after tile", kMm, "tile(C.i, C.j, 4, 4)\nsplit(C.k, 4)\nrfactor(C.k.inner)",
         "rfactor must come right after splitting the reduction axis"},
        {"tile same axis", kMm, "tile(C.i, C.i, 2, 2)", "axis_x and axis_y are the same axis"},
        {"tile with nparts", kMm, "tile(C.i, C.j, nparts=2, 2)", "tile takes factors, not nparts"},
        {"tensorize unknown intrinsic", kMm, "tensorize(C.i, gemm_32x32x32_f32)",
         "unknown tensor intrinsic 'gemm_32x32x32_f32' (declared: gemm_16x16x16_f32, gemm_8x8x8_f32, gemm_16x16x16_i8, "
         "gemm_8x8x8_i8, dot_16x4_u8i8_i32)"},
        {"tensorize wrong extent", kMm, "tile(C.i, C.j, 8, 8)\ntensorize(C.i.inner, gemm_16x16x16_f32)",
         "loop C.i.inner has extent 8, but gemm_16x16x16_f32's axis i has extent 16"},
        {"tensorize too many loops", kMm, "split(C.k, 8)\ntensorize(C.i, gemm_8x8x8_f32)",
         "the loops under C.i are i, j, k.outer, k.inner (4), but gemm_8x8x8_f32 computes over 3 axes"},
        {"tensorize outer part of a split", kMm,
         "split(C.i, 2)\nreorder(C.i.inner, C.i.outer, C.j, C.k)\ntensorize(C.i.outer, gemm_8x8x8_f32)",
         "C.i.outer does not walk its data with step 1"},
        {"tensorize split tail", "matmul M=20 N=16 K=16", "split(C.i, 16)\ntensorize(C.i.inner, gemm_16x16x16_f32)",
         "the split of C.i has a tail; gemm_16x16x16_f32 needs whole tiles"},
        {"tensorize not a reduction", "relu shape=16x16", "tensorize(Y.i, gemm_16x16x16_f32)",
         "Y is not a reduction, but gemm_16x16x16_f32 computes one"},
        {"tensorize non-matching computation", "conv2d N=1 C=8 H=8 W=8 K=8 R=1 S=1 stride=1 pad=0",
         "reorder(conv.ry, conv.rx, conv.n, conv.f, conv.y, conv.x, conv.rc)\ntensorize(conv.y, gemm_8x8x8_f32)",
         "conv does not compute gemm_8x8x8_f32: "},
    };
    for (auto& c : cases) QTest::newRow(c.name) << QString(c.spec) << QString(c.text) << QString(c.error);
  }
  void misuse_gives_a_clear_error() {
    QFETCH(QString, spec);
    QFETCH(QString, schedule);
    QFETCH(QString, expected);
    std::string err = replay_error(spec.toStdString(), schedule.toStdString());
    QVERIFY2(!err.empty(), "the schedule should have been rejected");
    QVERIFY2(err.find(expected.toStdString()) != std::string::npos, err.c_str());
    QVERIFY2(err.rfind("step ", 0) == 0, err.c_str());
  }

  void syntax_errors_name_the_line() {
    auto error_of = [](const std::string& text) {
      try {
        parse_schedule(text);
      } catch (const Error& e) {
        return std::string(e.what());
      }
      return std::string();
    };
    QVERIFY(error_of("split(C.i, 8)\nsplitt(C.i, 2)")
                .find("schedule line 2: schedule step 'splitt(C.i, 2)': unknown step kind 'splitt'") == 0);
    QVERIFY(error_of("split C.i 8").find("expected KIND(ARG, ...)") != std::string::npos);
    QVERIFY(error_of("split(C.i, 8x)").find("argument '8x' is neither an integer nor a name") != std::string::npos);
    bool threw = false;
    try {
      schedule_from_json(nlohmann::json::parse(R"({"steps": [{"kind": "split", "args": [1.5]}]})"));
    } catch (const Error& e) {
      threw = std::string(e.what()).find("schedule JSON step 1") == 0;
    }
    QVERIFY(threw);
  }
};

QTEST_APPLESS_MAIN(TestSchedule)
#include "test_schedule.moc"
