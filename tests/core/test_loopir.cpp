// The loop IR: printing, structural equality, identity-preserving mutators, the interpreter.
#include <QtTest>

#include "core/loopir/equal.h"
#include "core/loopir/functor.h"
#include "core/loopir/interpreter.h"
#include "core/loopir/printer.h"
#include "core/support/error.h"

using namespace tessel;
using namespace tessel::loopir;

namespace {

// for i in 0..4 { B[i] = A[i] * 2f + 1f }
Func scale_kernel() {
  Buffer a = make_buffer("A", DataType::kFloat32, {4});
  Buffer b = make_buffer("B", DataType::kFloat32, {4});
  VarRef i = make_var("i");
  Stmt body =
      make_for(i, make_int(0), make_int(4), make_store(b, {i}, make_load(a, {i}) * make_float(2) + make_float(1)));
  return Func{"scale", {a, b}, body};
}

class CountLoads : public IRVisitor {
 public:
  int loads = 0;

 protected:
  bool enter(const Load&) override {
    ++loads;
    return true;
  }
};

class RenameA : public IRMutator {
 public:
  Buffer to;

 protected:
  Expr mutate_Load(const Load& n, const Expr& self) override {
    if (n.buffer->name != "A") return self;
    return make_load(to, n.indices);
  }
};

}  // namespace

