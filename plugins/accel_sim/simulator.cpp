#include "plugins/accel_sim/simulator.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>
#include <sstream>

#include "core/support/error.h"

namespace tessel::accel {

// ── DRAM ────────────────────────────────────────────────────────────────────────────────────

uint64_t Dram::alloc(size_t bytes, size_t alignment) {
  std::lock_guard<std::mutex> lock(mutex_);
  alignment = std::max(alignment, kAlignment);
  uint64_t address = (next_ + alignment - 1) / alignment * alignment;
  blocks_[address].resize(std::max<size_t>(bytes, 1));
  next_ = address + std::max<size_t>(bytes, 1);
  return address;
}

void Dram::free(uint64_t address) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (blocks_.erase(address) == 0)
    throw Error("accel-sim: DRAM address " + std::to_string(address) + " is not an allocation");
}

std::byte* Dram::span(uint64_t address, size_t bytes) {
  auto it = blocks_.upper_bound(address);
  if (it != blocks_.begin()) {
    --it;
    uint64_t end = it->first + it->second.size();
    if (address >= it->first && address + bytes <= end && address + bytes >= address)
      return it->second.data() + (address - it->first);
  }
  throw Error("DRAM range [" + std::to_string(address) + ", " + std::to_string(address + bytes) +
              ") is not inside one allocation");
}

void Dram::write(uint64_t address, const void* host, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (bytes) std::memcpy(span(address, bytes), host, bytes);
}

void Dram::read(uint64_t address, void* host, size_t bytes) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (bytes) std::memcpy(host, const_cast<Dram*>(this)->span(address, bytes), bytes);
}

void Dram::copy(uint64_t src, uint64_t dst, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (bytes) std::memmove(span(dst, bytes), span(src, bytes), bytes);
}

size_t Dram::allocated_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t total = 0;
  for (auto& [address, block] : blocks_) total += block.size();
  return total;
}

// ── Cycle model ─────────────────────────────────────────────────────────────────────────────

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t dram_bytes(const Instruction& in) { return in.rows * in.cols * in.dram_elem_bytes; }

}  // namespace

// DRAM moves whole bursts: every burst a row of the tile touches, counted once when rows share
// one. Offsets are from the buffer's start, which is on a burst boundary (Dram::alloc aligns to
// 4 KiB, the largest burst the target allows). A tile whose rows follow each other is one run.
int64_t dram_burst_bytes(const MachineConfig& m, const Instruction& in) {
  const int64_t b = m.dram_burst_bytes, eb = in.dram_elem_bytes, width = in.cols * eb;
  if (in.rows < 1 || width < 1) return 0;
  if (in.rows == 1 || in.dram_stride == in.cols) {
    const int64_t begin = in.dram_offset * eb, end = begin + in.rows * width;
    return ((end - 1) / b - begin / b + 1) * b;
  }
  int64_t bursts = 0, counted = -1;  // the last burst counted (rows go up: stride >= 0)
  for (int64_t r = 0; r < in.rows; ++r) {
    const int64_t begin = (in.dram_offset + r * in.dram_stride) * eb;
    const int64_t first = std::max(begin / b, counted + 1), last = (begin + width - 1) / b;
    if (last >= first) bursts += last - first + 1;
    counted = std::max(counted, last);
  }
  return bursts * b;
}

namespace {

// Cycles the DRAM channel is occupied by an instruction's transfer.
int64_t transfer_cycles(const MachineConfig& m, const Instruction& in) {
  return ceil_div(dram_burst_bytes(m, in), m.dram_bytes_per_cycle);
}

}  // namespace

int64_t instruction_cycles(const MachineConfig& m, const Instruction& in) {
  switch (in.op) {
    case Opcode::kLoad: {
      int64_t total_rows = in.pad_top + in.rows + in.pad_bottom, total_cols = in.pad_left + in.cols + in.pad_right;
      int64_t pad_elems = total_rows * total_cols - in.rows * in.cols;
      return m.dram_latency + transfer_cycles(m, in) + ceil_div(pad_elems, m.gemm);
    }
    case Opcode::kStore:
      return m.dram_latency + transfer_cycles(m, in);
    case Opcode::kGemm:
      return m.gemm;  // one 1 x n by n x n row product per cycle
    case Opcode::kAlu:
      return in.rows * ceil_div(in.cols, m.gemm);  // n lanes
    case Opcode::kNop:
      return 1;
  }
  return 1;
}

