// The loop-IR verifier (core/loopir/verify.h): hand-built broken programs, each reported by what
// is wrong with it; real lowerings (CPU and GPU-style schedules) verify clean after every pass; the
// instrument names the pass after which a program broke.
#include <QtTest>

#include "core/loopir/printer.h"
#include "core/loopir/verify.h"
#include "core/lower/pipeline.h"
#include "core/schedule/default_schedule.h"
#include "core/support/error.h"
#include "core/te/op_spec.h"

using namespace tessel;
using namespace tessel::loopir;

namespace {

const Buffer kA = make_buffer("A", DataType::kFloat32, {8});
const Buffer kB = make_buffer("B", DataType::kFloat32, {8});

Func func(Stmt body) { return Func{"broken", {kA, kB}, std::move(body)}; }

// for i in 0..8 { B[i] = A[i] }
Stmt copy_loop(const VarRef& i) {
  return make_for(i, make_int(0), make_int(8), make_store(kB, {i}, make_load(kA, {i})));
}

// The problems as one text, for QVERIFY2's message.
QByteArray listed(const std::vector<std::string>& problems) {
  std::string text;
  for (const std::string& p : problems) text += "\n  " + p;
  return QByteArray::fromStdString(problems.empty() ? std::string("(no problem found)") : text);
}

// Whether one of `f`'s problems contains `needle`.
bool reports(const Func& f, const std::string& needle) {
  for (const std::string& p : verify(f))
    if (p.find(needle) != std::string::npos) return true;
  return false;
}

#define QVERIFY_REPORTS(f, needle) QVERIFY2(reports(f, needle), listed(verify(f)).constData())
#define QVERIFY_CLEAN(f) QVERIFY2(verify(f).empty(), (to_string(f) + listed(verify(f)).toStdString()).c_str())

}  // namespace

class TestLoopIrVerify : public QObject {
  Q_OBJECT

 private slots:
  void a_well_formed_program_has_no_problem() {
    VarRef i = make_var("i");
    QVERIFY_CLEAN(func(copy_loop(i)));
  }

  // ---------------------------------------------------------------- scoping

  void a_variable_used_outside_its_loop() {
    VarRef i = make_var("i");
    Func f = func(make_seq({copy_loop(i), make_store(kB, {i}, make_float(0))}));
    QVERIFY_REPORTS(f, "variable 'i' is used outside its loop or let (in the store to B)");
  }

  void a_variable_no_loop_binds() {
    VarRef j = make_var("j");
    QVERIFY_REPORTS(func(make_store(kB, {j}, make_float(0))), "variable 'j' is bound by no loop or let");
  }

  void a_loop_that_rebinds_its_variable_inside_itself() {
    VarRef i = make_var("i");
    Func f = func(make_for(i, make_int(0), make_int(2), copy_loop(i)));
    QVERIFY_REPORTS(f, "loop i binds 'i' again inside the scope that already binds it");
  }

  void the_same_variable_in_sibling_loops_is_fine() {
    VarRef i = make_var("i");  // loop_partition and unrolling copy a loop beside itself
    QVERIFY_CLEAN(func(make_seq({copy_loop(i), copy_loop(i)})));
  }

  void loop_bounds_that_use_their_own_variable() {
    VarRef i = make_var("i");
    Func f = func(make_for(i, make_int(0), Expr(i) + 1, make_store(kB, {i}, make_float(0))));
    QVERIFY_REPORTS(f, "'i' is used in its own definition (in the bounds of loop i)");
  }

  void a_let_binds_for_its_body_only() {
    VarRef i = make_var("i"), x = make_var("x");
    Stmt let = make_let(x, Expr(i) * 2, make_store(kB, {Expr(x) % 8}, make_float(1)));
    QVERIFY_CLEAN(func(make_for(i, make_int(0), make_int(8), let)));
    Func f = func(make_for(i, make_int(0), make_int(8), make_seq({let, make_store(kB, {x}, make_float(0))})));
    QVERIFY_REPORTS(f, "variable 'x' is used outside its loop or let (in the store to B, inside for i)");
  }

  // ---------------------------------------------------------------- buffers

