// The accel_sim machine without the plugin: the simulator runs hand-written GEMM tile programs
// (with padding, one or two buffers) and must equal a plain int8 matmul; broken token sequences,
// races and out-of-bounds accesses are errors naming the instruction; the code generator's
// programs for tensorized int8 matmuls equal the interpreter, and two virtual threads are no
// slower than one on a memory-bound machine.
#include <QtTest>
#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>

#include "core/loopir/interpreter.h"
#include "core/loopir/printer.h"
#include "core/lower/line_diff.h"
#include "core/lower/pipeline.h"
#include "core/schedule/default_schedule.h"
#include "core/schedule/schedule.h"
#include "core/support/tensor.h"
#include "core/te/tensor.h"
#include "plugins/accel_sim/codegen.h"
#include "plugins/accel_sim/simulator.h"
#include "tests/error_of.h"

using namespace tessel;
using tessel::testing::error_of;
using namespace tessel::accel;

namespace {

std::vector<int8_t> random_int8(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(-128, 127);
  std::vector<int8_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<int8_t>(dist(rng));
  return v;
}

std::vector<int32_t> reference_matmul(const std::vector<int8_t>& a, const std::vector<int8_t>& b, int64_t m, int64_t n,
                                      int64_t k) {
  std::vector<int32_t> c(static_cast<size_t>(m * n), 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int32_t s = 0;
      for (int64_t r = 0; r < k; ++r)
        s += int32_t{a[static_cast<size_t>(i * k + r)]} * b[static_cast<size_t>(r * n + j)];
      c[static_cast<size_t>(i * n + j)] = s;
    }
  return c;
}

// C[M, N] = A[M, K] * B[K, N] as GEMM tiles of the machine's size, edge tiles zero-padded; `buffers`
// input/weight buffers in turn (2: the load of step t+1 overlaps the GEMM of step t). Tokens:
// load→compute after both tiles of a step, compute→load when a slot is free again, compute→store
// when an output tile is done, store→compute when its accumulator may be reset.
Program gemm_program(int64_t m, int64_t n, int64_t k, int64_t g, int buffers) {
  Program p;
  p.buffers = {"A", "B", "C"};
  auto tiles = [&](int64_t x) { return (x + g - 1) / g; };
  int64_t steps = tiles(m) * tiles(n) * tiles(k), step = 0, out_tiles = tiles(m) * tiles(n), out = 0;
  for (int64_t ti = 0; ti < tiles(m); ++ti)
    for (int64_t tj = 0; tj < tiles(n); ++tj, ++out) {
      Instruction reset;
      reset.op = Opcode::kGemm;
      reset.unit = Unit::kCompute;
      reset.reset = true;
      reset.c = {0, g};
      if (out > 0) reset.pop[static_cast<int>(Unit::kStore)] = 1;
      p.insns.push_back(reset);
      for (int64_t tk = 0; tk < tiles(k); ++tk, ++step) {
        int64_t slot = step % buffers;
        int64_t rows = std::min(g, m - ti * g), inner = std::min(g, k - tk * g), cols = std::min(g, n - tj * g);
        Instruction la;
        la.op = Opcode::kLoad;
        la.unit = Unit::kLoad;
        la.sram = Scratchpad::kInput;
        la.sram_region = {slot * g * g, g};
        la.buffer = 0;
        la.dram_offset = ti * g * k + tk * g;
        la.dram_stride = k;
        la.rows = rows;
        la.cols = inner;
        la.pad_bottom = g - rows;
        la.pad_right = g - inner;
        if (step >= buffers) la.pop[static_cast<int>(Unit::kCompute)] = 1;
        p.insns.push_back(la);
        Instruction lb = la;
        lb.pop = {};
        lb.sram = Scratchpad::kWeight;
        lb.buffer = 1;
        lb.dram_offset = tk * g * n + tj * g;
        lb.dram_stride = n;
        lb.rows = inner;
        lb.cols = cols;
        lb.pad_bottom = g - inner;
        lb.pad_right = g - cols;
        lb.push[static_cast<int>(Unit::kCompute)] = 1;
        p.insns.push_back(lb);
        Instruction gemm;
        gemm.op = Opcode::kGemm;
        gemm.unit = Unit::kCompute;
        gemm.a = {slot * g * g, g};
        gemm.b = {slot * g * g, g};
        gemm.c = {0, g};
        gemm.pop[static_cast<int>(Unit::kLoad)] = 1;
        if (step + buffers < steps) gemm.push[static_cast<int>(Unit::kLoad)] = 1;
        if (tk + 1 == tiles(k)) gemm.push[static_cast<int>(Unit::kStore)] = 1;
        p.insns.push_back(gemm);
      }
      Instruction st;
      st.op = Opcode::kStore;
      st.unit = Unit::kStore;
      st.sram = Scratchpad::kAcc;
      st.sram_region = {0, g};
      st.buffer = 2;
      st.dram_offset = ti * g * n + tj * g;
      st.dram_stride = n;
      st.dram_elem_bytes = 4;
      st.rows = std::min(g, m - ti * g);
      st.cols = std::min(g, n - tj * g);
      st.pop[static_cast<int>(Unit::kCompute)] = 1;
      if (out + 1 < out_tiles) st.push[static_cast<int>(Unit::kCompute)] = 1;
      p.insns.push_back(st);
    }
  return p;
}

struct Run {
  std::vector<int32_t> c;
  SimResult result;
};

Run run_gemm(const MachineConfig& config, const Program& p, const std::vector<int8_t>& a, const std::vector<int8_t>& b,
             int64_t m, int64_t n) {
  Dram dram;
  uint64_t da = dram.alloc(a.size()), db = dram.alloc(b.size()), dc = dram.alloc(static_cast<size_t>(m * n * 4));
  dram.write(da, a.data(), a.size());
  dram.write(db, b.data(), b.size());
  Run r;
  r.result = simulate(config, p, dram, {da, db, dc});
  r.c.resize(static_cast<size_t>(m * n));
  dram.read(dc, r.c.data(), r.c.size() * 4);
  return r;
}

// An int8 matmul with int32 accumulation, as a tensor expression.
te::ComputeDag int8_matmul(int64_t m, int64_t n, int64_t k) {
  te::Tensor a = te::placeholder("A", {m, k}, DataType::kInt8);
  te::Tensor b = te::placeholder("B", {k, n}, DataType::kInt8);
  loopir::IterVar r = te::reduce_axis(k, "k");
  te::Tensor c = te::compute("C", {m, n},
                             [&](const std::vector<loopir::Expr>& i) {
                               return te::sum(te::cast(DataType::kInt32, te::at(a, {i[0], r.var})) *
                                                  te::cast(DataType::kInt32, te::at(b, {r.var, i[1]})),
                                              {r});
                             },
                             {"i", "j"});
  return te::make_dag("matmul_i8", {c});
}

// Tiles in the scratchpads, tensorized to the GEMM core, the row tiles split over `vthreads`
// virtual threads (1: no vthread loop; the code generator then inserts the tokens).
std::string accel_schedule(int vthreads, int g = 16) {
  std::string n = std::to_string(g);
  std::string split =
      vthreads > 1 ? "split(C.i.outer, nparts=" + std::to_string(vthreads) + ")\nvthread(C.i.outer.outer)\n" : "";
  return "cache_read(A, accel.inp, C)\ncache_read(B, accel.wgt, C)\ncache_write(C, accel.acc)\n"
         "tile(C.i, C.j, " +
         n + ", " + n + ")\n" + split + "compute_at(C_acc, C.j.outer)\nsplit(C_acc.k, " + n +
         ")\nreorder(C_acc.k.outer, C_acc.i, C_acc.j, C_acc.k.inner)\ncompute_at(A_inp, C_acc.k.outer)\n"
         "compute_at(B_wgt, C_acc.k.outer)\ntensorize(C_acc.i, gemm_" +
         n + "x" + n + "x" + n + "_i8)";
}

// The tiled layout quantize_for_accelerator gives an offloaded product (gemm_layout=tiled):
// C[t, i, j] = Σ_k int32(A[i, k]) · int32(B[t, k, j]), B and C as columns of g-wide tiles.
te::ComputeDag int8_matmul_tiled(int64_t m, int64_t n, int64_t k, int64_t g) {
  te::Tensor a = te::placeholder("A", {m, k}, DataType::kInt8);
  te::Tensor b = te::placeholder("B", {n / g, k, g}, DataType::kInt8);
  loopir::IterVar r = te::reduce_axis(k, "k");
  te::Tensor c = te::compute("C", {n / g, m, g},
                             [&](const std::vector<loopir::Expr>& i) {
                               return te::sum(te::cast(DataType::kInt32, te::at(a, {i[1], r.var})) *
                                                  te::cast(DataType::kInt32, te::at(b, {i[0], r.var, i[2]})),
                                              {r});
                             },
                             {"t", "i", "j"});
  return te::make_dag("matmul_i8_tiled", {c});
}

// [k, n] row-major ↔ [n / g, k, g] columns of tiles.
std::vector<int8_t> to_column_tiles(const std::vector<int8_t>& b, int64_t k, int64_t n, int64_t g) {
  std::vector<int8_t> out(b.size());
  for (int64_t t = 0; t < n / g; ++t)
    for (int64_t r = 0; r < k; ++r)
      for (int64_t j = 0; j < g; ++j)
        out[static_cast<size_t>((t * k + r) * g + j)] = b[static_cast<size_t>(r * n + t * g + j)];
  return out;
}
std::vector<int32_t> from_column_tiles(const std::vector<int32_t>& c, int64_t m, int64_t n, int64_t g) {
  std::vector<int32_t> out(c.size());
  for (int64_t t = 0; t < n / g; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < g; ++j)
        out[static_cast<size_t>(i * n + t * g + j)] = c[static_cast<size_t>((t * m + i) * g + j)];
  return out;
}

// One LOAD of rows x cols int8 at `offset` with row stride `stride` (elements of the buffer).
Instruction load(int64_t offset, int64_t rows, int64_t cols, int64_t stride) {
  Instruction in;
  in.op = Opcode::kLoad;
  in.unit = Unit::kLoad;
  in.sram = Scratchpad::kWeight;
  in.sram_region = {0, cols};
  in.buffer = 0;
  in.dram_offset = offset;
  in.dram_stride = stride;
  in.rows = rows;
  in.cols = cols;
  return in;
}

loopir::Func lower_matmul(int64_t m, int64_t n, int64_t k, const std::string& schedule) {
  return lower::lower(int8_matmul(m, n, k), schedule::parse_schedule(schedule)).func;
}

}  // namespace