std::string SimResult::str() const {
  std::ostringstream o;
  o << cycles << " cycles;";
  for (int u = 0; u < kUnits; ++u)
    o << " " << unit_name(static_cast<Unit>(u)) << " busy " << busy[u] << " (" << (cycles ? 100 * busy[u] / cycles : 0)
      << "%)" << (u + 1 < kUnits ? "," : ";");
  o << " DRAM " << dram_read_bytes << " B read, " << dram_write_bytes << " B written; " << macs << " MACs";
  return o.str();
}

// ── The simulation ──────────────────────────────────────────────────────────────────────────

namespace {

using Clock = std::array<int64_t, kUnits>;  // vector clock: per unit, the last instruction known done

struct Token {
  int64_t time = 0;
  Clock clock{};
  size_t pusher = 0;
};

// A byte range an instruction touched, for the race check. Memories: the three scratchpads, DRAM.
constexpr int kDramMemory = 3;
struct Access {
  int memory = 0;
  int64_t begin = 0, end = 0;  // bytes, end exclusive; rows: [begin + r * stride, + width)
  int64_t rows = 1, stride = 0, width = 0;
  bool write = false;
};
struct AccessRecord {
  Access access;
  int64_t seq = 0;  // the instruction's number on its unit (1-based)
  size_t insn = 0;
};

bool rows_overlap(const Access& x, const Access& y) {
  if (x.end <= y.begin || y.end <= x.begin) return false;
  for (int64_t r = 0; r < x.rows; ++r) {
    int64_t xb = x.begin + r * x.stride, xe = xb + x.width;
    for (int64_t s = 0; s < y.rows; ++s) {
      int64_t yb = y.begin + s * y.stride, ye = yb + y.width;
      if (xb < ye && yb < xe) return true;
    }
  }
  return false;
}

const char* memory_name(int memory) {
  return memory == kDramMemory ? "DRAM" : scratchpad_name(static_cast<Scratchpad>(memory));
}

class Machine {
 public:
  Machine(const MachineConfig& m, const Program& p, Dram& dram, const std::vector<uint64_t>& bases)
      : m_(m), p_(p), dram_(dram), bases_(bases) {
    if (m.gemm < 1 || m.dram_bytes_per_cycle < 1 || m.dram_latency < 0 || m.dram_burst_bytes < 1)
      throw Error("accel-sim: machine model out of range: " + m.str());
    inp_.assign(static_cast<size_t>(m.inp_bytes), 0);
    wgt_.assign(static_cast<size_t>(m.wgt_bytes), 0);
    acc_.assign(static_cast<size_t>(m.acc_bytes / 4), 0);
    for (size_t k = 0; k < p.insns.size(); ++k) {
      const Instruction& in = p.insns[k];
      if (in.op != Opcode::kNop && in.unit != unit_of(in.op))
        fail(k, std::string("belongs to the ") + unit_name(unit_of(in.op)) + " unit, not the " + unit_name(in.unit));
      for (int u = 0; u < kUnits; ++u)
        if (in.pop[u] < 0 || in.push[u] < 0 || ((in.pop[u] || in.push[u]) && u == static_cast<int>(in.unit)))
          fail(k, std::string("has a token count for its own queue or a negative one (") + unit_name(Unit(u)) + ")");
      queue_[static_cast<int>(in.unit)].push_back(k);
    }
  }

  SimResult run() {
    std::lock_guard<std::mutex> lock(dram_.mutex());
    result_.timeline.resize(p_.insns.size());
    for (;;) {
      int best = -1;
      int64_t best_start = 0;
      for (int u = 0; u < kUnits; ++u) {
        int64_t start = 0;
        if (ready(u, &start) && (best < 0 || start < best_start)) {
          best = u;
          best_start = start;
        }
      }
      if (best < 0) break;
      issue(best, best_start);
    }
    check_finished();
    for (int u = 0; u < kUnits; ++u) result_.cycles = std::max(result_.cycles, free_at_[u]);
    return std::move(result_);
  }

 private:
  [[noreturn]] void fail(size_t insn, const std::string& why) const {
    throw Error("accel-sim: " + instruction_name(p_, insn) + " " + why);
  }

  std::deque<Token>& tokens(int from, int to) { return tokens_[from][to]; }