  void a_buffer_never_allocated() {
    Buffer t = make_buffer("T", DataType::kFloat32, {8});
    VarRef i = make_var("i");
    Func f = func(make_for(i, make_int(0), make_int(8), make_store(t, {i}, make_load(kA, {i}))));
    QVERIFY_REPORTS(
        f, "buffer 'T' is neither a parameter nor allocated around its store (in the store to T, inside for i)");
    // Allocated, but in a sibling scope: gone where it is read.
    Stmt fill = make_allocate(t, make_for(i, make_int(0), make_int(8), make_store(t, {i}, make_float(0))));
    VarRef j = make_var("j");
    Func g = func(make_seq({fill, make_for(j, make_int(0), make_int(8), make_store(kB, {j}, make_load(t, {j})))}));
    QVERIFY_REPORTS(g, "buffer 'T' is neither a parameter nor allocated around its load (in the store to B");
  }

  void an_access_with_another_element_type_or_rank() {
    VarRef i = make_var("i");
    Buffer as_int = make_buffer("A", DataType::kInt32, {8});
    Func f = func(make_for(i, make_int(0), make_int(8),
                           make_store(kB, {i}, make_cast(DataType::kFloat32, make_load(as_int, {i})))));
    QVERIFY_REPORTS(f, "buffer 'A' is declared f32 but its load uses it as i32");
    Buffer matrix = make_buffer("M", DataType::kFloat32, {2, 4});
    Func g{"broken", {matrix}, make_store(matrix, {make_int(0), make_int(1), make_int(2)}, make_float(0))};
    QVERIFY_REPORTS(g, "the store of M has 3 indices for 2 dimensions");
  }

  // ---------------------------------------------------------------- barriers

  void a_barrier_outside_any_shared_allocation() {
    VarRef t = make_var("t");
    Stmt threads =
        make_for(t, make_int(0), make_int(8), copy_loop(make_var("i")), ForKind::kThreadBound, "threadIdx.x");
    Func f = func(make_seq({threads, make_barrier("shared")}));
    QVERIFY_REPORTS(f, "barrier(shared) stands outside every allocation of a shared buffer");
  }

  // The cross-thread reduction's shape (lower_thread_allreduce): thread loops, then a barrier
  // outside them, inside the shared lanes' allocation.
  void a_barrier_between_thread_loops_in_a_shared_allocation_is_fine() {
    Buffer lanes = make_buffer("red", DataType::kFloat32, {8}, "shared");
    VarRef t = make_var("t"), u = make_var("t");
    Stmt write = make_for(t, make_int(0), make_int(8), make_store(lanes, {t}, make_load(kA, {t})),
                          ForKind::kThreadBound, "threadIdx.x");
    Stmt read = make_for(u, make_int(0), make_int(8), make_store(kB, {u}, make_load(lanes, {Expr(u) % 4})),
                         ForKind::kThreadBound, "threadIdx.x");
    QVERIFY_CLEAN(func(make_allocate(lanes, make_seq({write, make_barrier("shared"), read}))));
  }

  void a_barrier_only_some_threads_reach() {
    Buffer lanes = make_buffer("red", DataType::kFloat32, {8}, "shared");
    VarRef t = make_var("t");
    Stmt body =
        make_seq({make_store(lanes, {t}, make_load(kA, {t})), make_if(lt(t, make_int(4)), make_barrier("shared")),
                  make_store(kB, {t}, make_load(lanes, {t}))});
    Func f =
        func(make_allocate(lanes, make_for(t, make_int(0), make_int(8), body, ForKind::kThreadBound, "threadIdx.x")));
    QVERIFY_REPORTS(f, "barrier(shared) is under a condition or loop bounds that depend on a threadIdx");
    // A loop that runs t times, through a let of t: thread 0 never reaches the barrier inside it.
    VarRef n = make_var("n"), r = make_var("r");
    Stmt rounds = make_let(n, Expr(t) + 0, make_for(r, make_int(0), n, make_barrier("shared")));
    Func g =
        func(make_allocate(lanes, make_for(t, make_int(0), make_int(8), rounds, ForKind::kThreadBound, "threadIdx.x")));
    QVERIFY_REPORTS(g,
                    "barrier(shared) is under a condition or loop bounds that depend on a threadIdx: some threads "
                    "of the block would never reach it (in barrier(shared), inside for t > let n > for r)");
    // A condition on the block index is the same for every thread of the block.
    VarRef b = make_var("b");
    Stmt uniform = make_if(lt(b, make_int(1)), make_barrier("shared"));
    Stmt threads = make_for(t, make_int(0), make_int(8), make_store(lanes, {t}, make_load(kA, {t})),
                            ForKind::kThreadBound, "threadIdx.x");
    QVERIFY_CLEAN(func(make_allocate(lanes, make_for(b, make_int(0), make_int(2), make_seq({threads, uniform}),
                                                     ForKind::kThreadBound, "blockIdx.x"))));
  }

