// The code generators (llvm, c, and the interp plugin) against the loop-IR interpreter:
// hand-written loop programs (vectorized, parallel, unrolled, with allocations, conditions,
// intrinsics and integer floor division) must compute what the interpreter computes.
#include <QtTest>
#include <cmath>
#include <limits>
#include <random>

#include "core/loopir/interpreter.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/runtime/thread_pool.h"
#include "core/target/target.h"

using namespace tessel;
using namespace tessel::loopir;

namespace {

Tensor random_tensor(DataType t, Shape shape, uint64_t seed) {
  Tensor out(t, std::move(shape));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  for (int64_t i = 0; i < out.numel(); ++i)
    out.set_double(i, dtype_is_float(t) ? dist(rng) : std::floor(dist(rng) * 10));
  return out;
}

// Runs f with the interpreter and with the llvm target on the same random inputs (all params but
// the last are inputs) and compares the last parameter.
void check_one(const Func& f, const std::string& target, double tol) {
  std::vector<Tensor> a, b;
  for (size_t k = 0; k < f.params.size(); ++k) {
    Tensor t = random_tensor(f.params[k]->dtype, f.params[k]->shape, 100 + k);
    a.push_back(t.clone());
    b.push_back(t.clone());
  }
  interpret(f, a);
  auto module = build_module({f}, Target::parse(target));
  std::vector<Tensor*> args;
  for (auto& t : b) args.push_back(&t);
  module->call_host(f.name, args);
  const Tensor& want = a.back();
  const Tensor& got = b.back();
  for (int64_t i = 0; i < want.numel(); ++i) {
    double w = want.get_double(i), g = got.get_double(i);
    if (std::abs(w - g) > tol * (1 + std::abs(w)))
      QFAIL(qPrintable(QString("%1 on %2: element %3: interpreter %4, backend %5")
                           .arg(QString::fromStdString(f.name), QString::fromStdString(target))
                           .arg(i)
                           .arg(w)
                           .arg(g)));
  }
}

// Every backend, or only `target` when one is named.
void check_against_interpreter(const Func& f, const std::string& target = "", double tol = 1e-5) {
  if (!target.empty()) return check_one(f, target, tol);
  for (const char* t : {"llvm", "c", "interp"}) check_one(f, t, tol);
}

// C[i, j] = sum_k A[i, k] * B[k, j], i parallel, j split 16-wide and vectorized.
Func matmul(int64_t n, ForKind outer, ForKind inner) {
  auto A = make_buffer("A", DataType::kFloat32, {n, n});
  auto B = make_buffer("B", DataType::kFloat32, {n, n});
  auto C = make_buffer("C", DataType::kFloat32, {n, n});
  auto i = make_var("i"), jo = make_var("jo"), ji = make_var("ji"), k = make_var("k");
  Expr j = Expr(jo) * 16 + Expr(ji);
  Stmt init = make_for(ji, make_int(0), make_int(16), make_store(C, {i, j}, make_float(0)), inner);
  Stmt update = make_for(
      k, make_int(0), make_int(n),
      make_for(ji, make_int(0), make_int(16),
               make_store(C, {i, j}, make_load(C, {i, j}) + make_load(A, {i, k}) * make_load(B, {k, j})), inner));
  Stmt body = make_for(i, make_int(0), make_int(n),
                       make_for(jo, make_int(0), make_int(n / 16), make_seq({init, update})), outer);
  return Func{"matmul", {A, B, C}, body};
}

// Out[i] = NAME(X[i]) compiled for llvm, 16 lanes at a time (`vector`) or one by one, on `inputs`.
std::vector<float> llvm_unary(const char* name, const std::vector<float>& inputs, bool vector, const char* target) {
  const int64_t n = static_cast<int64_t>(inputs.size());
  auto X = make_buffer("X", DataType::kFloat32, {n});
  auto Out = make_buffer("Out", DataType::kFloat32, {n});
  auto i = make_var("i"), lane = make_var("lane");
  Stmt body;
  if (vector) {
    Expr at = Expr(i) * 16 + Expr(lane);
    Stmt s = make_store(Out, {at}, make_call(name, {make_load(X, {at})}, DataType::kFloat32));
    body =
        make_for(i, make_int(0), make_int(n / 16), make_for(lane, make_int(0), make_int(16), s, ForKind::kVectorized));
  } else {
    body = make_for(i, make_int(0), make_int(n),
                    make_store(Out, {i}, make_call(name, {make_load(X, {i})}, DataType::kFloat32)));
  }
  auto module = build_module({Func{std::string(name) + "_sweep", {X, Out}, body}}, Target::parse(target));
  Tensor x(DataType::kFloat32, {n}), out(DataType::kFloat32, {n});
  std::copy(inputs.begin(), inputs.end(), x.data<float>());
  std::vector<Tensor*> args{&x, &out};
  module->call_host(std::string(name) + "_sweep", args);
  return {out.data<float>(), out.data<float>() + n};
}

// A dense sweep of [lo, hi] and values where the approximations change branch or saturate, padded
// to a multiple of 16.
std::vector<float> sweep(float lo, float hi) {
  std::vector<float> v;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (float s :
       {0.0f,       -0.0f,       nan,     inf,    -inf,   1e-30f,  -1e-30f, 1e-8f,     -1e-8f,   0.625f, -0.625f,
        0.6249999f, -87.336544f, -87.34f, -87.3f, -88.0f, -103.0f, -150.0f, 88.72283f, 88.7229f, 88.8f,  89.0f})
    v.push_back(s);
  const int steps = 200000;
  for (int k = 0; k <= steps; ++k) v.push_back(lo + (hi - lo) * static_cast<float>(k) / steps);
  while (v.size() % 16) v.push_back(0.5f);
  return v;
}

// Largest error of `got` against `want` (computed in double), relative where the true value is a
// normal float and absolute below that; NaN must match NaN and infinities must match exactly.
double worst_error(const std::vector<float>& in, const std::vector<float>& got, double (*want)(double),
                   std::string* where) {
  double worst = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    double w = want(in[k]), g = got[k];
    double err;
    if (std::isnan(w) || std::isnan(g))
      err = std::isnan(w) && std::isnan(g) ? 0 : 1e30;
    else if (std::isinf(w) || std::isinf(g))
      err = w == g || std::abs(w) > 3.4028234e38 ? 0 : 1e30;
    else
      err = std::abs(w) >= 1.17549435e-38 ? std::abs(g - w) / std::abs(w) : std::abs(g - w);
    if (err > worst) {
      worst = err;
      *where = "x = " + std::to_string(in[k]) + ": want " + std::to_string(w) + ", got " + std::to_string(g);
    }
  }
  return worst;
}

}  // namespace