  // Whether unit u's next instruction has its tokens; its earliest start.
  bool ready(int u, int64_t* start) {
    if (next_[u] >= queue_[u].size()) return false;
    const Instruction& in = p_.insns[queue_[u][next_[u]]];
    int64_t t = free_at_[u];
    for (int v = 0; v < kUnits; ++v) {
      if (in.pop[v] == 0) continue;
      auto& q = tokens(v, u);
      if (q.size() < static_cast<size_t>(in.pop[v])) return false;
      t = std::max(t, q[static_cast<size_t>(in.pop[v]) - 1].time);
    }
    *start = t;
    return true;
  }

  void issue(int u, int64_t start) {
    size_t k = queue_[u][next_[u]++];
    const Instruction& in = p_.insns[k];
    Clock& clock = clock_[u];
    for (int v = 0; v < kUnits; ++v)
      for (int n = 0; n < in.pop[v]; ++n) {
        const Token& t = tokens(v, u).front();
        for (int w = 0; w < kUnits; ++w) clock[w] = std::max(clock[w], t.clock[w]);
        tokens(v, u).pop_front();
      }
    clock[u] = ++seq_[u];

    int64_t end = start + instruction_cycles(m_, in);
    if (in.op == Opcode::kLoad || in.op == Opcode::kStore) {
      // The transfer waits for the channel (shared by the load and store units), then occupies it.
      int64_t channel = std::max(start, dram_free_);
      dram_free_ = channel + transfer_cycles(m_, in);
      end += channel - start;
    }
    execute(k, in, u);
    result_.timeline[k] = {in.unit, start, end};
    result_.busy[u] += end - start;
    free_at_[u] = end;
    for (int v = 0; v < kUnits; ++v)
      for (int n = 0; n < in.push[v]; ++n) tokens(u, v).push_back({end, clock, k});
  }

  void check_finished() {
    std::string stuck;
    size_t first = p_.insns.size();
    for (int u = 0; u < kUnits; ++u) {
      if (next_[u] >= queue_[u].size()) continue;
      size_t k = queue_[u][next_[u]];
      const Instruction& in = p_.insns[k];
      for (int v = 0; v < kUnits; ++v) {
        if (tokens(v, u).size() >= static_cast<size_t>(in.pop[v])) continue;
        std::string line = instruction_name(p_, k) + " waits for a token on the " + unit_name(Unit(v)) + "->" +
                           unit_name(Unit(u)) + " queue (" + std::to_string(tokens(v, u).size()) + " there, " +
                           std::to_string(in.pop[v]) + " needed)";
        if (k < first) {
          first = k;
          stuck = line + stuck;
        } else {
          stuck += "; " + line;
        }
        break;
      }
    }
    if (first < p_.insns.size()) throw Error("accel-sim: deadlock: " + stuck);
    for (int v = 0; v < kUnits; ++v)
      for (int u = 0; u < kUnits; ++u)
        if (!tokens(v, u).empty())
          throw Error("accel-sim: " + instruction_name(p_, tokens(v, u).front().pusher) + " pushed a token on the " +
                      unit_name(Unit(v)) + "->" + unit_name(Unit(u)) + " queue that no instruction pops (" +
                      std::to_string(tokens(v, u).size()) + " left over)");
  }

  // ── Data ──

  // Checks a scratchpad region and returns its access.
  Access sram_access(size_t k, Scratchpad s, const Region& r, int64_t rows, int64_t cols, bool write) const {
    int64_t eb = scratchpad_elem_bytes(s), size = m_.scratchpad_bytes(s) / eb;
    std::string what = std::string(scratchpad_name(s)) + " region [offset " + std::to_string(r.offset) + ", " +
                       std::to_string(rows) + " rows x " + std::to_string(cols) + ", stride " +
                       std::to_string(r.stride) + "]";
    if (rows < 1 || cols < 1) fail(k, "has an empty " + what);
    if (r.offset < 0 || r.stride < 0) fail(k, "has a negative offset or stride in " + what);
    int64_t last = r.offset + (rows - 1) * r.stride + cols;
    if (last > size)
      fail(k, "accesses " + what + " up to element " + std::to_string(last) + ", past the " + std::to_string(size) +
                  "-element " + scratchpad_name(s) + " scratchpad");
    return {static_cast<int>(s), r.offset * eb, last * eb, rows, r.stride * eb, cols * eb, write};
  }

