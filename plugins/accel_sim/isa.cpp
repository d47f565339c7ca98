#include "plugins/accel_sim/isa.h"

#include <sstream>

namespace tessel::accel {

const char* unit_name(Unit u) {
  switch (u) {
    case Unit::kLoad:
      return "load";
    case Unit::kCompute:
      return "compute";
    case Unit::kStore:
      return "store";
  }
  return "?";
}

const char* scratchpad_name(Scratchpad s) {
  switch (s) {
    case Scratchpad::kInput:
      return "inp";
    case Scratchpad::kWeight:
      return "wgt";
    case Scratchpad::kAcc:
      return "acc";
  }
  return "?";
}

int64_t scratchpad_elem_bytes(Scratchpad s) { return s == Scratchpad::kAcc ? 4 : 1; }

int64_t MachineConfig::scratchpad_bytes(Scratchpad s) const {
  switch (s) {
    case Scratchpad::kInput:
      return inp_bytes;
    case Scratchpad::kWeight:
      return wgt_bytes;
    case Scratchpad::kAcc:
      return acc_bytes;
  }
  return 0;
}

std::string MachineConfig::str() const {
  std::ostringstream o;
  o << "gemm " << gemm << "x" << gemm << "x" << gemm << " int8->int32, scratchpads inp " << inp_bytes << " B, wgt "
    << wgt_bytes << " B, acc " << acc_bytes << " B, DRAM " << dram_bytes_per_cycle << " B/cycle in " << dram_burst_bytes
    << " B bursts with " << dram_latency << " cycles latency, " << clock_mhz << " MHz";
  return o.str();
}

const char* opcode_name(Opcode op) {
  switch (op) {
    case Opcode::kLoad:
      return "LOAD";
    case Opcode::kGemm:
      return "GEMM";
    case Opcode::kAlu:
      return "ALU";
    case Opcode::kStore:
      return "STORE";
    case Opcode::kNop:
      return "NOP";
  }
  return "?";
}

Unit unit_of(Opcode op) {
  switch (op) {
    case Opcode::kLoad:
      return Unit::kLoad;
    case Opcode::kStore:
      return Unit::kStore;
    default:
      return Unit::kCompute;
  }
}

const char* alu_op_name(AluOp op) {
  switch (op) {
    case AluOp::kAddImm:
    case AluOp::kAdd:
      return "add";
    case AluOp::kMaxImm:
    case AluOp::kMax:
      return "max";
    case AluOp::kMinImm:
      return "min";
    case AluOp::kShrImm:
      return "shr";
  }
  return "?";
}

bool alu_op_has_source(AluOp op) { return op == AluOp::kAdd || op == AluOp::kMax; }

namespace {

std::string region(const char* pad, const Region& r, int64_t rows, int64_t cols) {
  std::ostringstream o;
  o << pad << "[" << r.offset << " " << rows << "x" << cols << " /" << r.stride << "]";
  return o.str();
}

std::string tokens(const char* verb, const std::array<int, kUnits>& count) {
  std::string out;
  for (int u = 0; u < kUnits; ++u)
    if (count[u] > 0)
      out += std::string("  ") + verb + "(" + unit_name(static_cast<Unit>(u)) +
             (count[u] > 1 ? " x" + std::to_string(count[u]) : "") + ")";
  return out;
}

}  // namespace

std::string instruction_text(const Program& p, size_t index) {
  const Instruction& in = p.insns.at(index);
  std::ostringstream o;
  o.width(5);
  o << index << " ";
  o.width(0);
  o << unit_name(in.unit) << " " << opcode_name(in.op) << (in.op == Opcode::kNop ? "" : " ");
  // A tile whose rows follow each other in DRAM is one run ("contiguous"), else its row stride.
  auto dram = [&] {
    std::ostringstream d;
    d << (in.buffer >= 0 && in.buffer < static_cast<int>(p.buffers.size()) ? p.buffers[in.buffer] : "?") << "["
      << in.dram_offset << " " << in.rows << "x" << in.cols;
    if (in.rows > 1 && in.dram_stride == in.cols)
      d << " contiguous";
    else
      d << " /" << in.dram_stride;
    d << "]" << (in.dram_elem_bytes == 1 ? "i8" : "i32");
    return d.str();
  };
  switch (in.op) {
    case Opcode::kLoad:
      o << region(scratchpad_name(in.sram), in.sram_region, in.pad_top + in.rows + in.pad_bottom,
                  in.pad_left + in.cols + in.pad_right)
        << " <- " << dram();
      if (in.pad_top || in.pad_bottom || in.pad_left || in.pad_right)
        o << " pad(" << in.pad_top << "," << in.pad_bottom << "," << in.pad_left << "," << in.pad_right << ")";
      break;
    case Opcode::kStore:
      o << dram() << " <- " << region("acc", in.sram_region, in.rows, in.cols);
      break;
    case Opcode::kGemm:
      if (in.reset)
        o << "acc[" << in.c.offset << " /" << in.c.stride << "] = 0";
      else
        o << "acc[" << in.c.offset << " /" << in.c.stride << "] += inp[" << in.a.offset << " /" << in.a.stride
          << "] * wgt[" << in.b.offset << " /" << in.b.stride << "]";
      break;
    case Opcode::kAlu:
      o << region("acc", in.sram_region, in.rows, in.cols) << " = " << alu_op_name(in.alu) << "(., ";
      if (alu_op_has_source(in.alu))
        o << "acc[" << in.src.offset << " /" << in.src.stride << "])";
      else
        o << in.imm << ")";
      break;
    case Opcode::kNop:
      break;
  }
  o << tokens("pop", in.pop) << tokens("push", in.push);
  if (!in.note.empty()) o << "  ; " << in.note;
  return o.str();
}

std::string listing(const Program& p) {
  std::string out = "; buffers:";
  for (size_t k = 0; k < p.buffers.size(); ++k) out += " " + std::to_string(k) + "=" + p.buffers[k];
  out += "\n";
  for (size_t k = 0; k < p.insns.size(); ++k) out += instruction_text(p, k) + "\n";
  return out;
}

std::string instruction_name(const Program& p, size_t index) {
  const Instruction& in = p.insns.at(index);
  return "instruction " + std::to_string(index) + " (" + opcode_name(in.op) + " on the " + unit_name(in.unit) +
         " queue)";
}

}  // namespace tessel::accel