class TestLoopIr : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void printer_output_is_readable_and_stable() {
    Func f = scale_kernel();
    const std::string expected =
        "func scale(A: f32[4], B: f32[4]) {\n"
        "  for i in 0..4 {\n"
        "    B[i] = A[i] * 2f + 1f\n"
        "  }\n"
        "}\n";
    QCOMPARE(to_string(f), expected);
    QCOMPARE(to_string(scale_kernel()), expected);
  }

  void printer_brackets_by_precedence() {
    VarRef a = make_var("a"), b = make_var("b"), c = make_var("c");
    QCOMPARE(to_string((a + b) * c), std::string("(a + b) * c"));
    QCOMPARE(to_string(a - (b - c)), std::string("a - (b - c)"));
    QCOMPARE(to_string(a - b - c), std::string("a - b - c"));
    QCOMPARE(to_string(a / (b * c)), std::string("a / (b * c)"));
    QCOMPARE(to_string(logical_and(lt(a, b), ge(b, c))), std::string("a < b && b >= c"));
    QCOMPARE(to_string(min(a, b + 1)), std::string("min(a, b + 1)"));
    QCOMPARE(to_string(make_select(lt(a, b), a, b)), std::string("select(a < b, a, b)"));
    QCOMPARE(to_string(make_call("exp", {make_cast(DataType::kFloat32, a)}, DataType::kFloat32)),
             std::string("exp(f32(a))"));
  }

  void statements_print_with_kinds_scopes_and_barriers() {
    Buffer s = make_buffer("S", DataType::kFloat32, {8}, "shared");
    VarRef t = make_var("t");
    Stmt body = make_allocate(
        s, make_seq({make_for(t, make_int(0), make_int(8), make_store(s, {t}, make_float(0)), ForKind::kThreadBound,
                              "threadIdx.x"),
                     make_barrier("shared"),
                     make_if(lt(t, make_int(3)), make_evaluate(make_int(1)), make_evaluate(make_int(2)))}));
    const std::string expected =
        "allocate S: f32[8] shared\n"
        "for t in 0..8 bind(threadIdx.x) {\n"
        "  S[t] = 0f\n"
        "}\n"
        "barrier(shared)\n"
        "if (t < 3) {\n"
        "  1\n"
        "} else {\n"
        "  2\n"
        "}\n"
        "free S\n";
    QCOMPARE(to_string(body), expected);
  }

  void structural_equality_compares_structure_not_identity() {
    QVERIFY(structural_equal(scale_kernel().body, scale_kernel().body));
    Func f = scale_kernel();
    VarRef i = make_var("i");
    Stmt other = make_for(i, make_int(0), make_int(5), as<For>(f.body)->body);
    QVERIFY(!structural_equal(f.body, other));
    QVERIFY(!structural_equal(make_int(1), make_int(1, DataType::kInt32)));
    QVERIFY(!structural_equal(make_var("x") + 1, make_var("x") - 1));
  }

  void mutator_that_changes_nothing_returns_the_same_node() {
    Func f = scale_kernel();
    IRMutator identity;
    QVERIFY(identity.mutate(f.body) == f.body);
    RenameA rename;
    rename.to = make_buffer("A2", DataType::kFloat32, {4});
    Stmt changed = rename.mutate(f.body);
    QVERIFY(changed != f.body);
    QVERIFY(to_string(changed).find("A2[i]") != std::string::npos);
  }

  void visitor_and_substitute() {
    Func f = scale_kernel();
    CountLoads c;
    c.visit(f.body);
    QCOMPARE(c.loads, 1);
    VarRef x = make_var("x");
    Expr e = x * 3 + x;
    Expr s = substitute(e, VarMap{{x.get(), make_int(5)}});
    QCOMPARE(to_string(s), std::string("5 * 3 + 5"));
    QVERIFY(substitute(e, VarMap{{make_var("y").get(), make_int(1)}}) == e);
  }

  void interpreter_runs_a_program() {
    Func f = scale_kernel();
    std::vector<float> a = {1, 2, 3, -4};
    Tensor in = Tensor::from_values<float>({4}, a), out(DataType::kFloat32, {4});
    interpret(f, {in, out});
    QCOMPARE(out.data<float>()[0], 3.f);
    QCOMPARE(out.data<float>()[3], -7.f);
  }

  void interpreter_handles_int_types_floor_division_and_intrinsics() {
    Buffer o = make_buffer("O", DataType::kInt64, {3});
    Buffer r = make_buffer("R", DataType::kFloat32, {2});
    Buffer b = make_buffer("Bo", DataType::kBool, {1});
    Buffer q = make_buffer("Q", DataType::kInt32, {1});
    Stmt body =
        make_seq({make_store(o, {make_int(0)}, make_int(-7) / 2), make_store(o, {make_int(1)}, make_int(-7) % 2),
                  make_store(o, {make_int(2)}, make_cast(DataType::kInt64, make_float(2.9))),
                  make_store(r, {make_int(0)}, make_call("sigmoid", {make_float(0)}, DataType::kFloat32)),
                  make_store(r, {make_int(1)}, make_call("pow", {make_float(2), make_float(10)}, DataType::kFloat32)),
                  make_store(b, {make_int(0)}, lt(make_int(1), make_int(2))),
                  make_store(q, {make_int(0)}, make_load(q, {make_int(0)}) + make_int(5, DataType::kInt32))});
    Func f{"ints", {o, r, b, q}, body};
    Tensor to(DataType::kInt64, {3}), tr(DataType::kFloat32, {2}), tb(DataType::kBool, {1}), tq(DataType::kInt32, {1});
    tq.data<int32_t>()[0] = 2;
    interpret(f, {to, tr, tb, tq});
    QCOMPARE(to.data<int64_t>()[0], int64_t(-4));  // floor division
    QCOMPARE(to.data<int64_t>()[1], int64_t(1));   // floor modulo
    QCOMPARE(to.data<int64_t>()[2], int64_t(2));
    QCOMPARE(tr.data<float>()[0], 0.5f);
    QCOMPARE(tr.data<float>()[1], 1024.f);
    QCOMPARE(tb.data<bool>()[0], true);
    QCOMPARE(tq.data<int32_t>()[0], 7);
  }

  void interpreter_reports_out_of_bounds_accesses() {
    Buffer a = make_buffer("A", DataType::kFloat32, {4});
    VarRef i = make_var("i");
    Func f{"oob", {a}, make_for(i, make_int(0), make_int(5), make_store(a, {i}, make_float(1)))};
    Tensor t(DataType::kFloat32, {4});
    bool threw = false;
    try {
      interpret(f, {t});
    } catch (const Error& e) {
      threw = std::string(e.what()).find("out-of-bounds access A[4] of 4 elements") != std::string::npos;
    }
    QVERIFY(threw);
  }

  // A Check prints as a range when it is one; run, a failing check throws its message with the
  // reported value, or, given a record, is recorded (number, value) and the program goes on with 0.
  void checks_print_readably_and_fail_with_their_message() {
    Buffer q = make_buffer("Q", DataType::kInt64, {3}), x = make_buffer("X", DataType::kFloat32, {4}),
           y = make_buffer("Y", DataType::kFloat32, {3});
    VarRef i = make_var("i");
    Expr raw = make_load(q, {i});
    Expr w = make_select(lt(raw, make_int(0)), raw + 4, raw);
    Expr index = make_check(logical_and(ge(w, make_int(0)), lt(w, make_int(4))), w, raw,
                            "node 'g' (Gather): index {} out of range [-4, 4) on axis 0");
    Func f{"gather", {q, x, y}, make_for(i, make_int(0), make_int(3), make_store(y, {i}, make_load(x, {index})))};
    QCOMPARE(to_string(index), std::string("check(select(Q[i] < 0, Q[i] + 4, Q[i]) in [0, 4), \"node 'g' (Gather): "
                                           "index {Q[i]} out of range [-4, 4) on axis 0\")"));
    QCOMPARE(check_messages(f), std::vector<std::string>{"node 'g' (Gather): index {} out of range [-4, 4) on axis 0"});
    Tensor tx = Tensor::from_values<float>({4}, std::vector<float>{10, 11, 12, 13}), ty(DataType::kFloat32, {3});
    interpret(f, {Tensor::from_values<int64_t>({3}, std::vector<int64_t>{3, -4, -1}), tx, ty});
    QCOMPARE(ty.data<float>()[0], 13.f);
    QCOMPARE(ty.data<float>()[1], 10.f);
    QCOMPARE(ty.data<float>()[2], 13.f);
    const Tensor bad = Tensor::from_values<int64_t>({3}, std::vector<int64_t>{1, 4, -5});
    try {
      interpret(f, {bad, tx, ty});
      QFAIL("index 4 was not reported");
    } catch (const Error& e) {
      QCOMPARE(std::string(e.what()), std::string("node 'g' (Gather): index 4 out of range [-4, 4) on axis 0"));
    }
    CheckRecord record;
    interpret(f, {bad, tx, ty}, &record);
    QCOMPARE(record.check, int64_t{1});
    QCOMPARE(record.value, int64_t{4});   // the first failure wins
    QCOMPARE(ty.data<float>()[2], 10.f);  // -5 went on as 0
    QCOMPARE(check_failure_text(check_messages(f), record),
             std::string("node 'g' (Gather): index 4 out of range [-4, 4) on axis 0"));
  }

  void interpreter_allocates_scoped_buffers() {
    Buffer out = make_buffer("O", DataType::kFloat32, {2, 2});
    Buffer tmp = make_buffer("T", DataType::kFloat32, {2}, "local");
    VarRef i = make_var("i"), j = make_var("j");
    Stmt body = make_for(
        i, make_int(0), make_int(2),
        make_allocate(tmp, make_seq({make_for(j, make_int(0), make_int(2),
                                              make_store(tmp, {j}, make_cast(DataType::kFloat32, i * 10 + j))),
                                     make_for(j, make_int(0), make_int(2),
                                              make_store(out, {i, j}, make_load(tmp, {j}) + make_float(1)))})));
    Tensor t(DataType::kFloat32, {2, 2});
    interpret(Func{"alloc", {out}, body}, {t});
    QCOMPARE(t.data<float>()[3], 12.f);
    QCOMPARE(t.data<float>()[1], 2.f);
  }

  // A call the interpreter does not know runs through the evaluator registered under its name
  // (core/te registers the tensor intrinsics' this way): here fill_row(address_of(O[i, 0]), n)
  // stands for `for j in 0..n { O[base + j] = 7 }`.
  void interpreter_runs_registered_calls() {
    Buffer out = make_buffer("O", DataType::kFloat32, {2, 3});
    register_call_evaluator("test_fill_row", [out](const Call& call, CallSite& site) -> Stmt {
      const Load& first = *as<Load>(as<Call>(call.args[0])->args[0]);
      const int64_t base = site.element_offset(first), n = site.integer(call.args[1]);
      Buffer flat = make_buffer(out->name, out->dtype, {out->shape[0] * out->shape[1]});
      VarRef j = make_var("j");
      return make_for(j, make_int(0), make_int(n), make_store(flat, {make_int(base) + j}, make_float(7)));
    });
    VarRef i = make_var("i");
    Expr row = make_call("address_of", {make_load(out, {i, make_int(0)})}, DataType::kInt64);
    Stmt body = make_for(i, make_int(0), make_int(2),
                         make_evaluate(make_call("test_fill_row", {row, make_int(3)}, DataType::kInt32)));
    Tensor t(DataType::kFloat32, {2, 3});
    interpret(Func{"fill", {out}, body}, {t});
    for (int k = 0; k < 6; ++k) QCOMPARE(t.data<float>()[k], 7.f);
    QVERIFY_THROWS_EXCEPTION(Error,
                             register_call_evaluator("test_fill_row", [](const Call&, CallSite&) { return Stmt(); }));
  }
};

QTEST_APPLESS_MAIN(TestLoopIr)
#include "test_loopir.moc"