  // Checks the instruction's DRAM tile; returns its access (absolute byte addresses).
  Access dram_access(size_t k, const Instruction& in, bool write) {
    if (in.buffer < 0 || in.buffer >= static_cast<int>(bases_.size()))
      fail(k,
           "names DRAM buffer " + std::to_string(in.buffer) + ", but " + std::to_string(bases_.size()) + " are bound");
    if (in.rows < 1 || in.cols < 1 || in.dram_offset < 0 || in.dram_stride < 0)
      fail(k, "has an empty DRAM tile or a negative offset or stride");
    int64_t eb = in.dram_elem_bytes;
    uint64_t begin = bases_[static_cast<size_t>(in.buffer)] + static_cast<uint64_t>(in.dram_offset * eb);
    int64_t bytes = ((in.rows - 1) * in.dram_stride + in.cols) * eb;
    try {
      dram_.span(begin, static_cast<size_t>(bytes));
    } catch (const Error& e) {
      fail(k, "reads or writes outside " + p_.buffers.at(static_cast<size_t>(in.buffer)) + ": " + e.what());
    }
    return {kDramMemory, static_cast<int64_t>(begin), static_cast<int64_t>(begin) + bytes,
            in.rows,     in.dram_stride * eb,         in.cols * eb,
            write};
  }

  // Refuses an access that conflicts with another unit's access that no token chain orders first.
  void check_race(size_t k, int u, const Access& a) {
    for (int v = 0; v < kUnits; ++v) {
      if (v == u) continue;
      auto& records = records_[a.memory][v];
      for (size_t n = records.size(); n-- > 0;) {
        const AccessRecord& r = records[n];
        if (r.seq <= clock_[u][v]) break;  // this one and all before it happen before k
        if (!(a.write || r.access.write) || !rows_overlap(a, r.access)) continue;
        fail(k, std::string(a.write ? "writes" : "reads") + " " + memory_name(a.memory) + " bytes that " +
                    instruction_name(p_, r.insn) + (r.access.write ? " writes" : " reads") +
                    ", with no dependence token ordering the two (a race: a " + unit_name(Unit(v)) + "->" +
                    unit_name(Unit(u)) + " or " + unit_name(Unit(u)) + "->" + unit_name(Unit(v)) +
                    " token is missing)");
      }
    }
    records_[a.memory][u].push_back({a, seq_[u], k});
  }

