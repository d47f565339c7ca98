#pragma once
// `tessel build`: a compiled model becomes a shared library that runs it without Tessel.
//
//   CompiledModel ─┬─ Module::save_object ──────────▶ kernels.o   (every kernel, `void k(void**)`)
//                  ├─ constants, 64-byte aligned ───▶ weights.bin (embedded with .incbin)
//                  └─ memory plan + kernel params ──▶ entry.c     (<name>_run: kernels in plan
//                                                                  order over one arena)
//        cc -shared -fPIC entry.c kernels.o -lm -lpthread ──▶ model.so  (+ model.h from model_header)
//
// The library exports only `<name>_*` (a version script hides the kernels and its own
// tessel_parallel_for, so two models load side by side). Its C ABI, declared by the header:
//
//   int    <name>_run(const void* const* inputs, void* const* outputs);   0 = ok, 1 = out of memory,
//                                                                    2 = a kernel's check failed
//   const char* <name>_last_error(void);        what that check said (this thread's last failed run)
//   int    <name>_run_with_arena(const void* const* inputs, void* const* outputs, void* arena);
//   size_t <name>_arena_bytes(void);            the static memory plan's arena (+ staging), 64-aligned
//   void   <name>_set_num_threads(int n);       threads for parallel loops (default: the target's)
//
// Inputs and outputs are dense row-major buffers in the graph's order; any alignment is accepted
// (misaligned inputs are staged through the arena). Every kernel must be compiled: a model with
// kernels that fall back to the reference kernels is refused, naming them.
#include <string>

#include "core/compile/compiled_model.h"

namespace tessel::aot {

struct LibraryOptions {
  std::string name;       // C prefix of the entry points; sanitized into an identifier
  std::string cc = "cc";  // the system C compiler that links the library
};

// The C header declaring the entry points, and each input's and output's name, dtype and shape.
std::string model_header(const compile::CompiledModel& model, const std::string& name);

// Writes the shared library to `so_path`. Throws Error naming the path, kernel or step that failed.
void build_model_library(const compile::CompiledModel& model, const std::string& so_path,
                         const LibraryOptions& options);

// `name` made into a C identifier ("resnet-block.v2" → "resnet_block_v2").
std::string c_identifier(const std::string& name);

}  // namespace tessel::aot
