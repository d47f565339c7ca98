#include "app/cli/cli_args.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "core/support/memory_budget.h"
#include "core/support/run_limits.h"

namespace tessel::cli {

namespace {

bool contains(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

}  // namespace

Args Args::parse(std::span<const std::string> argv, const ArgSpec& spec) {
  Args a;
  a.spec_ = &spec;
  for (const std::string& arg : argv)
    if (arg == "--help" || arg == "-h") {
      a.help_ = true;
      return a;
    }
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    // Long options start with "--"; a short one ("-o") only counts when the spec lists it.
    const bool is_short_option = arg.size() == 2 && arg[0] == '-' && (contains(spec.value_options, arg) || contains(spec.flags, arg));
    if (!is_short_option && (arg.size() < 2 || arg.rfind("--", 0) != 0)) {
      a.positional_.push_back(arg);
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    if (contains(spec.flags, name)) {
      if (eq != std::string::npos) throw UsageError("option " + name + " takes no value");
      a.values_.emplace(name, "");
      continue;
    }
    if (!contains(spec.value_options, name) && !contains(spec.repeatable_options, name))
      throw UsageError("unknown option '" + name + "'; usage: " + spec.usage);
    std::string value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else {
      if (i + 1 >= argv.size()) throw UsageError("option " + name + " needs a value; usage: " + spec.usage);
      value = argv[++i];
    }
    if (a.values_.count(name) && !contains(spec.repeatable_options, name))
      throw UsageError("option " + name + " is given more than once");
    a.values_.emplace(name, value);
  }
  const int n = static_cast<int>(a.positional_.size());
  if (n < spec.min_positional) throw UsageError(std::string("missing arguments; usage: ") + spec.usage);
  if (n > spec.max_positional)
    throw UsageError("unexpected argument '" + a.positional_[spec.max_positional] + "'; usage: " + spec.usage);
  return a;
}

bool Args::flag(const std::string& name) const { return values_.count(name) > 0; }

std::optional<std::string> Args::value(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string Args::required(const std::string& name) const {
  if (auto v = value(name)) return *v;
  throw UsageError("missing option " + name + "; usage: " + spec_->usage);
}

std::vector<std::string> Args::values(const std::string& name) const {
  std::vector<std::string> out;
  auto [lo, hi] = values_.equal_range(name);
  for (auto it = lo; it != hi; ++it) out.push_back(it->second);
  return out;
}

int64_t memory_limit_option(const Args& args) {
  const std::optional<std::string> text = args.value("--memory-limit");
  if (!text) return 0;
  try {
    return parse_byte_size(*text);
  } catch (const Error& e) {
    throw UsageError(std::string("--memory-limit: ") + e.what());
  }
}

void apply_loop_limit_option(const Args& args) {
  const std::optional<std::string> text = args.value("--max-loop-iterations");
  if (!text) return;
  size_t used = 0;
  long long n = 0;
  try {
    n = std::stoll(*text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text->size() || n < 1)
    throw UsageError("--max-loop-iterations expects a whole number of at least 1, got '" + *text + "'");
  set_max_loop_iterations(n);
}

std::map<std::string, Shape> parse_shape_options(const std::vector<std::string>& values) {
  std::map<std::string, Shape> shapes;
  for (const std::string& v : values) {
    const size_t eq = v.rfind('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--shape '" + v + "' is not NAME=DIMS (for example --shape input=1x3x224x224)");
    const std::string name = v.substr(0, eq), dims = v.substr(eq + 1);
    Shape shape;
    size_t pos = 0;
    while (pos < dims.size()) {
      size_t end = dims.find_first_of("x,", pos);
      if (end == std::string::npos) end = dims.size();
      int64_t d = -1;
      auto [p, ec] = std::from_chars(dims.data() + pos, dims.data() + end, d);
      if (ec != std::errc() || p != dims.data() + end || d < 0)
        throw UsageError("--shape " + v + ": '" + dims.substr(pos, end - pos) + "' is not a non-negative dimension");
      shape.push_back(d);
      pos = end + 1;
      if (end + 1 == dims.size()) throw UsageError("--shape " + v + ": trailing separator");
    }
    if (!shapes.emplace(name, shape).second) throw UsageError("--shape names '" + name + "' more than once");
  }
  return shapes;
}

void print_usage(const ArgSpec& spec, const char* details) { std::printf("usage: %s\n\n%s", spec.usage, details); }

}  // namespace tessel::cli
