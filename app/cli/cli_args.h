#pragma once
// The one argument helper every `tessel` command uses: options with values ("--inputs DIR" or
// "--inputs=DIR"), repeatable options ("--shape a=1x3 --shape b=4"), flags ("--json") and
// positional arguments, checked against a small per-command spec.
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/support/error.h"
#include "core/support/shape.h"

namespace tessel::cli {

// A mistake in how a command was called; `tessel` exits with status 2 (other errors: 1).
class UsageError : public Error {
 public:
  using Error::Error;
};

struct ArgSpec {
  const char* usage;  // "tessel run MODEL --inputs DIR --out-dir DIR [--target SPEC]"
  std::vector<std::string> value_options = {};
  std::vector<std::string> repeatable_options = {};  // value options that may be given many times
  std::vector<std::string> flags = {};
  int min_positional = 0;
  int max_positional = 0;
};

class Args {
 public:
  // Throws UsageError naming the offending argument. "--help" anywhere sets help() and skips the
  // remaining checks, so a command can print its usage.
  static Args parse(std::span<const std::string> argv, const ArgSpec& spec);

  bool help() const { return help_; }
  const std::vector<std::string>& positional() const { return positional_; }
  bool flag(const std::string& name) const;
  std::optional<std::string> value(const std::string& name) const;
  std::string required(const std::string& name) const;  // UsageError when absent
  std::vector<std::string> values(const std::string& name) const;

 private:
  const ArgSpec* spec_ = nullptr;
  bool help_ = false;
  std::vector<std::string> positional_;
  std::multimap<std::string, std::string> values_;
};

// "--shape NAME=1x3x224x224" values → input shapes; UsageError on bad syntax. "NAME=" is a scalar.
std::map<std::string, Shape> parse_shape_options(const std::vector<std::string>& values);

// The --memory-limit option ("8G", "512M"; core/support/memory_budget.h) in bytes; 0 when absent
// (the default limit). UsageError when it is not a size.
int64_t memory_limit_option(const Args& args);

// --max-loop-iterations N, when given, sets the process's Loop limit (core/support/run_limits.h);
// UsageError when N is not a whole number of at least 1.
void apply_loop_limit_option(const Args& args);

// Prints "usage: ..." with the spec's usage line; the command's own help text follows.
void print_usage(const ArgSpec& spec, const char* details);

}  // namespace tessel::cli