class TestBackends : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"});
    for (const char* kind : {"llvm", "c", "interp"})
      QVERIFY2(CodeGenRegistry::global().has(kind), qPrintable(QString("the plugin for '%1' did not load").arg(kind)));
  }

  void vectorized_parallel_matmul_matches() {
    ThreadPool::set_global_threads(2);
    check_against_interpreter(matmul(64, ForKind::kParallel, ForKind::kVectorized));
    check_against_interpreter(matmul(32, ForKind::kSerial, ForKind::kUnrolled));
    ThreadPool::set_global_threads(1);
  }

  void vector_code_uses_vector_registers() {
    auto module =
        build_module({matmul(64, ForKind::kSerial, ForKind::kVectorized)}, Target::parse("llvm -opt_level=3"));
    auto art = module->artifacts();
    QVERIFY(art.count("llvm_ir") && art.count("asm"));
    QVERIFY2(QString::fromStdString(art["llvm_ir"]).contains("<16 x float>"), "no 16-wide vectors in the IR");
    if (host_vector_bits() == 512) QVERIFY2(QString::fromStdString(art["asm"]).contains("zmm"), "no AVX-512 registers");
    QVERIFY2(QString::fromStdString(art["asm"]).contains("vfmadd"), "no fused multiply-add");
  }

  void gathers_broadcasts_and_intrinsics() {
    // Out[i] = tanh(X[i * 3 % 16]) + exp(Y[0]) + erf(X[i]) + sigmoid(X[i]) over a 16-wide vector loop.
    auto X = make_buffer("X", DataType::kFloat32, {16});
    auto Y = make_buffer("Y", DataType::kFloat32, {1});
    auto Out = make_buffer("Out", DataType::kFloat32, {16});
    auto i = make_var("i");
    Expr v = make_call("tanh", {make_load(X, {(Expr(i) * 3) % 16})}, DataType::kFloat32) +
             make_call("exp", {make_load(Y, {make_int(0)})}, DataType::kFloat32) +
             make_call("erf", {make_load(X, {i})}, DataType::kFloat32) +
             make_call("sigmoid", {make_load(X, {i})}, DataType::kFloat32);
    check_against_interpreter(Func{
        "mix", {X, Y, Out}, make_for(i, make_int(0), make_int(16), make_store(Out, {i}, v), ForKind::kVectorized)});
  }

  // exp, sigmoid and tanh on f32 are inline polynomials in the llvm code (vector_math.h), the same
  // code for scalars and vectors: within about 2 ulp of the C library over their whole range.
  void vector_math_matches_the_c_library() {
    struct Case {
      const char* name;
      double (*want)(double);
      float lo, hi;
      double tolerance;
    };
    auto sigmoid = [](double x) { return 1 / (1 + std::exp(-x)); };
    for (const Case& c :
         {Case{"exp", [](double x) { return std::exp(x); }, -90, 90, 2.5e-7}, Case{"sigmoid", +sigmoid, -90, 90, 4e-7},
          Case{"tanh", [](double x) { return std::tanh(x); }, -10, 10, 4e-7},
          Case{"tanh", [](double x) { return std::tanh(x); }, -0.7f, 0.7f, 4e-7},
          Case{"erf", [](double x) { return std::erf(x); }, -6, 6, 3e-7},
          Case{"erf", [](double x) { return std::erf(x); }, -1.5f, 1.5f, 3e-7}}) {
      std::vector<float> in = sweep(c.lo, c.hi);
      // The host's features (AVX-512 here: a 16-lane exp scales by vscalefps) and without AVX-512
      // (exponent arithmetic and range selects).
      for (const char* target : {"llvm", "llvm -mattr=-avx512f"})
        for (bool vector : {true, false}) {
          std::string where;
          double err = worst_error(in, llvm_unary(c.name, in, vector, target), c.want, &where);
          QVERIFY2(err <= c.tolerance, qPrintable(QString("%1 (%2, %3): error %4 at %5")
                                                      .arg(c.name, vector ? "vector" : "scalar", target)
                                                      .arg(err)
                                                      .arg(QString::fromStdString(where))));
          qInfo("%s (%s, %s): worst error %.3g", c.name, vector ? "vector" : "scalar", target, err);
        }
    }
  }

  // A 16-lane exp scales by 2^n with vscalefps where the target has AVX-512 (vector_math.h), and
  // keeps the exponent arithmetic without it. Assembly only: it builds for either CPU on any host.
  void exp_scales_with_vscalefps_on_avx512() {
    auto X = make_buffer("X", DataType::kFloat32, {32});
    auto Out = make_buffer("Out", DataType::kFloat32, {32});
    auto i = make_var("i"), lane = make_var("lane");
    Expr at = Expr(i) * 16 + Expr(lane);
    Stmt body = make_for(i, make_int(0), make_int(2),
                         make_for(lane, make_int(0), make_int(16),
                                  make_store(Out, {at}, make_call("exp", {make_load(X, {at})}, DataType::kFloat32)),
                                  ForKind::kVectorized));
    auto asm_for = [&](const char* target) {
      return build_module({Func{"exp16", {X, Out}, body}}, Target::parse(target))->artifacts().at("asm");
    };
    std::string avx512 = asm_for("llvm -mcpu=skylake-avx512 -mattr=+avx512f");
    QVERIFY2(avx512.find("vscalefps") != std::string::npos, avx512.c_str());
    std::string avx2 = asm_for("llvm -mcpu=haswell -mattr=-avx512f");
    QVERIFY2(avx2.find("vscalefps") == std::string::npos, avx2.c_str());
  }

  // prefetch(address_of(X[i + 16])) (the schedule step prefetch, core/lower/inject_prefetch.h): a
  // hint that changes no value: prefetcht1 in the llvm code, __builtin_prefetch in the C code.
  void prefetch_hints_change_no_value() {
    auto X = make_buffer("X", DataType::kFloat32, {64});
    auto Out = make_buffer("Out", DataType::kFloat32, {64});
    auto i = make_var("i");
    Expr ahead = make_binary(BinaryOp::kMin, Expr(i) + 16, make_int(63));
    Stmt hint = make_evaluate(make_call(
        "prefetch", {make_call("address_of", {make_load(X, {ahead})}, DataType::kFloat32)}, DataType::kInt32));
    Stmt body = make_for(i, make_int(0), make_int(64),
                         make_seq({hint, make_store(Out, {i}, make_load(X, {i}) * make_float(2))}));
    Func f{"hinted", {X, Out}, body};
    check_against_interpreter(f);
    std::string asm_text = build_module({f}, Target::parse("llvm"))->artifacts().at("asm");
    QVERIFY2(asm_text.find("prefetcht1") != std::string::npos, asm_text.c_str());
    std::string c_text = build_module({f}, Target::parse("c"))->artifacts().at("c");
    QVERIFY2(c_text.find("__builtin_prefetch(&b_X[") != std::string::npos, c_text.c_str());
  }

  void integer_floor_division_and_modulo() {
    // Out[i] = (i - 7) / 3 * 100 + (i - 7) % 3 — negative operands exercise floor semantics.
    auto In = make_buffer("In", DataType::kInt64, {1});
    auto Out = make_buffer("Out", DataType::kInt64, {14});
    auto i = make_var("i");
    Expr x = Expr(i) - 7;
    Stmt s = make_store(Out, {i}, (x / 3) * 100 + x % 3 + make_load(In, {make_int(0)}));
    check_against_interpreter(Func{"floordiv", {In, Out}, make_for(i, make_int(0), make_int(14), s)});
    check_against_interpreter(
        Func{"floordiv_vec", {In, Out}, make_for(i, make_int(0), make_int(14), s, ForKind::kVectorized)});
  }

  void allocation_condition_and_let() {
    // tmp[j] = A[j] * 2 for a local buffer, then Out[j] = j < 5 ? tmp[j] : -tmp[j] via if/else.
    auto A = make_buffer("A", DataType::kFloat32, {8});
    auto Out = make_buffer("Out", DataType::kFloat32, {8});
    auto tmp = make_buffer("tmp", DataType::kFloat32, {8}, "local");
    auto j = make_var("j"), t = make_var("t", DataType::kFloat32);
    Stmt fill = make_for(j, make_int(0), make_int(8), make_store(tmp, {j}, make_load(A, {j}) * make_float(2)));
    Stmt use = make_for(j, make_int(0), make_int(8),
                        make_let(t, make_load(tmp, {j}),
                                 make_if(lt(j, make_int(5)), make_store(Out, {j}, t), make_store(Out, {j}, -Expr(t)))));
    check_against_interpreter(Func{"alloc", {A, Out}, make_allocate(tmp, make_seq({fill, use}))});
  }

  void a_reduction_over_the_vector_axis_stays_correct() {
    // acc[0] += X[k] with k "vectorized": every lane writes one place, so it must not be widened.
    auto X = make_buffer("X", DataType::kFloat32, {16});
    auto Acc = make_buffer("Acc", DataType::kFloat32, {1});
    auto k = make_var("k");
    Stmt s = make_for(k, make_int(0), make_int(16),
                      make_store(Acc, {make_int(0)}, make_load(Acc, {make_int(0)}) + make_load(X, {k})),
                      ForKind::kVectorized);
    check_against_interpreter(Func{"sum", {X, Acc}, s}, "", 1e-4);
  }

  void thread_bindings_are_refused_with_a_clear_message() {
    auto Out = make_buffer("Out", DataType::kFloat32, {4});
    auto t = make_var("tx");
    Func f{"bound",
           {Out},
           make_for(t, make_int(0), make_int(4), make_store(Out, {t}, make_float(1)), ForKind::kThreadBound,
                    "threadIdx.x")};
    try {
      build_module({f}, Target::parse("llvm"));
      QFAIL("expected an error");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("kernel 'bound'") && QString(e.what()).contains("threadIdx.x"), e.what());
    }
    QVERIFY_THROWS_EXCEPTION(Error, build_module({f}, Target::parse("c")));
  }

  void c_backend_reports_compiler_failures() {
    auto Out = make_buffer("Out", DataType::kFloat32, {4});
    auto i = make_var("i");
    Func f{"k", {Out}, make_for(i, make_int(0), make_int(4), make_store(Out, {i}, make_float(1)))};
    try {
      build_module({f}, Target::parse("c -cflags=-fno-such-flag-exists"));
      QFAIL("expected an error");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).startsWith("c backend: `cc` failed"), e.what());
    }
    auto module = build_module({f}, Target::parse("c"));
    QVERIFY(QString::fromStdString(module->artifacts()["c"]).contains("void k(void** args)"));
  }

  void target_options_are_checked() {
    QVERIFY_THROWS_EXCEPTION(Error, Target::parse("llvm -opt_level=7"));
    QVERIFY_THROWS_EXCEPTION(Error, Target::parse("llvm -nonsense=1"));
    Target t = Target::parse(R"({"kind": "llvm", "mcpu": "znver4", "num_threads": 2})");
    QCOMPARE(t.get_int("num_threads"), int64_t{2});
    // A CPU name alone selects the scheduling model; features still come from the host.
    check_against_interpreter(matmul(32, ForKind::kSerial, ForKind::kVectorized), "llvm -mcpu=znver3");
    try {
      build_module({matmul(32, ForKind::kSerial, ForKind::kSerial)}, Target::parse("llvm -mcpu=pentium9000"));
      QFAIL("expected an error");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("unknown mcpu 'pentium9000'"), e.what());
    }
  }
};

QTEST_APPLESS_MAIN(TestBackends)
#include "test_backends.moc"