  // ---------------------------------------------------------------- types

  void a_float_stored_into_an_int_buffer() {
    Buffer ints = make_buffer("I", DataType::kInt32, {8});
    VarRef i = make_var("i");
    Func f{"broken", {kA, ints}, make_for(i, make_int(0), make_int(8), make_store(ints, {i}, make_load(kA, {i})))};
    QVERIFY_REPORTS(f, "the value stored into I is f32, but I holds i32");
  }

  void an_integer_condition() {
    VarRef i = make_var("i");
    Func f = func(make_for(i, make_int(0), make_int(8), make_if(Expr(i) % 2, make_store(kB, {i}, make_float(1)))));
    QVERIFY_REPORTS(f, "an if's condition is i64, not bool: i % 2");
    Func g = func(
        make_for(i, make_int(0), make_int(8), make_store(kB, {i}, make_select(Expr(i), make_float(1), make_float(0)))));
    QVERIFY_REPORTS(g, "a select's condition is i64, not bool: i");
  }

  void operands_of_two_types_and_a_float_index() {
    VarRef i = make_var("i");
    Expr mixed = make_binary(BinaryOp::kAdd, make_load(kA, {i}), make_int(1, DataType::kInt32));
    QVERIFY_REPORTS(func(make_for(i, make_int(0), make_int(8), make_store(kB, {i}, mixed))),
                    "'+' has operands of two types, f32 and i32: A[i] and 1");
    Func f = func(make_store(kB, {make_float(1)}, make_float(0)));
    QVERIFY_REPORTS(f, "index 0 of the store of B is f32, not an integer: 1f");
  }

  void a_reduction_left_in_the_program() {
    VarRef k = make_var("k"), lhs = make_var("x", DataType::kFloat32), rhs = make_var("y", DataType::kFloat32);
    auto sum = std::make_shared<CommReducer>(CommReducer{"sum", lhs, rhs, Expr(lhs) + Expr(rhs), make_float(0)});
    Func f = func(make_store(kB, {make_int(0)}, make_reduce(sum, make_load(kA, {k}), {IterVar{k, 8}})));
    QVERIFY_REPORTS(f, "a reduction is left in the loop program");
    QCOMPARE(verify(f).size(), size_t{1});  // its own variables are not reported as unbound
  }

  // ---------------------------------------------------------------- the one-line error

  void verify_or_throw_names_the_function_the_pass_and_the_count() {
    VarRef i = make_var("i"), j = make_var("j");
    Func f = func(make_seq({copy_loop(i), make_store(kB, {i}, make_float(0)), make_store(kB, {j}, make_float(0))}));
    try {
      verify_or_throw(f, "loop_partition");
      QFAIL("verify_or_throw accepted a broken program");
    } catch (const Error& e) {
      QCOMPARE(QString(e.what()),
               QString("loop program 'broken' after loop_partition: variable 'i' is used outside its loop or let (in "
                       "the store to B) (and 1 more problem)"));
    }
    verify_or_throw(func(copy_loop(i)), "unroll");  // no problem: no throw
  }