  void execute(size_t k, const Instruction& in, int u) {
    switch (in.op) {
      case Opcode::kLoad: {
        int64_t eb = scratchpad_elem_bytes(in.sram);
        if (in.dram_elem_bytes != eb)
          fail(k, "loads " + std::to_string(in.dram_elem_bytes) + "-byte elements into the " +
                      scratchpad_name(in.sram) + " scratchpad, whose elements have " + std::to_string(eb));
        if (in.pad_top < 0 || in.pad_bottom < 0 || in.pad_left < 0 || in.pad_right < 0) fail(k, "has negative padding");
        int64_t rows = in.pad_top + in.rows + in.pad_bottom, cols = in.pad_left + in.cols + in.pad_right;
        Access src = dram_access(k, in, false);
        Access dst = sram_access(k, in.sram, in.sram_region, rows, cols, true);
        check_race(k, u, src);
        check_race(k, u, dst);
        std::byte* base = dram_.span(static_cast<uint64_t>(src.begin), static_cast<size_t>(src.end - src.begin));
        std::byte* sram = in.sram == Scratchpad::kAcc     ? reinterpret_cast<std::byte*>(acc_.data())
                          : in.sram == Scratchpad::kInput ? reinterpret_cast<std::byte*>(inp_.data())
                                                          : reinterpret_cast<std::byte*>(wgt_.data());
        for (int64_t r = 0; r < rows; ++r) {
          std::byte* row = sram + (in.sram_region.offset + r * in.sram_region.stride) * eb;
          std::memset(row, 0, static_cast<size_t>(cols * eb));
          int64_t dr = r - in.pad_top;
          if (dr < 0 || dr >= in.rows) continue;
          std::memcpy(row + in.pad_left * eb, base + dr * in.dram_stride * eb, static_cast<size_t>(in.cols * eb));
        }
        result_.dram_read_bytes += dram_bytes(in);
        result_.dram_burst_bytes += dram_burst_bytes(m_, in);
        break;
      }
      case Opcode::kStore: {
        if (in.sram != Scratchpad::kAcc) fail(k, "stores from a scratchpad other than acc");
        if (in.dram_elem_bytes != 1 && in.dram_elem_bytes != 4)
          fail(k, "stores elements that are neither int8 nor int32");
        Access src = sram_access(k, Scratchpad::kAcc, in.sram_region, in.rows, in.cols, false);
        Access dst = dram_access(k, in, true);
        check_race(k, u, src);
        check_race(k, u, dst);
        std::byte* base = dram_.span(static_cast<uint64_t>(dst.begin), static_cast<size_t>(dst.end - dst.begin));
        for (int64_t r = 0; r < in.rows; ++r)
          for (int64_t c = 0; c < in.cols; ++c) {
            int32_t v = acc_[static_cast<size_t>(in.sram_region.offset + r * in.sram_region.stride + c)];
            std::byte* at = base + (r * in.dram_stride + c) * in.dram_elem_bytes;
            if (in.dram_elem_bytes == 4) {
              std::memcpy(at, &v, 4);
            } else {
              auto low = static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint32_t>(v) & 0xff));
              std::memcpy(at, &low, 1);
            }
          }
        result_.dram_write_bytes += dram_bytes(in);
        result_.dram_burst_bytes += dram_burst_bytes(m_, in);
        break;
      }
      case Opcode::kGemm: {
        int64_t n = m_.gemm;
        check_race(k, u, sram_access(k, Scratchpad::kAcc, in.c, n, n, true));
        if (in.reset) {
          for (int64_t i = 0; i < n; ++i) std::fill_n(acc_.begin() + in.c.offset + i * in.c.stride, n, 0);
          break;
        }
        check_race(k, u, sram_access(k, Scratchpad::kInput, in.a, n, n, false));
        check_race(k, u, sram_access(k, Scratchpad::kWeight, in.b, n, n, false));
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            uint32_t sum = static_cast<uint32_t>(acc_[static_cast<size_t>(in.c.offset + i * in.c.stride + j)]);
            for (int64_t r = 0; r < n; ++r)
              sum += static_cast<uint32_t>(int32_t{inp_[static_cast<size_t>(in.a.offset + i * in.a.stride + r)]} *
                                           int32_t{wgt_[static_cast<size_t>(in.b.offset + r * in.b.stride + j)]});
            acc_[static_cast<size_t>(in.c.offset + i * in.c.stride + j)] = static_cast<int32_t>(sum);
          }
        result_.macs += n * n * n;
        break;
      }
      case Opcode::kAlu: {
        check_race(k, u, sram_access(k, Scratchpad::kAcc, in.sram_region, in.rows, in.cols, true));
        bool has_src = alu_op_has_source(in.alu);
        if (has_src) check_race(k, u, sram_access(k, Scratchpad::kAcc, in.src, in.rows, in.cols, false));
        if (in.alu == AluOp::kShrImm && (in.imm < 0 || in.imm > 31)) fail(k, "shifts by " + std::to_string(in.imm));
        for (int64_t r = 0; r < in.rows; ++r)
          for (int64_t c = 0; c < in.cols; ++c) {
            int32_t& d = acc_[static_cast<size_t>(in.sram_region.offset + r * in.sram_region.stride + c)];
            int32_t s = has_src ? acc_[static_cast<size_t>(in.src.offset + r * in.src.stride + c)] : in.imm;
            switch (in.alu) {
              case AluOp::kAddImm:
              case AluOp::kAdd:
                d = static_cast<int32_t>(static_cast<uint32_t>(d) + static_cast<uint32_t>(s));
                break;
              case AluOp::kMaxImm:
              case AluOp::kMax:
                d = std::max(d, s);
                break;
              case AluOp::kMinImm:
                d = std::min(d, s);
                break;
              case AluOp::kShrImm:
                d = d >> s;
                break;
            }
          }
        break;
      }
      case Opcode::kNop:
        break;
    }
  }

  const MachineConfig& m_;
  const Program& p_;
  Dram& dram_;
  const std::vector<uint64_t>& bases_;
  std::vector<int8_t> inp_, wgt_;
  std::vector<int32_t> acc_;
  std::array<std::vector<size_t>, kUnits> queue_;  // instruction indices per unit, in order
  std::array<size_t, kUnits> next_{};
  std::array<int64_t, kUnits> free_at_{}, seq_{};
  std::array<Clock, kUnits> clock_{};
  std::deque<Token> tokens_[kUnits][kUnits];
  std::array<std::array<std::vector<AccessRecord>, kUnits>, 4> records_;  // [memory][unit]
  int64_t dram_free_ = 0;
  SimResult result_;
};

}  // namespace

SimResult simulate(const MachineConfig& config, const Program& program, Dram& dram,
                   const std::vector<uint64_t>& bases) {
  return Machine(config, program, dram, bases).run();
}

}  // namespace tessel::accel
