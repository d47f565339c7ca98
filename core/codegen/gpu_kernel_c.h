#pragma once
// Loop IR → C-family GPU kernels (OpenCL C, CUDA C): one kernel per root loop nest of a lowered
// function, and how to launch it. The two languages differ only in what a GpuDialect lists:
// qualifiers, the index builtins, the barrier, address spaces and a prelude of helpers; the
// statements, expressions and the launch analysis are written once, here.
//
//   for b in blockIdx.x (16)          KERNEL void k(GLOBAL const float* A, ..., rec* r) {
//     for t in threadIdx.x (64)   ->    long b = BLOCK_ID(0);  long t = THREAD_ID(0);
//       C[b*64 + t] = A[...] + 1          C[b*64 + t] = A[...] + 1; }
//                                      launch: 16 blocks of 64 threads
//
// A function whose body is a sequence of root loop nests under global allocations (a reduction
// stage, then the output that reads it) becomes one kernel per nest, launched in order, the
// allocations workspaces they share. A nest runs on a grid when its thread-bound loops describe
// one the device can run: every loop bound to a tag with the same constant extent, every store
// to memory other than `local` (private) made inside the loops of every launched tag, barriers
// outside conditions, shared buffers within the shared memory. A threadIdx loop inside one bound
// to the same tag is the same thread index, which is how a shared tile is fetched cooperatively
// (each thread copies its element): run in order, every thread would copy the whole tile, with
// the same result, so such a loop may store only to shared buffers. Any other nest (the CPU
// schedules, two loops bound to one block index) runs as one thread that executes it in order:
// slower, never wrong. The reason is in the launch note and above each kernel.
//
// Block-wide reductions need nothing more: the lowering writes them as thread loops, guards and
// barriers (core/lower/lower_thread_allreduce.h), and a store the whole block would make as one
// of thread 0 (core/lower/store_from_thread_zero.h), which the rules above accept:
//
//   for i bind(blockIdx.x) {                          long v_i = get_group_id(0);
//     for t bind(threadIdx.x): red[t] = partial        { long v_t = get_local_id(0); red[v_t] = ...; }
//     barrier                                          barrier(...);
//     for t bind(threadIdx.x): if (t < 32)       ->    { long v_t = get_local_id(0);
//       red[t] = red[t] + red[t + 32]                    if ((v_t < 32)) red[v_t] = red[v_t] + red[v_t + 32]; }
//     barrier ...                                      barrier(...); ...
//     for tx bind(threadIdx.x): if (tx == 0)           { long v_tx = get_local_id(0);
//       Y[i] = red[0]                                    if ((v_tx == 0)) Y[v_i] = red[0]; }
//
// Scopes: `global` buffers are the parameters, and allocations become workspace buffers the
// module allocates once and passes after the parameters; `shared` is the dialect's shared
// qualifier (one thread: a workspace); `local` is private memory. f16 values are computed in
// float, read and written through the prelude's vload_half/vstore_half_rte; bf16 is kept as raw
// bits. Unrolled loops carry `#pragma unroll`. Tensor intrinsics have no implementation here: they
// are refused.
//
// Vectorized loops become the dialect's vector types where it has them (OpenCL C's floatN) and the
// target allows that many lanes: an f32 store at consecutive addresses of a value built from
// consecutive f32 loads, loop-invariant values (broadcast) and the arithmetic and math functions
// that take vectors. Anything else in the loop, and every vectorized loop in a dialect without
// vector types, is emitted as a loop.
//
//   for j in 0..4 vectorized {               float4 v = vload4(0, X + (i*64 + 0)) ...
//     Y[i*64 + j] = exp(X[i*64 + j]) * s  ->  vstore4((exp(vload4(0, X + i*64)) * ((float4)(s))),
//   }                                                 0, Y + i*64);
#include <array>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "core/loopir/ir.h"

namespace tessel::codegen {

// What one C-family GPU language spells differently. The prelude must define: the types uchar,
// ushort, uint, ulong, half (as storage); tessel_floordiv, tessel_floormod, tessel_fmod_floor,
// tessel_round_half, tessel_bf16_to_float, tessel_float_to_bf16, tessel_float_to_int64 and
// tessel_float_to_uint64 (core/support/dtype.h's float_to_int64 rule), vload_half(i, p),
// vstore_half_rte(v, i, p), NAN, INFINITY, the struct tessel_check_record {int claimed; int check;
// long value;} and tessel_check_failed(record, check, value), which returns 0.
struct GpuDialect {
  std::string language;                     // "OpenCL", "CUDA": in error messages
  std::string codegen;                      // "opencl", "cuda": "kernel 'K': <codegen> codegen: ..."
  std::string prelude;                      // placed once at the top of the program
  std::string kernel_signature;             // before the kernel's name: "__kernel void"
  std::string global_pointer;               // before a parameter's element type: "__global "
  std::string restrict_pointer;             // after the '*' of a parameter: "restrict"
  std::string check_record_type;            // the last parameter's type: "volatile __global tessel_check_record*"
  std::string shared_array;                 // before a shared array's declaration: "__local "
  std::string shared_pointer;               // before a pointer into a shared array: "__local "
  std::array<std::string, 3> block_index;   // an expression per dimension: "get_group_id(0)"
  std::array<std::string, 3> thread_index;  // "get_local_id(0)"
  std::string barrier;                      // a statement: "barrier(CLK_LOCAL_MEM_FENCE | ...);"
  std::string block, thread;                // the words launch notes use: "work-group", "work-item"
  std::string threads_limit_option;         // the target options named by a refusal to use a grid
  std::string shared_limit_option;
  bool vector_types = false;                // floatN with vloadN/vstoreN and vector math (OpenCL C)
};

struct GpuLimits {
  int64_t max_threads_per_block = 256;  // the most threads a block may have
  int64_t shared_memory_bytes = 32768;  // the shared bytes a block may use
  // Per dimension x, y, z: the most blocks in the grid and threads in a block.
  std::array<int64_t, 3> max_blocks{INT64_MAX, INT64_MAX, INT64_MAX};
  std::array<int64_t, 3> max_threads{INT64_MAX, INT64_MAX, INT64_MAX};
  int64_t vector_width = 1;  // the most lanes a vectorized loop may use as a vector type (1: none)
};

// One kernel of a lowered function: a root loop nest, launched on its own grid.
struct GpuLaunch {
  std::string symbol;                       // the kernel's name (an identifier made from the function's)
  std::array<int64_t, 3> blocks{1, 1, 1};   // blocks per dimension (blockIdx.x/y/z)
  std::array<int64_t, 3> threads{1, 1, 1};  // threads per block (threadIdx.x/y/z)
  std::string note;                         // "grid ..." or "one thread (why)"
};

// A lowered function as the device runs it: its root loop nests one after the other on one
// in-order stream (the end of one launch is the grid-wide barrier between them), all taking the
// same arguments.
struct GpuFunction {
  size_t params = 0;                     // buffers, as the lowered function lists them
  std::vector<bool> written;             // per parameter: stored to (what a host call copies back)
  std::vector<int64_t> workspace_bytes;  // then one buffer per workspace, then the check record
  std::vector<GpuLaunch> launches;
  std::string note() const;  // every launch's note, "; " between them
};

struct GpuProgram {
  std::string source;
  std::vector<GpuFunction> functions;  // in the order of the lowered functions
};

// Throws Error "kernel 'K': <codegen> codegen: ..." for what the language cannot express here.
GpuProgram emit_gpu_kernels(const std::vector<loopir::Func>& kernels, const GpuDialect& dialect,
                            const GpuLimits& limits);

}  // namespace tessel::codegen
