#pragma once
// A compilation target: a kind ("ref", later "llvm", "opencl", ...) plus typed options with
// defaults. Built from JSON or from the short command-line form:
//
//   Target::parse(R"({"kind": "ref", "vector_bits": 512})")
//   Target::parse("ref -vector_bits=256 -num_threads=2")
//   Target::parse(R"(c -cflags="-O3 -ffast-math")")   // double quotes keep spaces in a value
//
// Passes and code generators read only these options, never the machine they run on (compilation
// may happen away from the device). Kinds are registered in TargetKindRegistry with their options;
// an unknown kind, unknown option or bad value throws Error listing what is valid.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/support/error.h"

namespace tessel {

using TargetOptionValue = std::variant<int64_t, bool, std::string>;

struct TargetOptionSpec {
  std::string name;
  enum class Type { kInt, kBool, kString } type = Type::kInt;
  std::string doc;
  // The default, computed when a Target is built (it may depend on the host, e.g. vector_bits).
  std::function<TargetOptionValue()> default_value;
  int64_t min = 0, max = INT64_MAX;  // for integers
  std::vector<std::string> choices;  // for strings; empty: any
  // Refuses a well-typed value that is still unacceptable (a compiler flag that loads a plugin):
  // returns why, or "" to accept. Runs on every value set from JSON or a spec, never on defaults.
  std::function<std::string(const TargetOptionValue&)> check = {};
};
std::string_view target_option_type_name(TargetOptionSpec::Type t);  // "int", "bool", "string"

class Target;

// What kind of machine a target kind's code runs on. It decides which default schedules, search
// spaces and graph passes apply (core/target/target_traits.h); a kind declares it, nothing infers
// it from the kind's options.
//   kCpu          the host's cores: vectors, caches, threads (ref, llvm, c, interp)
//   kGpu          many threads in blocks with a shared memory (opencl, cuda)
//   kAccelerator  a fixed-function GEMM core fed from scratchpads by explicit loads (accel-sim); it
//                 declares the options `gemm` (the core's n), `wgt_bytes` and `gemm_layout`
enum class DeviceClass { kCpu, kGpu, kAccelerator };
std::string_view device_class_name(DeviceClass c);  // "cpu", "gpu", "accelerator"

struct TargetKind {
  std::string name;
  std::string device;  // the device type its code runs on ("cpu")
  DeviceClass device_class = DeviceClass::kCpu;
  std::string doc;
  std::vector<TargetOptionSpec> options;
  // The memory scopes of its device a schedule may place a tensor in (cache_read, cache_write),
  // besides "global", which every target has: a GPU's "shared" and "local", an accelerator's
  // scratchpads ("accel.inp", ...). Empty: it declares none (on a CPU every scope is ordinary
  // memory, so the schedule editor offers the generic "shared" and "local").
  std::vector<std::string> memory_scopes;
  // The tensor intrinsics (core/te/tensor_intrinsic.h) its code generator runs, by name, for the
  // target's options (an accelerator runs the one of its GEMM core's size). Null: every declared
  // one (host code generators call the runtime's implementations of all of them).
  std::function<std::vector<std::string>(const Target&)> tensor_intrinsics;
  const TargetOptionSpec* find_option(std::string_view option) const;
};

// Typed registry of target kinds. The built-in kinds are registered on first use; plugins add
// theirs with add(). A duplicate name is refused.
class TargetKindRegistry {
 public:
  static TargetKindRegistry& global();
  void add(TargetKind kind);  // throws Error when the name is taken
  const TargetKind* find(std::string_view name) const;
  const TargetKind& get(std::string_view name) const;  // throws Error listing the registered kinds
  std::vector<std::string> names() const;
  std::shared_ptr<const TargetKind> get_shared(std::string_view name) const;  // throws like get()

 private:
  TargetKindRegistry();
  std::vector<std::shared_ptr<const TargetKind>> kinds_;
};

class Target {
 public:
  // JSON object (starts with '{') or short form "kind -opt=value ...". Throws Error.
  // In the short form words are split at whitespace outside double quotes, and the quotes are
  // dropped (no escapes): -cflags="-O2 -g" is one word, the value `-O2 -g`.
  static Target parse(std::string_view spec);
  static Target from_json(const nlohmann::json& j);
  // The kind with every option at its default.
  static Target of_kind(std::string_view kind);

  const std::string& kind() const { return kind_->name; }
  const TargetKind& kind_info() const { return *kind_; }
  int64_t get_int(std::string_view option) const;
  bool get_bool(std::string_view option) const;
  const std::string& get_string(std::string_view option) const;

  // Short form with every option: "ref -num_threads=1 -vector_bits=512"; a value with whitespace is
  // double-quoted, so parse(str()) gives the same target.
  std::string str() const;
  nlohmann::json to_json() const;  // {"kind": ..., every option}
  bool operator==(const Target& o) const { return kind_ == o.kind_ && options_ == o.options_; }

 private:
  explicit Target(std::shared_ptr<const TargetKind> kind);
  void set(std::string_view option, const TargetOptionValue& value);
  const TargetOptionValue& get(std::string_view option, TargetOptionSpec::Type type) const;
  std::shared_ptr<const TargetKind> kind_;
  std::map<std::string, TargetOptionValue, std::less<>> options_;
};

// Vector width in 32-bit floats (vector_bits / 32): the channel block of NCHW{c}c layouts and the
// lanes of default schedules; 1 for kinds without a vector_bits option (interp, c).
int64_t target_vector_floats(const Target& t);

// Threads for the kernels' parallel loops: the num_threads option; 1 for kinds without it.
int target_threads(const Target& t);

// 512 when the host CPU has AVX-512F, else 256: the `ref` kind's vector_bits default.
int64_t host_vector_bits();

}  // namespace tessel