class TestAccelSim : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void simulator_matches_reference_data() {
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("gemm");
    QTest::addColumn<int>("buffers");
    QTest::newRow("one tile") << 16 << 16 << 16 << 16 << 1;
    QTest::newRow("3x2 tiles, K 4 steps") << 48 << 32 << 64 << 16 << 2;
    QTest::newRow("padded 20x24x40") << 20 << 24 << 40 << 16 << 2;
    QTest::newRow("padded 5x7x3") << 5 << 7 << 3 << 16 << 1;
    QTest::newRow("8x8 core, padded 30x17x29") << 30 << 17 << 29 << 8 << 2;
  }
  void simulator_matches_reference() {
    QFETCH(int, m);
    QFETCH(int, n);
    QFETCH(int, k);
    QFETCH(int, gemm);
    QFETCH(int, buffers);
    MachineConfig config;
    config.gemm = gemm;
    auto a = random_int8(m * k, 10 + m), b = random_int8(k * n, 20 + n);
    Run r = run_gemm(config, gemm_program(m, n, k, gemm, buffers), a, b, m, n);
    auto want = reference_matmul(a, b, m, n, k);
    for (size_t i = 0; i < want.size(); ++i)
      if (r.c[i] != want[i])
        QFAIL(qPrintable(QString("element %1: reference %2, simulator %3").arg(i).arg(want[i]).arg(r.c[i])));
    const SimResult& s = r.result;
    QVERIFY(s.cycles > 0);
    QCOMPARE(s.timeline.size(), gemm_program(m, n, k, gemm, buffers).insns.size());
    for (int u = 0; u < kUnits; ++u) QVERIFY(s.busy[u] > 0 && s.busy[u] <= s.cycles);
    QCOMPARE(s.dram_write_bytes, int64_t{m} * n * 4);
    QVERIFY(s.dram_read_bytes >= int64_t{m} * k + int64_t{k} * n);
    for (const TimelineEntry& t : s.timeline) QVERIFY(t.start < t.end && t.end <= s.cycles);
  }

  // Two buffers let the load unit fetch step t+1 during the GEMM of step t: never slower, and
  // clearly faster when DRAM latency dominates. The numbers do not change.
  void second_buffer_overlaps_load_and_compute() {
    MachineConfig config;
    config.dram_latency = 200;
    const int64_t m = 32, n = 32, k = 128;
    auto a = random_int8(m * k, 1), b = random_int8(k * n, 2);
    Run one = run_gemm(config, gemm_program(m, n, k, 16, 1), a, b, m, n);
    Run two = run_gemm(config, gemm_program(m, n, k, 16, 2), a, b, m, n);
    QVERIFY(one.c == two.c);
    QVERIFY2(
        two.result.cycles < one.result.cycles,
        qPrintable(QString("1 buffer: %1, 2 buffers: %2").arg(one.result.str().c_str(), two.result.str().c_str())));
    // Overlap is visible in the timeline: some GEMM runs while a LOAD does.
    Program p = gemm_program(m, n, k, 16, 2);
    bool overlap = false;
    for (size_t x = 0; x < p.insns.size(); ++x)
      for (size_t y = 0; y < p.insns.size(); ++y)
        if (p.insns[x].op == Opcode::kGemm && p.insns[y].op == Opcode::kLoad) {
          const auto &g = two.result.timeline[x], &l = two.result.timeline[y];
          overlap = overlap || (g.start < l.end && l.start < g.end);
        }
    QVERIFY(overlap);
  }

  void dram_bandwidth_limits_loads() {
    MachineConfig fast, slow;
    slow.dram_bytes_per_cycle = 1;
    auto a = random_int8(32 * 32, 1), b = random_int8(32 * 32, 2);
    Program p = gemm_program(32, 32, 32, 16, 2);
    Run f = run_gemm(fast, p, a, b, 32, 32), s = run_gemm(slow, p, a, b, 32, 32);
    QVERIFY(f.c == s.c);
    // 8 tiles of 256 bytes at 1 byte per cycle: the load unit alone needs 2048 cycles.
    QVERIFY(s.result.busy[0] >= 8 * 256);
    QVERIFY(s.result.cycles > f.result.cycles);
  }

  void missing_push_deadlocks_naming_the_instruction() {
    Program p = gemm_program(16, 16, 32, 16, 1);
    // Instruction 3 is the first GEMM; without its push the second step's LOAD (4) waits forever.
    QCOMPARE(p.insns[3].op, Opcode::kGemm);
    p.insns[3].push[static_cast<int>(Unit::kLoad)] = 0;
    MachineConfig config;
    std::string e = error_of([&] { run_gemm(config, p, random_int8(16 * 32, 1), random_int8(32 * 16, 2), 16, 16); });
    QVERIFY2(e.find("deadlock") != std::string::npos, e.c_str());
    QVERIFY2(e.find("instruction 4 (LOAD on the load queue) waits for a token on the compute->load queue") !=
                 std::string::npos,
             e.c_str());
  }

  void extra_token_is_reported_naming_the_pusher() {
    Program p = gemm_program(16, 16, 16, 16, 1);
    p.insns.back().push[static_cast<int>(Unit::kCompute)] = 1;  // the last STORE frees an acc nobody resets
    MachineConfig config;
    std::string e = error_of([&] { run_gemm(config, p, random_int8(256, 1), random_int8(256, 2), 16, 16); });
    QVERIFY2(e.find("instruction 4 (STORE on the store queue) pushed a token on the store->compute queue that no "
                    "instruction pops") != std::string::npos,
             e.c_str());
  }

  void missing_token_pair_is_a_race() {
    // Without the load→compute pair the GEMM could read the weights before they arrive.
    Program p = gemm_program(16, 16, 16, 16, 1);
    p.insns[2].push = {};  // LOAD B
    p.insns[3].pop = {};   // GEMM
    MachineConfig config;
    std::string e = error_of([&] { run_gemm(config, p, random_int8(256, 1), random_int8(256, 2), 16, 16); });
    QVERIFY2(e.find("race") != std::string::npos, e.c_str());
    QVERIFY2(e.find("instruction 1 (LOAD on the load queue)") != std::string::npos ||
                 e.find("instruction 3 (GEMM on the compute queue)") != std::string::npos,
             e.c_str());
  }

  void scratchpad_out_of_bounds_names_the_instruction() {
    Program p = gemm_program(16, 16, 16, 16, 1);
    p.insns[1].sram_region.offset = 32 * 1024 - 100;  // LOAD A past the 32 KiB input scratchpad
    MachineConfig config;
    std::string e = error_of([&] { run_gemm(config, p, random_int8(256, 1), random_int8(256, 2), 16, 16); });
    QVERIFY2(e.find("instruction 1 (LOAD on the load queue) accesses inp region") != std::string::npos, e.c_str());
    QVERIFY2(e.find("past the 32768-element inp scratchpad") != std::string::npos, e.c_str());

    Program q = gemm_program(16, 16, 16, 16, 1);
    q.insns[2].dram_offset = 200;  // B rows past the end of B
    e = error_of([&] { run_gemm(config, q, random_int8(256, 1), random_int8(256, 2), 16, 16); });
    QVERIFY2(e.find("instruction 2 (LOAD on the load queue) reads or writes outside B") != std::string::npos,
             e.c_str());
  }

  void alu_requantizes_the_accumulator() {
    // acc = max(min((A*B + 64) >> 7, 127), -128) stored as int8.
    MachineConfig config;
    Program p = gemm_program(16, 16, 16, 16, 1);
    Instruction store = p.insns.back();
    p.insns.pop_back();
    p.insns.back().push = {};  // the GEMM's push to the store moves to the last ALU op
    std::vector<std::pair<AluOp, int32_t>> ops = {
        {AluOp::kAddImm, 64}, {AluOp::kShrImm, 7}, {AluOp::kMinImm, 127}, {AluOp::kMaxImm, -128}};
    for (auto [op, imm] : ops) {
      Instruction alu;
      alu.op = Opcode::kAlu;
      alu.unit = Unit::kCompute;
      alu.alu = op;
      alu.imm = imm;
      alu.rows = 16;
      alu.cols = 16;
      alu.sram_region = {0, 16};
      p.insns.push_back(alu);
    }
    p.insns.back().push[static_cast<int>(Unit::kStore)] = 1;
    store.dram_elem_bytes = 1;
    p.insns.push_back(store);
    auto a = random_int8(256, 5), b = random_int8(256, 6);
    Dram dram;
    uint64_t da = dram.alloc(256), db = dram.alloc(256), dc = dram.alloc(256);
    dram.write(da, a.data(), 256);
    dram.write(db, b.data(), 256);
    simulate(config, p, dram, {da, db, dc});
    std::vector<int8_t> got(256);
    dram.read(dc, got.data(), 256);
    auto want = reference_matmul(a, b, 16, 16, 16);
    for (size_t i = 0; i < 256; ++i) {
      int32_t q = std::max(std::min((want[i] + 64) >> 7, 127), -128);
      QCOMPARE(int32_t{got[i]}, q);
    }
  }

  // ── The code generator ──

  void generated_program_matches_interpreter_data() {
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("vthreads");
    QTest::addColumn<int>("gemm");
    QTest::newRow("32x32x32, 1 vthread") << 32 << 32 << 32 << 1 << 16;
    QTest::newRow("64x32x48, 2 vthreads") << 64 << 32 << 48 << 2 << 16;
    QTest::newRow("32x16x64, 2 vthreads, 8x8 core") << 32 << 16 << 64 << 2 << 8;
  }
  void generated_program_matches_interpreter() {
    QFETCH(int, m);
    QFETCH(int, n);
    QFETCH(int, k);
    QFETCH(int, vthreads);
    QFETCH(int, gemm);
    MachineConfig config;
    config.gemm = gemm;
    loopir::Func f = lower_matmul(m, n, k, accel_schedule(vthreads, gemm));
    Program p = generate_program(f, config);
    auto a = random_int8(m * k, 3), b = random_int8(k * n, 4);
    Run r = run_gemm(config, p, a, b, m, n);
    // The interpreter runs the same lowered program (the tokens checked its own way).
    Tensor ta = Tensor::from_values<int8_t>({m, k}, a), tb = Tensor::from_values<int8_t>({k, n}, b);
    Tensor tc(DataType::kInt32, {m, n});
    loopir::interpret(f, {ta, tb, tc});
    auto want = reference_matmul(a, b, m, n, k);
    for (size_t i = 0; i < want.size(); ++i) {
      QCOMPARE(tc.data<int32_t>()[i], want[i]);
      QCOMPARE(r.c[i], want[i]);
    }
    std::string text = listing(p);
    QVERIFY2(text.find("GEMM") != std::string::npos && text.find("pop(") != std::string::npos, text.c_str());
  }

  // Random shapes, virtual threads, GEMM core sizes and machine options: the simulator's numbers
  // equal the interpreter's on the same lowered program, whatever the timing.
  void random_tensorized_matmuls_match_interpreter() {
    std::mt19937_64 rng(2026);
    auto pick = [&](std::vector<int64_t> v) { return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)]; };
    for (int round = 0; round < 10; ++round) {
      MachineConfig config;
      config.gemm = pick({8, 16});
      config.dram_bytes_per_cycle = pick({1, 4, 8, 64});
      config.dram_latency = pick({0, 10, 100});
      int vthreads = static_cast<int>(pick({1, 2, 4}));
      int64_t g = config.gemm, m = g * vthreads * pick({1, 2}), n = g * pick({1, 2, 3}), k = g * pick({1, 2, 4});
      std::string what = QString("round %1: %2x%3x%4, %5 vthreads, %6")
                             .arg(round)
                             .arg(m)
                             .arg(n)
                             .arg(k)
                             .arg(vthreads)
                             .arg(config.str().c_str())
                             .toStdString();
      loopir::Func f = lower_matmul(m, n, k, accel_schedule(vthreads, static_cast<int>(g)));
      auto a = random_int8(m * k, 100 + round), b = random_int8(k * n, 200 + round);
      Run r;
      std::string error = error_of([&] { r = run_gemm(config, generate_program(f, config), a, b, m, n); });
      QVERIFY2(error.empty(), qPrintable(QString("%1: %2").arg(what.c_str(), error.c_str())));
      Tensor ta = Tensor::from_values<int8_t>({m, k}, a), tb = Tensor::from_values<int8_t>({k, n}, b);
      Tensor tc(DataType::kInt32, {m, n});
      loopir::interpret(f, {ta, tb, tc});
      for (size_t i = 0; i < r.c.size(); ++i)
        QVERIFY2(r.c[i] == tc.data<int32_t>()[i], qPrintable(QString("%1: element %2").arg(what.c_str()).arg(i)));
    }
  }

  // With K a single tile the k loop disappears and leaves the scratchpad allocations in the middle
  // of the j loop's body. The token inserter (core/lower/inject_virtual_thread.cpp) hoists them,
  // so the write-after-read between one j iteration's GEMMs and the next one's loads of A_inp gets
  // its token: no race, and the right numbers. (It used to be missed; the simulator caught it.)
  void single_tile_reduction_gets_its_loop_carried_tokens() {
    MachineConfig config;
    config.gemm = 8;
    const int64_t m = 32, n = 24, k = 8;
    const auto a = random_int8(m * k, 1), b = random_int8(k * n, 2);
    for (int vthreads : {1, 2, 4}) {
      Run r;
      const std::string e = error_of([&] {
        r = run_gemm(config, generate_program(lower_matmul(m, n, k, accel_schedule(vthreads, 8)), config), a, b, m, n);
      });
      QVERIFY2(e.empty(), e.c_str());
      QVERIFY2(r.c == reference_matmul(a, b, m, n, k), qPrintable(QString("%1 vthreads").arg(vthreads)));
    }
  }

  void two_virtual_threads_hide_memory_latency() {
    // Memory-bound: a tile's fetch (16 + 256/16 cycles, two per step) outlasts its GEMM (16
    // cycles). One thread fetches, then computes; two overlap one's fetch with the other's GEMM.
    // One-byte bursts: the tiles' bytes alone (with 64-byte bursts the strided row-major tiles
    // cost 2-4 times their bytes, so bandwidth, which no thread hides, takes most of the time).
    MachineConfig config;
    config.dram_latency = 16;
    config.dram_bytes_per_cycle = 16;
    config.dram_burst_bytes = 1;
    const int64_t m = 64, n = 32, k = 256;
    auto a = random_int8(m * k, 7), b = random_int8(k * n, 8);
    Run one = run_gemm(config, generate_program(lower_matmul(m, n, k, accel_schedule(1)), config), a, b, m, n);
    Run two = run_gemm(config, generate_program(lower_matmul(m, n, k, accel_schedule(2)), config), a, b, m, n);
    QVERIFY(one.c == two.c);
    QVERIFY(one.c == reference_matmul(a, b, m, n, k));
    QVERIFY2(
        two.result.cycles <= one.result.cycles,
        qPrintable(QString("1 vthread: %1\n2 vthreads: %2").arg(one.result.str().c_str(), two.result.str().c_str())));
    QVERIFY(one.result.busy[0] > one.result.busy[1]);  // the load unit is the bottleneck
    QVERIFY2(
        two.result.cycles * 10 < one.result.cycles * 9,  // at least 10% fewer cycles
        qPrintable(QString("1 vthread: %1\n2 vthreads: %2").arg(one.result.str().c_str(), two.result.str().c_str())));
  }

  // The cycle model's DRAM bursts (README, "The cycle model"): a row costs every burst it
  // touches. A 16x16 weight tile of a row-major [K', 256] matrix: 16 rows of 16 bytes, each in its
  // own 64-byte burst, 1024 bytes for 256; the same tile contiguous (the tiled layout): 4 bursts.
  void dram_bursts_cost_strided_rows_more_than_a_contiguous_tile() {
    MachineConfig m;  // 8 B/cycle, 64 cycles latency, 64-byte bursts
    const Instruction strided = load(0, 16, 16, 256), contiguous = load(0, 16, 16, 16);
    const Instruction straddling = load(56, 16, 16, 256), shifted = load(32, 16, 16, 16);
    const Instruction wide_rows = load(0, 16, 96, 576);  // an input tile of a 64-channel 3x3 layer
    QCOMPARE(dram_burst_bytes(m, strided), int64_t{16 * 64});
    QCOMPARE(instruction_cycles(m, strided), int64_t{64 + 1024 / 8});
    QCOMPARE(dram_burst_bytes(m, contiguous), int64_t{256});
    QCOMPARE(instruction_cycles(m, contiguous), int64_t{64 + 256 / 8});
    QCOMPARE(dram_burst_bytes(m, straddling), int64_t{16 * 128});  // [56, 72): two bursts a row
    QCOMPARE(instruction_cycles(m, straddling), int64_t{64 + 2048 / 8});
    QCOMPARE(dram_burst_bytes(m, shifted), int64_t{5 * 64});  // [32, 288): five bursts
    QCOMPARE(instruction_cycles(m, shifted), int64_t{64 + 320 / 8});
    QCOMPARE(dram_burst_bytes(m, wide_rows), int64_t{16 * 128});  // 96 of 128 bytes in each row's bursts
    // Rows that share a burst pay it once: 8-byte rows 8 apart are one 128-byte run.
    QCOMPARE(dram_burst_bytes(m, load(0, 16, 8, 8)), int64_t{128});
    QCOMPARE(dram_burst_bytes(m, load(0, 16, 8, 16)), int64_t{256});  // every other 8 bytes: 4 bursts
    // One-byte bursts: the bytes themselves (the model before bursts).
    MachineConfig exact;
    exact.dram_burst_bytes = 1;
    QCOMPARE(instruction_cycles(exact, strided), int64_t{64 + 256 / 8});
    QCOMPARE(instruction_cycles(exact, straddling), int64_t{64 + 256 / 8});

    // The simulator charges the same: one LOAD alone takes its instruction's cycles, and the bytes
    // are what the program asked for, the bursts what the channel moved.
    for (const Instruction& in : {strided, contiguous, straddling}) {
      Program p;
      p.buffers = {"W"};
      p.insns = {in};
      Dram dram;
      const uint64_t w = dram.alloc(16 * 256 + 64);
      const SimResult r = simulate(m, p, dram, {w});
      QCOMPARE(r.cycles, instruction_cycles(m, in));
      QCOMPARE(r.dram_read_bytes, int64_t{256});
      QCOMPARE(r.dram_burst_bytes, dram_burst_bytes(m, in));
    }
  }

  // The tiled layout through the whole path: the accelerator's default schedule of C[t, i, j]
  // (weight-stationary or not), lowered, generated and simulated, equals the interpreter on the same program and the
  // plain product; its weight LOADs and its STOREs are contiguous runs, so it moves fewer bursts and takes fewer cycles
  // than the row-major product of the same numbers.
  void tiled_layout_matmuls_match_interpreter() {
    std::mt19937_64 rng(2027);
    auto pick = [&](std::vector<int64_t> v) { return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)]; };
    for (int round = 0; round < 8; ++round) {
      MachineConfig config;
      config.gemm = pick({8, 16});
      config.dram_bytes_per_cycle = pick({4, 8, 64});
      config.dram_latency = pick({0, 10, 100});
      config.dram_burst_bytes = pick({1, 32, 64});
      schedule::AccelKnobs knobs;
      knobs.gemm = config.gemm;
      knobs.vthreads = pick({1, 2});
      knobs.k_tiles = pick({1, 2, 8});
      knobs.wgt_bytes = pick({int64_t{1} << 18, 0});  // a weight column kept in accel.wgt, or not
      const int64_t g = config.gemm, m = g * pick({1, 2, 3}), n = g * pick({1, 2, 4}), k = g * pick({1, 3, 8});
      const std::string what = "round " + std::to_string(round) + ": " + std::to_string(m) + "x" + std::to_string(n) +
                               "x" + std::to_string(k) + ", " + std::to_string(knobs.vthreads) + " vthreads, " +
                               config.str();
      const te::ComputeDag dag = int8_matmul_tiled(m, n, k, g);
      loopir::Func f;
      const std::string lowered =
          error_of([&] { f = lower::lower(dag, schedule::default_accel_schedule(dag, knobs)).func; });
      QVERIFY2(lowered.empty(), (what + ": " + lowered).c_str());
      const auto a = random_int8(m * k, 300 + round), b = random_int8(k * n, 400 + round);
      const auto tiles = to_column_tiles(b, k, n, g);
      Program p;
      Run r;
      const std::string error = error_of([&] {
        p = generate_program(f, config);
        r = run_gemm(config, p, a, tiles, m, n);
      });
      QVERIFY2(error.empty(), (what + ": " + error).c_str());
      Tensor ta = Tensor::from_values<int8_t>({m, k}, a), tb = Tensor::from_values<int8_t>({n / g, k, g}, tiles);
      Tensor tc(DataType::kInt32, {n / g, m, g});
      loopir::interpret(f, {ta, tb, tc});
      for (size_t i = 0; i < r.c.size(); ++i)
        QVERIFY2(r.c[i] == tc.data<int32_t>()[i], (what + ": element " + std::to_string(i)).c_str());
      QVERIFY2(from_column_tiles(r.c, m, n, g) == reference_matmul(a, b, m, n, k), what.c_str());
      for (const Instruction& in : p.insns) {
        const bool weights = in.op == Opcode::kLoad && in.sram == Scratchpad::kWeight;
        if (weights || in.op == Opcode::kStore)
          QVERIFY2(in.rows == 1 || in.dram_stride == in.cols, (what + ": " + listing(p)).c_str());
      }
    }
  }

  void tiled_layout_moves_fewer_bursts_than_rows() {
    MachineConfig config;  // the default machine: 8 B/cycle, 64-byte bursts
    const int64_t m = 64, n = 64, k = 256, g = config.gemm;
    const auto a = random_int8(m * k, 5), b = random_int8(k * n, 6);
    schedule::AccelKnobs knobs;
    const te::ComputeDag rows_dag = int8_matmul(m, n, k), tiled_dag = int8_matmul_tiled(m, n, k, g);
    const Program rows =
        generate_program(lower::lower(rows_dag, schedule::default_accel_schedule(rows_dag, knobs)).func, config);
    const Program tiled =
        generate_program(lower::lower(tiled_dag, schedule::default_accel_schedule(tiled_dag, knobs)).func, config);
    const Run r = run_gemm(config, rows, a, b, m, n), t = run_gemm(config, tiled, a, to_column_tiles(b, k, n, g), m, n);
    QVERIFY(r.c == reference_matmul(a, b, m, n, k));
    QVERIFY(from_column_tiles(t.c, m, n, g) == r.c);
    // The same bytes asked for; the row-major weights pay a 64-byte burst for each 16-byte row (the
    // default schedule keeps a K×16 column of weights in accel.wgt: each weight byte is read once).
    QCOMPARE(t.result.dram_read_bytes, r.result.dram_read_bytes);
    QCOMPARE(t.result.dram_write_bytes, r.result.dram_write_bytes);
    QCOMPARE(t.result.dram_burst_bytes, t.result.dram_read_bytes + t.result.dram_write_bytes);
    QCOMPARE(r.result.dram_burst_bytes, t.result.dram_burst_bytes + 3 * k * n);
    QVERIFY2(t.result.cycles * 5 < r.result.cycles * 4,
             qPrintable(QString("rows: %1\ntiled: %2").arg(r.result.str().c_str(), t.result.str().c_str())));
  }

  // The whole path as text a reader can check: schedule, lowered program, instruction stream,
  // and what the simulator counted (tests/golden/accel_sim; TESSEL_UPDATE_GOLDEN=1 rewrites it).
  void listing_matches_golden_file() {
    const int64_t m = 32, n = 16, k = 32;
    MachineConfig config;
    std::string schedule = accel_schedule(2);
    loopir::Func f = lower_matmul(m, n, k, schedule);
    Program p = generate_program(f, config);
    Run r = run_gemm(config, p, random_int8(m * k, 1), random_int8(k * n, 2), m, n);
    std::string actual = "# int8 matmul M=32 N=16 K=32, two virtual threads\n# schedule:\n" + schedule +
                         "\n# program:\n" + loopir::to_string(f) + "\n# instructions (" + config.str() + "):\n" +
                         listing(p) + "# simulated: " + r.result.str() + "\n";
    std::string path = std::string(TESSEL_SOURCE_DIR) + "/tests/golden/accel_sim/matmul_vthread2.txt";
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

  void unlowerable_kernels_are_refused_with_the_reason() {
    MachineConfig config;
    // Plain loops: the reduction's init stores to DRAM directly.
    std::string e = error_of([&] { generate_program(lower_matmul(16, 16, 16, ""), config); });
    QVERIFY2(e.find("kernel 'matmul_i8': accel-sim codegen: C[") != std::string::npos, e.c_str());
    QVERIFY2(e.find("neither a load into a scratchpad") != std::string::npos, e.c_str());
    // Scratchpads but no tensorize: the multiply-add is not a GEMM instruction.
    std::string untensorized = accel_schedule(1);
    untensorized = untensorized.substr(0, untensorized.rfind("\ntensorize"));
    e = error_of([&] { generate_program(lower_matmul(32, 32, 32, untensorized), config); });
    QVERIFY2(e.find("accel-sim codegen: C_acc[") != std::string::npos, e.c_str());
    // The 8x8 intrinsic on the 16x16 core.
    e = error_of([&] { generate_program(lower_matmul(32, 32, 32, accel_schedule(1, 8)), config); });
    QVERIFY2(e.find("the GEMM core computes gemm_16x16x16_i8 (target option gemm=16), not gemm_8x8x8_i8") !=
                 std::string::npos,
             e.c_str());
    // A tile that does not fit the scratchpad.
    MachineConfig tiny;
    tiny.inp_bytes = 256;
    e = error_of([&] { generate_program(lower_matmul(32, 32, 32, accel_schedule(2)), tiny); });
    QVERIFY2(e.find("allocate A_inp (accel.inp): 512 elements do not fit the inp scratchpad (256 elements") !=
                 std::string::npos,
             e.c_str());
  }

  // Requantization written as loop IR by hand (no schedule produces it yet): int32 tiles loaded
  // into acc, bias added, rounded, shifted, clipped by the ALU, stored as int8. No vthread: the
  // code generator orders the units itself (the next tile's LOAD waits for this tile's STORE).
  void requantization_lowers_to_alu_instructions() {
    using namespace loopir;
    const int64_t rows = 32, cols = 48, tile = 16;
    Buffer x = make_buffer("X", DataType::kInt32, {rows * cols});
    Buffer bias = make_buffer("Bias", DataType::kInt32, {rows * cols});
    Buffer y = make_buffer("Y", DataType::kInt8, {rows * cols});
    Buffer xa = make_buffer("X_acc", DataType::kInt32, {tile * cols}, "accel.acc");
    Buffer ba = make_buffer("Bias_acc", DataType::kInt32, {tile * cols}, "accel.acc");
    VarRef io = make_var("io"), r = make_var("r"), c = make_var("c");
    Expr local = Expr(r) * cols + Expr(c), global = (Expr(io) * tile + Expr(r)) * cols + Expr(c);
    auto nest = [&](Stmt body) {
      return make_for(r, make_int(0), make_int(tile), make_for(c, make_int(0), make_int(cols), body));
    };
    auto acc_op = [&](BinaryOp op, Expr v) {
      return nest(make_store(xa, {local}, make_binary(op, make_load(xa, {local}), v)));
    };
    Stmt body = make_seq({
        nest(make_store(xa, {local}, make_load(x, {global}))),
        nest(make_store(ba, {local}, make_load(bias, {global}))),
        acc_op(BinaryOp::kAdd, make_load(ba, {local})),
        acc_op(BinaryOp::kAdd, make_int(64, DataType::kInt32)),
        acc_op(BinaryOp::kDiv, make_int(128, DataType::kInt32)),
        acc_op(BinaryOp::kMin, make_int(127, DataType::kInt32)),
        acc_op(BinaryOp::kMax, make_int(-128, DataType::kInt32)),
        nest(make_store(y, {global}, make_cast(DataType::kInt8, make_load(xa, {local})))),
    });
    Func f{"requantize",
           {x, bias, y},
           make_for(io, make_int(0), make_int(rows / tile), make_allocate(xa, make_allocate(ba, body)))};

    MachineConfig config;
    Program p = generate_program(f, config);
    std::string text = listing(p);
    QCOMPARE(std::count_if(p.insns.begin(), p.insns.end(), [](auto& in) { return in.op == Opcode::kAlu; }), 10L);
    QVERIFY2(text.find("= shr(., 7)") != std::string::npos &&
                 text.find("Y[0 16x48 contiguous]i8 <- acc[") != std::string::npos,
             text.c_str());

    std::mt19937_64 rng(9);
    std::uniform_int_distribution<int32_t> dist(-40000, 40000);
    std::vector<int32_t> xs(rows * cols), bs(rows * cols);
    for (auto& v : xs) v = dist(rng);
    for (auto& v : bs) v = dist(rng) / 8;
    Dram dram;
    uint64_t dx = dram.alloc(xs.size() * 4), db = dram.alloc(bs.size() * 4), dy = dram.alloc(rows * cols);
    dram.write(dx, xs.data(), xs.size() * 4);
    dram.write(db, bs.data(), bs.size() * 4);
    SimResult result = simulate(config, p, dram, {dx, db, dy});
    std::vector<int8_t> got(rows * cols);
    dram.read(dy, got.data(), got.size());

    Tensor tx = Tensor::from_values<int32_t>({rows * cols}, xs), tb = Tensor::from_values<int32_t>({rows * cols}, bs);
    Tensor ty(DataType::kInt8, {rows * cols});
    loopir::interpret(f, {tx, tb, ty});
    for (size_t i = 0; i < got.size(); ++i) {
      int32_t v = xs[i] + bs[i] + 64;
      int32_t q = std::max(std::min(v >= 0 ? v / 128 : -((-v + 127) / 128), 127), -128);  // floor division
      QCOMPARE(int32_t{ty.data<int8_t>()[i]}, q);
      QCOMPARE(int32_t{got[i]}, q);
    }
    // 16 rows of 48 int32 elements per ALU op, 3 lanes-worths per row.
    QVERIFY(result.busy[static_cast<int>(Unit::kCompute)] >= 10 * 16 * 3);
  }

  void non_contiguous_tile_is_refused() {
    using namespace loopir;
    Buffer a = make_buffer("A", DataType::kInt8, {256});
    Buffer c = make_buffer("C", DataType::kInt32, {256});
    Buffer inp = make_buffer("A_inp", DataType::kInt8, {256}, "accel.inp");
    VarRef r = make_var("r"), col = make_var("col");
    Stmt transpose =
        make_for(r, make_int(0), make_int(16),
                 make_for(col, make_int(0), make_int(16),
                          make_store(inp, {Expr(r) * 16 + Expr(col)}, make_load(a, {Expr(col) * 16 + Expr(r)}))));
    Func f{"transposed", {a, c}, make_allocate(inp, transpose)};
    std::string e = error_of([&] { generate_program(f, MachineConfig{}); });
    QVERIFY2(e.find("kernel 'transposed': accel-sim codegen: A_inp[r * 16 + col] = A[col * 16 + r]: the innermost "
                    "loop col walks A with stride 16; tiles move contiguous rows") != std::string::npos,
             e.c_str());
  }

  void program_without_tokens_is_caught_as_a_race() {
    // The lowering's tokens taken out of a two-virtual-thread program: the units would race on
    // the scratchpads, and the simulator says where instead of picking an order.
    MachineConfig config;
    Program p = generate_program(lower_matmul(32, 32, 32, accel_schedule(2)), config);
    for (Instruction& in : p.insns) in.pop = in.push = {};
    std::string e = error_of([&] { run_gemm(config, p, random_int8(1024, 1), random_int8(1024, 2), 32, 32); });
    QVERIFY2(e.find("race") != std::string::npos && e.find("instruction ") != std::string::npos, e.c_str());
  }
};

QTEST_APPLESS_MAIN(TestAccelSim)
#include "test_accel_sim.moc"
