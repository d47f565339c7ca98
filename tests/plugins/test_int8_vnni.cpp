// The VNNI dot step (dot_16x4_u8i8_i32, core/te/tensor_intrinsic.h): an int8 matmul over weights
// packed as [N/16][K/4][16][4], tensorized onto the step, must give bit-identical int32 results
// on llvm (vpdpbusd where the host has it), c and interp; so must the whole product in the VNNI
// form (core/te/int8_dot_product.h: any 8-bit types, zero points, ragged K and N) under
// int8_vnni_schedule and under the default CPU schedule. The llvm backend must emit vpdpbusd for
// a target with avx512-vnni or avx-vnni, and the scalar call for one without: these compile for
// explicit features, which LLVM does on any x86-64 host without running the code.
#include <QtTest>
#include <random>

#include "core/loopir/printer.h"
#include "core/lower/pipeline.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/schedule/default_schedule.h"
#include "core/schedule/int8_vnni_schedule.h"
#include "core/schedule/schedule.h"
#include "core/target/target.h"
#include "core/te/int8_dot_product.h"
#include "core/te/tensor.h"

using namespace tessel;

namespace {

// C[i, jo, ji] = Σ_{ko, ki} i32(A[i, 4·ko + ki]) · i32(B[jo, ko, ji, ki]), K and N multiples of 4 and 16.
loopir::Func packed_matmul(int64_t m, int64_t n, int64_t k) {
  te::Tensor a = te::placeholder("A", {m, k}, DataType::kUInt8);
  te::Tensor b = te::placeholder("B", {n / 16, k / 4, 16, 4}, DataType::kInt8);
  loopir::IterVar ko = te::reduce_axis(k / 4, "ko"), ki = te::reduce_axis(4, "ki");
  te::Tensor c = te::compute(
      "C", {m, n / 16, 16},
      [&](const std::vector<loopir::Expr>& i) {
        loopir::Expr x = te::at(a, {i[0], ko.var * 4 + ki.var}), w = te::at(b, {i[1], ko.var, i[2], ki.var});
        return te::sum(te::cast(DataType::kInt32, x) * te::cast(DataType::kInt32, w), {ko, ki});
      },
      {"i", "jo", "ji"});
  te::ComputeDag dag = te::make_dag("packed_matmul", {c});
  return lower::lower(dag, schedule::parse_schedule("reorder(C.i, C.jo, C.ko, C.ji, C.ki)\n"
                                                    "tensorize(C.ji, dot_16x4_u8i8_i32)"))
      .func;
}

// Random bytes with the extremes (0, 255, -128, 127) well represented: sums of 255 · -128 must
// wrap nowhere and saturate nowhere.
template <class T>
Tensor random_bytes(DataType t, Shape shape, uint64_t seed) {
  Tensor out(t, std::move(shape));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  std::uniform_int_distribution<int> pick(0, 3);
  for (int64_t i = 0; i < out.numel(); ++i) {
    int p = pick(rng);
    out.data<T>()[i] = static_cast<T>(p == 0   ? std::numeric_limits<T>::min()
                                      : p == 1 ? std::numeric_limits<T>::max()
                                               : dist(rng));
  }
  return out;
}

Tensor random_operand(DataType t, Shape shape, uint64_t seed) {
  return t == DataType::kUInt8 ? random_bytes<uint8_t>(t, std::move(shape), seed)
                               : random_bytes<int8_t>(t, std::move(shape), seed);
}
int64_t byte_at(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kUInt8 ? int64_t{t.data<uint8_t>()[i]} : int64_t{t.data<int8_t>()[i]};
}

std::string assembly_for(const std::string& target) {
  loopir::Func f = packed_matmul(4, 32, 8);
  auto module = build_module({f}, Target::parse(target));
  return module->artifacts().at("asm");
}

}  // namespace

