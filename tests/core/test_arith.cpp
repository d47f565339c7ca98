// The arithmetic simplifier and bounds: what lowering relies on to keep index math readable.
#include <QtTest>

#include "core/arith/simplify.h"
#include "core/loopir/functor.h"
#include "core/loopir/interpreter.h"
#include "core/loopir/printer.h"

using namespace tessel;
using namespace tessel::loopir;
using tessel::arith::simplify;

namespace {
std::string simp(const Expr& e, const arith::RangeMap& r = {}) { return to_string(simplify(e, r)); }
}  // namespace

class TestArith : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void constant_folding() {
    QCOMPARE(simp(make_int(3) + make_int(4) * make_int(2)), std::string("11"));
    QCOMPARE(simp(lt(make_int(2), make_int(5))), std::string("true"));
    QCOMPARE(simp(make_float(1.5) * make_float(2)), std::string("3f"));
    QCOMPARE(simp(make_int(-7) / 2), std::string("-4"));
    QCOMPARE(simp(make_int(-7) % 2), std::string("1"));
    QCOMPARE(simp(min(make_int(3), make_int(-1))), std::string("-1"));
  }

  void identities() {
    VarRef x = make_var("x");
    QCOMPARE(simp(x * 1), std::string("x"));
    QCOMPARE(simp(x + 0), std::string("x"));
    QCOMPARE(simp(x * 0), std::string("0"));
    QCOMPARE(simp(x / 1), std::string("x"));
    QCOMPARE(simp(x % 1), std::string("0"));
    VarRef f = make_var("f", DataType::kFloat32);
    QCOMPARE(simp(f * make_float(1) + make_float(0)), std::string("f"));
    QCOMPARE(simp(make_select(lt(make_int(1), make_int(2)), x, x + 1)), std::string("x"));
  }

  void nested_constants_and_linear_forms() {
    VarRef x = make_var("x"), y = make_var("y");
    QCOMPARE(simp((x + 3) + 4), std::string("x + 7"));
    QCOMPARE(simp(x * 2 * 4), std::string("x * 8"));
    QCOMPARE(simp((x * 8 + y) - x * 8), std::string("y"));
    QCOMPARE(simp(x - x), std::string("0"));
    QCOMPARE(simp((x + 1) * 3 - 3), std::string("x * 3"));
    QCOMPARE(simp(make_int(10) - y), std::string("10 - y"));
    QCOMPARE(simp(lt(x + 3, make_int(10))), std::string("x < 7"));
    QCOMPARE(simp(lt(make_int(10), x)), std::string("x > 10"));
  }

  void split_and_fuse_index_algebra_uses_ranges() {
    VarRef o = make_var("o"), i = make_var("i");
    arith::RangeMap r{{i.get(), {0, 7}}, {o.get(), {0, 3}}};
    QCOMPARE(simp((o * 8 + i) / 8, r), std::string("o"));
    QCOMPARE(simp((o * 8 + i) % 8, r), std::string("i"));
    QCOMPARE(simp((o * 8 + i + 8) / 8, r), std::string("o + 1"));
    QCOMPARE(simp((o * 16 + i) / 8, r), std::string("o * 2"));
    QCOMPARE(simp(lt(o * 8 + i, make_int(32)), r), std::string("true"));
    QCOMPARE(simp(lt(o * 8 + i, make_int(30)), r), std::string("o * 8 + i < 30"));
    QCOMPARE(simp(min(i, make_int(8)), r), std::string("i"));
    QCOMPARE(simp(max(i, make_int(9)), r), std::string("9"));
    // A vector split of a blocked channel axis, read at c / 16 and c % 16 (Winograd's input
    // transform over NCHW16c): the lane stays outside the division.
    QCOMPARE(simp((o * 8 + i) / 16, r), std::string("o / 2"));
    QCOMPARE(simp((o * 8 + i + 32) / 16, r), std::string("o / 2 + 2"));
    for (const Expr& e : {(o * 8 + i) / 16, (o * 8 + i) % 16, (o * 24 + i + 3) / 16, (o * 8 + i + 1) % 16})
      for (int64_t vo = 0; vo <= 3; ++vo)
        for (int64_t vi = 0; vi <= 7; ++vi) {
          VarMap m{{o.get(), make_int(vo)}, {i.get(), make_int(vi)}};
          QVERIFY2(evaluate_constant(substitute(e, m)) == evaluate_constant(substitute(simplify(e, r), m)),
                   qPrintable(QString::fromStdString(to_string(e) + " -> " + to_string(simplify(e, r)))));
        }
    QVERIFY(simp((o * 8 + i) % 16, r).find('/') == std::string::npos);
    // Without ranges nothing is assumed.
    QCOMPARE(simp((o * 8 + i) / 8), std::string("(o * 8 + i) / 8"));
    QCOMPARE(simp((x_div_chain()) / 4), std::string("x / 8"));
  }

  void simplification_preserves_values() {
    // Evaluate random closed expressions before and after: the simplifier must not change them.
    VarRef a = make_var("a"), b = make_var("b");
    std::vector<Expr> shapes = {
        (a * 8 + b) / 8,         (a * 8 + b) % 8, (a + 3) * 5 - a * 5, min(a + 1, b) - max(a, b - 1),
        (a * 6 + b * 4 + 3) % 2, (a - b) / 3,     (a * 4 + b) / 2 % 2};
    for (auto& e : shapes) {
      for (int64_t va = -5; va <= 5; ++va) {
        for (int64_t vb = 0; vb < 8; ++vb) {
          arith::RangeMap r{{b.get(), {0, 7}}};
          VarMap m{{a.get(), make_int(va)}, {b.get(), make_int(vb)}};
          double before = evaluate_constant(substitute(e, m));
          double after = evaluate_constant(substitute(simplify(e, r), m));
          QVERIFY2(before == after,
                   qPrintable(QString::fromStdString(to_string(e) + " -> " + to_string(simplify(e, r)))));
        }
      }
    }
  }

  void unchanged_expression_is_the_same_node() {
    VarRef x = make_var("x"), y = make_var("y");
    Expr e = x * 8 + y;
    QVERIFY(simplify(e) == e);
    Stmt s = make_evaluate(e);
    QVERIFY(simplify(s) == s);
  }

  void statements_lose_decided_branches_and_trivial_loops() {
    Buffer a = make_buffer("A", DataType::kFloat32, {8});
    VarRef i = make_var("i"), j = make_var("j");
    Stmt loop = make_for(i, make_int(0), make_int(8), make_if(lt(i, make_int(8)), make_store(a, {i}, make_float(0))));
    QCOMPARE(to_string(arith::simplify(loop)), std::string("for i in 0..8 {\n  A[i] = 0f\n}\n"));
    Stmt one = make_for(j, make_int(3), make_int(1), make_store(a, {j + 1}, make_float(0)));
    QCOMPARE(to_string(arith::simplify(one)), std::string("A[4] = 0f\n"));
    Stmt none = make_for(j, make_int(0), make_int(0), make_store(a, {j}, make_float(0)));
    QCOMPARE(to_string(arith::simplify(none)), std::string(""));
  }

  void bounds() {
    VarRef o = make_var("o"), i = make_var("i");
    arith::RangeMap inner{{i.get(), {0, 7}}};
    auto b = arith::symbolic_bounds(o * 8 + i, inner);
    QVERIFY(b);
    QCOMPARE(to_string(b->lo), std::string("o * 8"));
    QCOMPARE(to_string(b->hi), std::string("o * 8 + 7"));
    auto c = arith::constant_bounds((i * 3 + 2) % 4, inner);
    QVERIFY(c);
    QCOMPARE(c->lo, int64_t(0));
    QCOMPARE(c->hi, int64_t(3));
    QVERIFY(!arith::constant_bounds(o + i, inner));
    QVERIFY(arith::can_prove(lt(i, make_int(8)), inner));
    QVERIFY(!arith::can_prove(lt(i, make_int(7)), inner));
  }

 private:
  static Expr x_div_chain() {
    static VarRef x = make_var("x");
    return x / 2;
  }
};

QTEST_APPLESS_MAIN(TestArith)
#include "test_arith.moc"
