#pragma once
// What the tests of every device plugin check on device 0 of their device type (test_opencl on
// PoCL in CI, test_cuda on a GPU): a DeviceAPI's copies in every direction (offsets, overlapping
// regions of one buffer), NDArray round trips, workspaces, a copy issued on one stream and
// consumed on another, a kernel launched on the stream set_stream chose; and a lowered function
// run through call_host against the loop-IR interpreter.
//
//   void copies_in_every_direction() { testing::check_copies_in_every_direction(*api_, kDevice); }
//
// The checks use QtTest's macros: a failure ends the check and fails the test function calling it.
#include <QtTest>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/loopir/interpreter.h"
#include "core/lower/pipeline.h"
#include "core/runtime/codegen.h"
#include "core/runtime/device_api.h"
#include "core/runtime/ndarray.h"
#include "core/schedule/default_schedule.h"
#include "core/target/target.h"
#include "core/te/op_spec.h"
#include "core/te/tensor.h"

namespace tessel::testing {

inline std::vector<float> iota_floats(size_t n, float start) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

// Values in [-2, 2) (integers for integer types), the same for the same seed.
inline Tensor random_tensor(DataType t, const Shape& shape, uint64_t seed) {
  Tensor out(t, shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  for (int64_t i = 0; i < out.numel(); ++i)
    out.set_double(i, dtype_is_float(t) ? dist(rng) : std::floor(dist(rng) * 3));
  return out;
}

// The lowered function of `spec` under `s`, named `name`.
inline loopir::Func lowered(const std::string& spec, const schedule::Schedule& s, const std::string& name) {
  loopir::Func f = lower::lower(te::dag_from_spec(spec), s).func;
  f.name = name;
  return f;
}

// Runs f with the interpreter and with `target` through call_host; compares every output element.
inline void check_against_interpreter(const loopir::Func& f, const std::string& target, double tol = 1e-5) {
  std::vector<Tensor> want, got;
  for (size_t k = 0; k < f.params.size(); ++k) {
    Tensor t = random_tensor(f.params[k]->dtype, f.params[k]->shape, 7 + k);
    want.push_back(t.clone());
    got.push_back(t.clone());
  }
  loopir::interpret(f, want);
  auto module = build_module({f}, Target::parse(target));
  std::vector<Tensor*> args;
  for (auto& t : got) args.push_back(&t);
  module->call_host(f.name, args);
  for (int64_t i = 0; i < want.back().numel(); ++i) {
    const double w = want.back().get_double(i), g = got.back().get_double(i);
    if (!(std::abs(w - g) <= tol * (1 + std::abs(w))))
      QFAIL(qPrintable(QString("%1 on %2: element %3: interpreter %4, backend %5")
                           .arg(QString::fromStdString(f.name), QString::fromStdString(target))
                           .arg(i)
                           .arg(w)
                           .arg(g)));
  }
}

// An id that does not exist and an allocation no device has are errors naming the device
// ("opencl:99 does not exist") and the failed call (`alloc_failure`, e.g. "cuMemAlloc failed: ").
inline void check_bad_ids_and_sizes_are_errors(DeviceAPI& api, const std::string& kind,
                                               const std::string& alloc_failure) {
  try {
    api.set_device(99);
    QFAIL("set_device(99) did not throw");
  } catch (const Error& e) {
    QVERIFY2(std::string(e.what()).find(kind + ":99 does not exist") != std::string::npos, e.what());
  }
  try {
    api.alloc_data_space(0, size_t{1} << 62, 64);
    QFAIL("a 4 EiB allocation did not throw");
  } catch (const Error& e) {
    QVERIFY2(std::string(e.what()).find(alloc_failure) != std::string::npos, e.what());
  }
}

// Y[i] = the sum, max or mean of X[i, 0..k), over the last axis of X[rows, k]: a reduction that is
// its kernel's output (sum, max), or feeds it (the mean: a sum, then a division by k).
inline te::ComputeDag last_axis_reduction(const std::string& op, int64_t rows, int64_t k) {
  const te::Tensor x = te::placeholder("X", {rows, k});
  const loopir::IterVar r = te::reduce_axis(k, "k");
  auto reduce = [&](const std::string& name) {
    return te::compute(name, {rows},
                       [&](const std::vector<loopir::Expr>& i) {
                         const loopir::Expr v = te::at(x, {i[0], r.var});
                         return op == "max" ? te::max_reduce(v, {r}) : te::sum(v, {r});
                       },
                       {"i"});
  };
  if (op != "mean") return te::make_dag(op, {reduce("Y")});
  const te::Tensor s = reduce("S");
  const te::Tensor y = te::compute(
      "Y", {rows},
      [&](const std::vector<loopir::Expr>& i) { return te::at(s, {i[0]}) / te::float_const(static_cast<double>(k)); },
      {"i"});
  return te::make_dag(op, {y});
}

// The rows (column `spec`) of a test that runs each op family's default GPU schedule.
inline void add_gpu_schedule_rows() {
  QTest::addColumn<QString>("spec");
  QTest::newRow("matmul") << "matmul M=64 N=48 K=40";
  QTest::newRow("matmul_tail") << "matmul M=30 N=20 K=9";
  QTest::newRow("add") << "add shape=40x25";
  QTest::newRow("conv") << "conv2d N=1 C=3 H=10 W=10 K=4 R=3 S=3 stride=1 pad=1";
  QTest::newRow("softmax") << "softmax M=6 N=70";
  QTest::newRow("layernorm") << "layernorm M=5 N=33";
}

inline void check_copies_in_every_direction(DeviceAPI& api, Device dev) {
  const size_t n = 1000;
  std::vector<float> host = iota_floats(n, 1);
  DataSpace a = api.alloc_data_space(dev.id, n * 4, 64), b = api.alloc_data_space(dev.id, n * 4, 64);
  api.copy_host_to_device(host.data(), a, 0, n * 4, dev, nullptr);
  host.assign(n, 0);  // the copy has read it already
  api.copy_device_to_device(a, 0, b, 0, n * 4, dev, nullptr);
  // Offsets on both sides: b[10..20) = a[500..510).
  api.copy_device_to_device(a, 500 * 4, b, 10 * 4, 10 * 4, dev, nullptr);
  // Overlapping regions of one buffer (OpenCL refuses them, CUDA leaves them undefined).
  api.copy_device_to_device(b, 100 * 4, b, 101 * 4, 50 * 4, dev, nullptr);
  std::vector<float> back(n, -1);
  api.copy_device_to_host(b, 0, back.data(), n * 4, dev, nullptr);
  api.stream_sync(dev.id, nullptr);
  for (size_t i = 0; i < n; ++i) {
    float want = static_cast<float>(i + 1);
    if (i >= 10 && i < 20) want = static_cast<float>(500 + i - 10 + 1);
    if (i >= 101 && i < 151) want = static_cast<float>(i - 1 + 1);
    QCOMPARE(back[i], want);
  }
  float one = 0;
  api.copy_device_to_host(a, 999 * 4, &one, 4, dev, nullptr);
  api.stream_sync(dev.id, nullptr);
  QCOMPARE(one, 1000.0f);
  api.free_data_space(dev.id, a);
  api.free_data_space(dev.id, b);
}

inline void check_ndarray_round_trip(Device dev) {
  Tensor t = random_tensor(DataType::kFloat32, {3, 5}, 1);
  NDArray d = NDArray::from_host(t, dev);
  NDArray e = NDArray::empty(DataType::kFloat32, {3, 5}, dev);
  e.copy_from(d);
  Tensor back = e.to_host();
  for (int64_t i = 0; i < t.numel(); ++i) QCOMPARE(back.get_double(i), t.get_double(i));
}

inline void check_workspaces_hold_data(DeviceAPI& api, Device dev) {
  DataSpace w = api.alloc_workspace(dev.id, 4096);
  std::vector<float> host = iota_floats(1024, 0), back(1024);
  api.copy_host_to_device(host.data(), w, 0, 4096, dev, nullptr);
  api.copy_device_to_host(w, 0, back.data(), 4096, dev, nullptr);
  api.stream_sync(dev.id, nullptr);
  QCOMPARE(back, host);
  api.free_workspace(dev.id, w);
}

// `second` waits for `first` through sync_stream_from_to, then reads what the copy on `first`
// wrote. `floats`: long enough that an unordered read would see the zeros.
inline void check_copy_on_one_stream_consumed_on_another(DeviceAPI& api, Device dev, size_t floats) {
  const size_t n = floats;
  Stream first = api.create_stream(dev.id), second = api.create_stream(dev.id);
  QVERIFY(first && second && first != second);
  std::vector<float> host = iota_floats(n, 0), zeros(n, 0), back(n, -1);
  DataSpace src = api.alloc_data_space(dev.id, n * 4, 64), dst = api.alloc_data_space(dev.id, n * 4, 64);
  api.copy_host_to_device(host.data(), src, 0, n * 4, dev, first);
  api.copy_host_to_device(zeros.data(), dst, 0, n * 4, dev, second);
  api.copy_device_to_device(src, 0, dst, 0, n * 4, dev, first);
  api.sync_stream_from_to(dev.id, first, second);
  api.copy_device_to_host(dst, 0, back.data(), n * 4, dev, second);
  api.stream_sync(dev.id, second);
  QCOMPARE(back[0], 0.0f);
  QCOMPARE(back[n - 1], static_cast<float>(n - 1));
  QVERIFY(back == host);
  api.stream_sync(dev.id, first);
  api.free_data_space(dev.id, src);
  api.free_data_space(dev.id, dst);
  api.free_stream(dev.id, first);
  api.free_stream(dev.id, second);
}

// A kernel launched on a stream set_stream chose; the default stream sees its result after
// sync_stream_from_to.
inline void check_kernels_run_on_the_chosen_stream(DeviceAPI& api, Device dev, const std::string& target) {
  const std::string spec = "matmul M=16 N=16 K=16";
  loopir::Func f = lowered(spec, schedule::default_gpu_schedule(te::dag_from_spec(spec)), "mm_on_stream");
  auto module = build_module({f}, Target::parse(target));
  Stream s = api.create_stream(dev.id);
  api.set_stream(dev.id, s);
  Tensor a = random_tensor(DataType::kFloat32, {16, 16}, 1), b = random_tensor(DataType::kFloat32, {16, 16}, 2);
  NDArray da = NDArray::from_host(a, dev), db = NDArray::from_host(b, dev);
  NDArray dc = NDArray::empty(DataType::kFloat32, {16, 16}, dev);
  module->call("mm_on_stream", {&da, &db, &dc});
  api.set_stream(dev.id, nullptr);
  api.sync_stream_from_to(dev.id, s, nullptr);
  Tensor c = dc.to_host();
  for (int64_t i = 0; i < 16; ++i)
    for (int64_t j = 0; j < 16; ++j) {
      double want = 0;
      for (int64_t k = 0; k < 16; ++k) want += a.get_double(i * 16 + k) * b.get_double(k * 16 + j);
      QVERIFY(std::abs(c.get_double(i * 16 + j) - want) < 1e-4);
    }
  api.free_stream(dev.id, s);
}

// A gather whose index is checked (loopir::Check): in range it runs; out of range the call
// throws the check's message with the value, as every backend reports it.
inline void check_failed_checks_become_errors(const std::string& target) {
  using namespace loopir;
  Buffer idx = make_buffer("idx", DataType::kInt64, {3});
  Buffer data = make_buffer("data", DataType::kFloat32, {5});
  Buffer out = make_buffer("out", DataType::kFloat32, {3});
  VarRef i = make_var("i");
  Expr q = make_load(idx, {i});
  Expr guarded = make_check(logical_and(ge(q, make_int(0)), lt(q, make_int(5))), q, q,
                            "node 'g' (Gather): index {} out of range [0, 5)");
  Func f{"gather",
         {idx, data, out},
         make_for(i, make_int(0), make_int(3), make_store(out, {i}, make_load(data, {guarded})))};
  auto module = build_module({f}, Target::parse(target));
  Tensor indices(DataType::kInt64, {3}), values = random_tensor(DataType::kFloat32, {5}, 3),
                                         result(DataType::kFloat32, {3});
  indices.set_double(0, 1);
  indices.set_double(1, 4);
  indices.set_double(2, 2);
  module->call_host("gather", {&indices, &values, &result});
  QCOMPARE(result.get_double(1), values.get_double(4));
  indices.set_double(1, 7);
  try {
    module->call_host("gather", {&indices, &values, &result});
    QFAIL("an index out of range was not reported");
  } catch (const Error& e) {
    QVERIFY2(std::string(e.what()) == "kernel 'gather': node 'g' (Gather): index 7 out of range [0, 5)", e.what());
  }
}

}  // namespace tessel::testing
