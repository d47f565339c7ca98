#pragma once
// The accelerator's machine model and instruction set (README.md draws the machine). Plain data:
// the code generator writes programs, the simulator runs them, tests build them by hand.
//
//   LOAD   dram[buffer + offset] rows x cols (row stride) ─▶ scratchpad (row stride), zero padding
//   GEMM   acc[c] += inp[a] * wgt[b] over one n x n x n block (or acc[c] = 0 with reset)
//   ALU    acc[dst] = op(acc[dst], imm or acc[src]) over rows x cols
//   STORE  acc rows x cols ─▶ dram[buffer + offset] as int32, or as int8 (the low byte)
//   NOP    no work; carries tokens when no other instruction of its unit can
//
// Every instruction belongs to one unit's queue (load, compute, store) and carries dependence
// tokens: before it starts it pops pop[u] tokens from the queue u→(its unit); when it ends it
// pushes push[u] tokens onto the queue (its unit)→u. The unit numbers are the lowering's
// (core/lower/inject_virtual_thread.h): load 0, compute 1, store 2.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tessel::accel {

enum class Unit : int { kLoad = 0, kCompute = 1, kStore = 2 };
constexpr int kUnits = 3;
const char* unit_name(Unit u);  // "load", "compute", "store"

enum class Scratchpad : int { kInput = 0, kWeight = 1, kAcc = 2 };
const char* scratchpad_name(Scratchpad s);    // "inp", "wgt", "acc"
int64_t scratchpad_elem_bytes(Scratchpad s);  // 1, 1, 4 (int8, int8, int32)

struct MachineConfig {
  int64_t gemm = 16;                 // the GEMM core computes n x n x n int8 blocks
  int64_t inp_bytes = 32 * 1024;     // input scratchpad (int8)
  int64_t wgt_bytes = 256 * 1024;    // weight scratchpad (int8)
  int64_t acc_bytes = 128 * 1024;    // accumulator scratchpad (int32)
  int64_t dram_bytes_per_cycle = 8;  // DRAM bandwidth, shared by the load and store units
  int64_t dram_latency = 64;         // cycles from a request to its first byte
  int64_t dram_burst_bytes = 64;     // DRAM moves whole bursts: a tile's row pays every burst it touches
  int64_t clock_mhz = 200;           // only to turn cycles into time
  int64_t scratchpad_bytes(Scratchpad s) const;
  std::string str() const;  // "gemm 16x16x16 int8, inp 32 KiB, ..."
};

enum class Opcode { kLoad, kGemm, kAlu, kStore, kNop };
const char* opcode_name(Opcode op);  // "LOAD", ...
Unit unit_of(Opcode op);             // NOP: see Instruction::unit

enum class AluOp { kAddImm, kMaxImm, kMinImm, kShrImm, kAdd, kMax };
const char* alu_op_name(AluOp op);  // "add", "max", "min", "shr", "add", "max"
bool alu_op_has_source(AluOp op);   // kAdd, kMax: a second acc region instead of an immediate

// A 2-D region of a scratchpad: `rows` rows of `cols` elements, row r starting at offset + r * stride
// (in elements of the scratchpad's type).
struct Region {
  int64_t offset = 0, stride = 0;
};

struct Instruction {
  Opcode op = Opcode::kNop;
  Unit unit = Unit::kLoad;         // equals unit_of(op) except for NOP
  std::array<int, kUnits> pop{};   // tokens taken from the queue u→unit before starting
  std::array<int, kUnits> push{};  // tokens given to the queue unit→u after ending

  // LOAD / STORE: the DRAM side. `buffer` indexes the program's buffers (bound to DRAM addresses
  // when run); offset and stride in elements of `dram_elem_bytes`.
  int buffer = -1;
  int64_t dram_offset = 0, dram_stride = 0, dram_elem_bytes = 1;
  int64_t rows = 0, cols = 0;
  // LOAD: zero rows above/below and zero columns left/right of the DRAM tile in the scratchpad.
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  Scratchpad sram = Scratchpad::kInput;  // LOAD destination, STORE source (always acc)
  Region sram_region;                    // LOAD / STORE / ALU destination

  // GEMM: acc[c] (+)= inp[a] * wgt[b] on the core's n x n x n block; reset: acc[c] = 0.
  bool reset = false;
  Region a, b, c;

  // ALU: dst = sram_region over rows x cols of acc; src = a second acc region (kAdd, kMax).
  AluOp alu = AluOp::kAddImm;
  int32_t imm = 0;
  Region src;

  std::string note;  // what the code generator made it from ("A_inp <- A", "vthread 1")
};

struct Program {
  std::vector<std::string> buffers;  // DRAM buffers, named (the kernel's parameters)
  std::vector<Instruction> insns;
};

// One line per instruction: "  12 compute GEMM acc[256 +16] += inp[0 +16] * wgt[0 +16]  pop(load) push(load)".
std::string instruction_text(const Program& p, size_t index);
std::string listing(const Program& p);
// "instruction 12 (GEMM on the compute queue)"
std::string instruction_name(const Program& p, size_t index);

}  // namespace tessel::accel
