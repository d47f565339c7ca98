#pragma once
// What the fuzz targets share. For untrusted input, a tessel::Error (a one-line refusal) is the
// expected failure: `expect_refusal_only` swallows it. Anything else -- another exception type, a
// crash, a sanitizer report, a broken round trip (`fuzz_check`), an input that runs past
// libFuzzer's -timeout -- stops the fuzzer and is a finding (tests/fuzz/README.md).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/support/error.h"
#include "core/support/tensor.h"

namespace tessel::fuzz {

// Tensors past 64 MiB are refused in the fuzz targets, by the check that refuses 8 GiB ones
// elsewhere: a legal but huge constant would otherwise cost an input seconds and gigabytes
// (a timeout or out-of-memory "finding" that is no bug).
inline const bool tensor_limit_lowered = (set_tensor_allocation_limit(int64_t{64} << 20), true);

inline std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

template <class F>
void expect_refusal_only(F&& body) {
  try {
    body();
  } catch (const Error&) {
    // Refused with a message: what hostile input should get.
  }
}

// A property every accepted input must keep (a round trip); failing it is a finding.
inline void fuzz_check(bool ok, const char* what, const std::string& detail = "") {
  if (ok) return;
  std::fprintf(stderr, "fuzz check failed: %s\n%s\n", what, detail.c_str());
  std::abort();
}

// Runs `body` on something Tessel produced itself (a printed form of an accepted input), which it
// must accept again: a tessel::Error there is a finding too.
template <class F>
void must_accept(const char* what, const std::string& text, F&& body) {
  try {
    body();
  } catch (const Error& e) {
    fuzz_check(false, what, text + "\n" + e.what());
  }
}

}  // namespace tessel::fuzz
