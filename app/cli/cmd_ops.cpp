// tessel ops [--doc]: every op in the op table with its pattern kind, input/output counts and
// whether it compiles to kernels (yes; partial, with what its builder declines; no, with why);
// --doc adds the op's description and every attribute (name, type, default, range, description).
#include <cstdio>
#include <span>

#include "app/cli/cli_args.h"
#include "core/graph/op_table.h"

namespace tessel::cli {

namespace {

const ArgSpec kSpec{
    .usage = "tessel ops [--doc]",
    .flags = {"--doc"},
};

constexpr const char* kDetails =
    "Lists every op Tessel knows with its fusion pattern kind, how many inputs and outputs it takes,\n"
    "and whether it compiles to kernels: yes; partial, with what its tensor-expression builder\n"
    "declines (those nodes run their reference kernel); no, with why. --doc adds each op's\n"
    "description and every attribute: name, type, default, range, meaning.\n";

std::string count_text(int lo, int hi) {
  if (lo == hi) return std::to_string(lo);
  return std::to_string(lo) + "-" + (hi >= 1 << 20 ? std::string("n") : std::to_string(hi));
}

std::string attribute_line(const FieldDoc& f) {
  std::string line = "      " + f.name + ": " + f.type;
  line += f.required ? ", required" : ", default " + (f.default_value.empty() ? std::string("\"\"") : f.default_value);
  if (!f.range.empty()) line += ", range " + f.range;
  if (!f.doc.empty()) line += " - " + f.doc;
  return line + "\n";
}

std::string compiles_text(const OpCompilation& c) {
  std::string text(compiles_name(c.compiles));
  return *c.why ? text + ": " + c.why : text;
}

}  // namespace

int run_ops_command(std::span<const std::string> argv) {
  const Args args = Args::parse(argv, kSpec);
  if (args.help()) return print_usage(kSpec, kDetails), 0;
  const bool doc = args.flag("--doc");
  size_t name_w = 2;
  for (const OpDef& op : all_ops()) name_w = std::max(name_w, op.name.size());
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-*s  %-20s  %-7s  %-7s  %s\n", static_cast<int>(name_w), "op", "pattern", "inputs",
                "outputs", "compiles");
  out += line;
  for (const OpDef& op : all_ops()) {
    std::snprintf(line, sizeof line, "%-*s  %-20s  %-7s  %-7s  %s\n", static_cast<int>(name_w), op.name.c_str(),
                  std::string(pattern_name(op.pattern)).c_str(), count_text(op.min_inputs, op.max_inputs).c_str(),
                  count_text(op.min_outputs, op.max_outputs).c_str(), compiles_text(op.compilation).c_str());
    out += line;
    if (!doc) continue;
    out += "    " + op.doc + "\n";
    if (!op.shape_inputs.empty()) {
      out += "    inputs known at compile time:";
      for (int i : op.shape_inputs) out += " " + std::to_string(i);
      out += "\n";
    }
    const std::vector<FieldDoc> fields = op.attr_doc ? op.attr_doc() : std::vector<FieldDoc>{};
    out += fields.empty() ? "    attributes: none\n" : "    attributes:\n";
    for (const FieldDoc& f : fields) out += attribute_line(f);
  }
  out += std::to_string(all_ops().size()) + " ops\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace tessel::cli