class TestInt8Vnni : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"});
    for (const char* kind : {"llvm", "c", "interp"})
      QVERIFY2(CodeGenRegistry::global().has(kind), qPrintable(QString("the plugin for '%1' did not load").arg(kind)));
  }

  void dot_tensorized_matmul_is_exact_data() {
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("k");
    QTest::addColumn<QString>("target");
    const int shapes[][3] = {{1, 16, 4}, {7, 48, 20}, {33, 32, 256}};
    for (auto& s : shapes)
      for (const char* t : {"llvm", "llvm -mattr=-avx512vnni", "llvm -mattr=-avx512vnni,-avxvnni", "c", "interp"})
        QTest::newRow(qPrintable(QString("%1x%2x%3 on %4").arg(s[0]).arg(s[1]).arg(s[2]).arg(t)))
            << s[0] << s[1] << s[2] << QString(t);
  }
  void dot_tensorized_matmul_is_exact() {
    QFETCH(int, m);
    QFETCH(int, n);
    QFETCH(int, k);
    QFETCH(QString, target);
    loopir::Func f = packed_matmul(m, n, k);
    QVERIFY2(loopir::to_string(f).find("tessel_intrin_dot_16x4_u8i8_i32(") != std::string::npos,
             loopir::to_string(f).c_str());
    Tensor a = random_bytes<uint8_t>(DataType::kUInt8, {m, k}, 1);
    Tensor b = random_bytes<int8_t>(DataType::kInt8, {n / 16, k / 4, 16, 4}, 2);
    Tensor got(DataType::kInt32, {m, n / 16, 16});
    for (int64_t i = 0; i < got.numel(); ++i) got.data<int32_t>()[i] = int32_t(0x5a5a5a5a);  // the reset must clear it
    auto module = build_module({f}, Target::parse(target.toStdString()));
    module->call_host(f.name, {&a, &b, &got});
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        int64_t want = 0;
        for (int r = 0; r < k; ++r)
          want += int64_t{a.data<uint8_t>()[i * k + r]} *
                  b.data<int8_t>()[((j / 16 * (k / 4) + r / 4) * 16 + j % 16) * 4 + r % 4];
        int32_t g = got.data<int32_t>()[i * n + j];
        if (g != want)
          QFAIL(qPrintable(QString("C[%1, %2]: reference %3, %4 gives %5").arg(i).arg(j).arg(want).arg(target).arg(g)));
      }
  }

  void int8_product_is_exact_data() {
    QTest::addColumn<QString>("types");
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("k");
    QTest::addColumn<bool>("zero_points");
    QTest::addColumn<QString>("target");
    QTest::addColumn<int>("vnni_schedule");  // 1: int8_vnni_schedule on the dot step, 2: its vector form, 0: default
    const int shapes[][3] = {{8, 16, 4}, {9, 21, 7}, {12, 40, 66}};
    for (const char* types : {"u8s8", "s8s8", "u8u8", "s8u8"})
      for (auto& s : shapes)
        for (bool zp : {false, true})
          for (auto [t, vnni] : {std::pair{"llvm", 1}, {"llvm", 0}, {"llvm", 2}, {"c", 1}, {"c", 2}, {"interp", 1}})
            QTest::newRow(qPrintable(QString("%1 %2x%3x%4%5 on %6 %7")
                                         .arg(types)
                                         .arg(s[0])
                                         .arg(s[1])
                                         .arg(s[2])
                                         .arg(zp ? " zero points" : "")
                                         .arg(t)
                                         .arg(vnni == 1   ? "dot steps"
                                              : vnni == 2 ? "vector steps"
                                                          : "default schedule")))
                << QString(types) << s[0] << s[1] << s[2] << zp << QString(t) << vnni;
  }
  void int8_product_is_exact() {
    QFETCH(QString, types);
    QFETCH(int, m);
    QFETCH(int, n);
    QFETCH(int, k);
    QFETCH(bool, zero_points);
    QFETCH(QString, target);
    QFETCH(int, vnni_schedule);
    const DataType ta = types.startsWith("u8") ? DataType::kUInt8 : DataType::kInt8;
    const DataType tb = types.endsWith("u8") ? DataType::kUInt8 : DataType::kInt8;
    te::Int8ProductOperands p{te::placeholder("A", {m, k}, ta), te::placeholder("B", {k, n}, tb), nullptr, nullptr};
    te::Tensor za = te::placeholder("za", {m}, ta), zb = te::placeholder("zb", {n}, tb);
    if (zero_points) {
      p.a_zero = [&](const loopir::Expr& row) { return te::cast(DataType::kInt32, te::at(za, {row})); };
      p.b_zero = [&](const loopir::Expr& column) { return te::cast(DataType::kInt32, te::at(zb, {column})); };
    }
    QVERIFY(te::why_not_int8_dot_product(p).empty());
    te::Tensor out = te::int8_dot_product(p, "C");
    te::ComputeDag dag = te::make_dag("int8_product", {out});
    schedule::Schedule sched = vnni_schedule ? *schedule::int8_vnni_schedule(dag, vnni_schedule == 1)
                                             : schedule::default_cpu_schedule(dag, 16);
    loopir::Func f = lower::lower(dag, sched).func;
    if (vnni_schedule == 1)
      QVERIFY2(loopir::to_string(f).find("tessel_intrin_dot_16x4_u8i8_i32(") != std::string::npos,
               loopir::to_string(f).c_str());

    Tensor a = random_operand(ta, {m, k}, 11), b = random_operand(tb, {k, n}, 12);
    Tensor zav = random_operand(ta, {m}, 13), zbv = random_operand(tb, {n}, 14);
    Tensor got(DataType::kInt32, {m, n});
    auto module = build_module({f}, Target::parse(target.toStdString()));
    std::vector<Tensor*> args = {&a, &b};
    if (zero_points) args = {&a, &b, &zav, &zbv};
    QCOMPARE(dag.inputs().size(), args.size());
    args.push_back(&got);
    module->call_host(f.name, args);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        int64_t want = 0;
        for (int r = 0; r < k; ++r)
          want += (byte_at(a, i * k + r) - (zero_points ? byte_at(zav, i) : 0)) *
                  (byte_at(b, r * n + j) - (zero_points ? byte_at(zbv, j) : 0));
        int32_t g = got.data<int32_t>()[i * n + j];
        if (g != want)
          QFAIL(qPrintable(QString("C[%1, %2]: reference %3, %4 gives %5").arg(i).arg(j).arg(want).arg(target).arg(g)));
      }
  }

  void few_rows_keep_the_plain_form() {
    te::Int8ProductOperands p{te::placeholder("A", {1, 64}, DataType::kUInt8),
                              te::placeholder("B", {64, 32}, DataType::kInt8), nullptr, nullptr};
    const std::string why = te::why_not_int8_dot_product(p);
    QVERIFY2(why.find("1 rows: packing the weights") != std::string::npos, why.c_str());
  }

  // qdq_resnet's 8 -> 16 channel conv: two dot steps per pixel do not pay for the input's layout.
  void few_input_channels_keep_the_plain_form() {
    te::Int8ConvOperands p;
    p.x = te::placeholder("X", {1, 8, 16, 16}, DataType::kUInt8);
    p.w = te::placeholder("W", {16, 8, 3, 3}, DataType::kInt8);
    const std::string why = te::why_not_int8_dot_conv(p);
    QVERIFY2(why.find("8 input channels") != std::string::npos, why.c_str());
    p.x = te::placeholder("X", {1, 16, 16, 16}, DataType::kUInt8);
    p.w = te::placeholder("W", {16, 16, 3, 3}, DataType::kInt8);
    QVERIFY2(te::why_not_int8_dot_conv(p).empty(), te::why_not_int8_dot_conv(p).c_str());
  }

  void int8_conv_is_exact_data() {
    QTest::addColumn<QString>("types");
    QTest::addColumn<QList<int>>("geometry");  // C, M, H, W, R, stride, pad, dilation
    QTest::addColumn<bool>("zero_points");
    QTest::addColumn<QString>("target");
    const QList<QList<int>> shapes = {
        {19, 20, 9, 9, 3, 2, 1, 1}, {16, 32, 8, 8, 3, 1, 1, 1}, {21, 16, 7, 10, 1, 1, 0, 1}, {18, 17, 9, 9, 3, 1, 2, 2}};
    for (const char* types : {"u8s8", "s8u8"})
      for (const QList<int>& g : shapes)
        for (bool zp : {false, true})
          for (const char* t : {"llvm", "llvm vector steps", "c", "interp"})
            QTest::newRow(qPrintable(QString("%1 C%2 M%3 %4x%5 k%6 s%7 p%8 d%9%10 on %11")
                                         .arg(types)
                                         .arg(g[0])
                                         .arg(g[1])
                                         .arg(g[2])
                                         .arg(g[3])
                                         .arg(g[4])
                                         .arg(g[5])
                                         .arg(g[6])
                                         .arg(g[7])
                                         .arg(zp ? " zero points" : "")
                                         .arg(t)))
                << QString(types) << g << zp << QString(t);
  }
  void int8_conv_is_exact() {
    QFETCH(QString, types);
    QFETCH(QList<int>, geometry);
    QFETCH(bool, zero_points);
    QFETCH(QString, target);
    const int64_t c = geometry[0], m = geometry[1], h = geometry[2], w = geometry[3], r = geometry[4];
    const int64_t stride = geometry[5], pad = geometry[6], dilation = geometry[7];
    const int64_t oh = (h + 2 * pad - (r - 1) * dilation - 1) / stride + 1,
                  ow = (w + 2 * pad - (r - 1) * dilation - 1) / stride + 1;
    const DataType tx = types.startsWith("u8") ? DataType::kUInt8 : DataType::kInt8;
    const DataType tw = types.endsWith("u8") ? DataType::kUInt8 : DataType::kInt8;
    te::Int8ConvOperands p{.x = te::placeholder("X", {2, c, h, w}, tx),
                           .w = te::placeholder("W", {m, c, r, r}, tw),
                           .x_zero = nullptr,
                           .w_zero = nullptr};
    te::Tensor zx = te::placeholder("zx", {}, tx), zw = te::placeholder("zw", {m}, tw);
    if (zero_points) {
      p.x_zero = [&] { return te::cast(DataType::kInt32, te::at(zx, {})); };
      p.w_zero = [&](const loopir::Expr& channel) { return te::cast(DataType::kInt32, te::at(zw, {channel})); };
    }
    for (int d = 0; d < 2; ++d) {
      p.stride[d] = stride;
      p.dilation[d] = dilation;
      p.pad_begin[d] = pad;
    }
    p.out_h = oh;
    p.out_w = ow;
    QVERIFY(te::why_not_int8_dot_conv(p).empty());
    te::ComputeDag dag = te::make_dag("int8_conv", {te::int8_dot_conv(p, "Y")});
    const bool dot_steps = !target.endsWith("vector steps");
    loopir::Func f = lower::lower(dag, *schedule::int8_vnni_schedule(dag, dot_steps)).func;
    QCOMPARE(loopir::to_string(f).find("tessel_intrin_dot_16x4_u8i8_i32(") != std::string::npos, dot_steps);

    Tensor x = random_operand(tx, {2, c, h, w}, 21), wt = random_operand(tw, {m, c, r, r}, 22);
    Tensor zxv = random_operand(tx, {}, 23), zwv = random_operand(tw, {m}, 24);
    Tensor got(DataType::kInt32, {2, m, oh, ow});
    auto module = build_module({f}, Target::parse(target.section(' ', 0, 0).toStdString()));
    std::vector<Tensor*> args = {&x, &wt};
    if (zero_points) args = {&x, &wt, &zxv, &zwv};
    QCOMPARE(dag.inputs().size(), args.size());
    args.push_back(&got);
    module->call_host(f.name, args);
    const int64_t x_zero = zero_points ? byte_at(zxv, 0) : 0;
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t o = 0; o < m; ++o)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t xx = 0; xx < ow; ++xx) {
            int64_t want = 0;
            for (int64_t ch = 0; ch < c; ++ch)
              for (int64_t ky = 0; ky < r; ++ky)
                for (int64_t kx = 0; kx < r; ++kx) {
                  const int64_t sy = y * stride + ky * dilation - pad, sx = xx * stride + kx * dilation - pad;
                  const bool inside = sy >= 0 && sy < h && sx >= 0 && sx < w;
                  const int64_t xv = inside ? byte_at(x, ((n * c + ch) * h + sy) * w + sx) - x_zero : 0;
                  want += xv * (byte_at(wt, ((o * c + ch) * r + ky) * r + kx) - (zero_points ? byte_at(zwv, o) : 0));
                }
            const int32_t g = got.data<int32_t>()[((n * m + o) * oh + y) * ow + xx];
            if (g != want)
              QFAIL(qPrintable(QString("Y[%1, %2, %3, %4]: reference %5, %6 gives %7")
                                   .arg(n)
                                   .arg(o)
                                   .arg(y)
                                   .arg(xx)
                                   .arg(want)
                                   .arg(target)
                                   .arg(g)));
          }
  }

  void avx512_vnni_target_emits_vpdpbusd() {
    std::string text = assembly_for("llvm -mcpu=icelake-server -mattr=+avx512f,+avx512vnni");
    QVERIFY2(text.find("vpdpbusd") != std::string::npos && text.find("zmm") != std::string::npos, text.c_str());
    QVERIFY2(text.find("vpdpbusds") == std::string::npos, "the saturating form would not be exact");
    QVERIFY2(text.find("tessel_intrin_dot") == std::string::npos, text.c_str());  // nor the reset
  }
  void avx_vnni_target_emits_the_256_bit_form() {
    std::string text = assembly_for("llvm -mcpu=alderlake -mattr=-avx512f,-avx512vnni,+avxvnni");
    QVERIFY2(text.find("vpdpbusd") != std::string::npos && text.find("ymm") != std::string::npos, text.c_str());
    QVERIFY2(text.find("zmm") == std::string::npos, text.c_str());
  }
  void target_without_vnni_calls_the_scalar_step() {
    std::string text = assembly_for("llvm -mcpu=skylake -mattr=-avx512vnni,-avxvnni");
    QVERIFY2(text.find("vpdpbusd") == std::string::npos, text.c_str());
    QVERIFY2(text.find("tessel_intrin_dot_16x4_u8i8_i32") != std::string::npos, text.c_str());
  }
};

QTEST_APPLESS_MAIN(TestInt8Vnni)
#include "test_int8_vnni.moc"