  // The instrument a lowering runs: a pass that leaves a malformed program fails, named.
  void the_instrument_rejects_the_pass_that_broke_the_program() {
    lower::ProgramVerifier verifier;
    StepRecorder recorder;
    Instrumentation steps({&verifier, &recorder});
    VarRef i = make_var("i");
    IrSnapshotPtr good = lower::program_snapshot(func(copy_loop(i)));
    steps.run(StepKind::kLoweringPass, "build_loop_nests", nullptr, [&] { return good; });
    try {
      steps.run(StepKind::kLoweringPass, "hoist_everything", good, [&] {
        return lower::program_snapshot(func(make_seq({copy_loop(i), make_store(kB, {i}, make_float(0))})));
      });
      QFAIL("the verifier accepted a broken program");
    } catch (const StepFailure& failure) {
      const QString text = failure.what();
      QVERIFY2(text.startsWith("lowering pass hoist_everything: loop program 'broken' after hoist_everything: "
                               "variable 'i' is used outside its loop or let"),
               qPrintable(text));
      QCOMPARE(failure.record().after, good);  // the program stays what the pass received
    }
    QCOMPARE(recorder.records().size(), size_t{2});
    QVERIFY(recorder.records().back()->failed());
  }

  void lowering_verifies_by_default_in_debug_builds_and_under_the_variable() {
    const QByteArray saved = qgetenv("TESSEL_VERIFY_LOOPIR");
    qputenv("TESSEL_VERIFY_LOOPIR", "1");
    QVERIFY(lower::verifies_programs_by_default());
    qputenv("TESSEL_VERIFY_LOOPIR", "0");
#ifdef NDEBUG
    QVERIFY(!lower::verifies_programs_by_default());
#else
    QVERIFY(lower::verifies_programs_by_default());
#endif
    qputenv("TESSEL_VERIFY_LOOPIR", saved);
  }

  // ---------------------------------------------------------------- real lowerings

  void real_lowerings_verify_clean_after_every_pass_data() {
    QTest::addColumn<QString>("spec");
    QTest::addColumn<QString>("schedule");
    const auto cpu = [](const char* spec) {
      return schedule::to_text(schedule::default_cpu_schedule(te::dag_from_spec(spec)));
    };
    const auto gpu = [](const char* spec) {
      return schedule::to_text(schedule::default_gpu_schedule(te::dag_from_spec(spec)));
    };
    const char* kMatmul = "matmul M=64 N=64 K=64";
    QTest::newRow("matmul, default CPU schedule") << kMatmul << QString::fromStdString(cpu(kMatmul));
    QTest::newRow("matmul, default GPU schedule") << kMatmul << QString::fromStdString(gpu(kMatmul));
    // Threads reduce together: thread loops, a tree of barriers, a store from thread 0.
    QTest::newRow("matmul, threads reduce across k")
        << "matmul M=6 N=5 K=37"
        << "split(C.k, 8)\nreorder(C.k.inner, C.k.outer)\nbind(C.k.inner, threadIdx.x)\n"
           "bind(C.i, blockIdx.x)";
    // A shared tile on the CPU (no threads): its double-buffer pipeline keeps a barrier.
    QTest::newRow("matmul, double-buffered shared tile")
        << "matmul M=8 N=8 K=32"
        << "split(C.k, 4)\ncache_read(A, shared, C)\ncompute_at(A_shared, C.k.outer)\n"
           "double_buffer(A_shared)";
  }
  void real_lowerings_verify_clean_after_every_pass() {
    QFETCH(QString, spec);
    QFETCH(QString, schedule);
    const te::ComputeDag dag = te::dag_from_spec(spec.toStdString());
    lower::ProgramVerifier verifier;  // whatever the build and the environment say
    const lower::LowerResult r = lower::lower(dag, schedule::parse_schedule(schedule.toStdString()), {&verifier});
    QCOMPARE(r.passes.size(), lower::lowering_pass_names().size());
    for (const StepRecordPtr& pass : r.passes) {
      QVERIFY2(!pass->failed(), pass->error.c_str());
      const Func& program = *lower::program_of(pass->after);
      QVERIFY2(verify(program).empty(), (pass->name + ":" + listed(verify(program)).toStdString()).c_str());
    }
  }
};

QTEST_APPLESS_MAIN(TestLoopIrVerify)
#include "test_loopir_verify.moc"
