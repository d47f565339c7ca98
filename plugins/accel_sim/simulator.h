#pragma once
// The accelerator simulated in software: runs a Program for real on int8/int32 data and counts
// cycles (the cycle model is in README.md).
//
//   Dram dram;                                  the simulated DRAM (what the DeviceAPI hands out)
//   uint64_t a = dram.alloc(bytes);             an address; dram.write(a, host, bytes)
//   SimResult r = simulate(config, program, dram, {a, b, c});   program.buffers[k] at address k
//
// Each unit runs its queue in order; an instruction starts when its unit is free and every token
// it pops is there; the load and store units share DRAM's bandwidth. Errors (thrown as Error,
// naming the instruction by its index and kind):
//   - a token never pushed, or pushed and never popped: a deadlock / a token left over;
//   - two units touching the same scratchpad or DRAM bytes, one of them writing, with no chain of
//     tokens ordering them: a race (the result would depend on timing);
//   - a scratchpad region or DRAM range outside its memory.
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "plugins/accel_sim/isa.h"

namespace tessel::accel {

// Simulated DRAM: allocations in one address space (never address 0). Thread-safe.
class Dram {
 public:
  // Allocations start on a 4 KiB boundary at least: a burst boundary for every burst size the
  // cycle model allows, so a buffer's bursts count from its start.
  uint64_t alloc(size_t bytes, size_t alignment = kAlignment);
  static constexpr size_t kAlignment = 4096;
  void free(uint64_t address);  // throws Error for an address that is not an allocation
  void write(uint64_t address, const void* host, size_t bytes);
  void read(uint64_t address, void* host, size_t bytes) const;
  void copy(uint64_t src, uint64_t dst, size_t bytes);
  // The bytes [address, address + bytes) of one allocation; throws Error ("DRAM range ... is not
  // inside one allocation") otherwise. Not locked: for the simulator, which holds lock().
  std::byte* span(uint64_t address, size_t bytes);
  size_t allocated_bytes() const;
  std::mutex& mutex() const { return mutex_; }

 private:
  std::map<uint64_t, std::vector<std::byte>> blocks_;  // by start address
  uint64_t next_ = 4096;
  mutable std::mutex mutex_;
};

struct TimelineEntry {
  Unit unit;
  int64_t start = 0, end = 0;  // cycles; end is exclusive
};

struct SimResult {
  int64_t cycles = 0;                  // when the last unit finished
  std::array<int64_t, kUnits> busy{};  // cycles each unit spent executing
  int64_t dram_read_bytes = 0, dram_write_bytes = 0;
  int64_t dram_burst_bytes = 0;         // what the channel moved for them: whole bursts
  int64_t macs = 0;                     // multiply-accumulates the GEMM core did
  std::vector<TimelineEntry> timeline;  // per instruction, in program order
  std::string str() const;              // "1234 cycles; load 800 (65%), compute ..., DRAM 4096 B read ..."
};

// Runs `program` with program.buffers[k] at DRAM address bases[k]. The scratchpads start zeroed.
SimResult simulate(const MachineConfig& config, const Program& program, Dram& dram, const std::vector<uint64_t>& bases);

// The cycles one instruction takes on its unit, DRAM contention aside (the cycle model).
int64_t instruction_cycles(const MachineConfig& config, const Instruction& insn);

// The bytes a LOAD's or STORE's tile costs the DRAM channel: every dram_burst_bytes burst one of
// its rows touches, whole (a 16-byte row of a wider matrix pays a 64-byte burst, two when it
// straddles a boundary; a contiguous tile pays its bytes rounded up to a burst).
int64_t dram_burst_bytes(const MachineConfig& config, const Instruction& insn);

}  // namespace tessel::accel
