// onnx_conformance_survey: runs EVERY test folder of the ONNX test data (node/ and its siblings
// pytorch-converted/, pytorch-operator/, simple/) on each target, prints PASS/FAIL with the error
// line, pass counts per folder and target, the failures grouped by cause, and can rewrite the lists
// the ctest reads:
//
//   onnx_conformance_survey [--filter TEXT] [--jobs N] [--targets llvm,ref]
//                           [--write-passing FILE]    every test that passes on every target
//                           [--write-excluded FILE]   every other test, with a reason
//
// A reason written by hand in the existing excluded file is kept while that test still fails;
// reasons the survey writes itself start with "fails" and quote the error.
#include <QCoreApplication>
#include <QProcess>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "tests/conformance/node_test_catalog.h"
#include "tests/conformance/node_test_runner.h"

using namespace tessel::testing;

namespace {

struct SurveyOptions {
  std::string filter;
  int jobs = 3;
  std::vector<std::string> targets = {"llvm", "ref"};
  std::string write_passing;
  std::string write_excluded;
};

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

SurveyOptions parse_arguments(const QStringList& args) {
  SurveyOptions o;
  for (int i = 1; i < args.size(); ++i) {
    const QString a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw std::runtime_error(a.toStdString() + " needs a value");
      return args[++i].toStdString();
    };
    if (a == "--filter")
      o.filter = value();
    else if (a == "--jobs")
      o.jobs = std::stoi(value());
    else if (a == "--targets")
      o.targets = split_commas(value());
    else if (a == "--write-passing")
      o.write_passing = value();
    else if (a == "--write-excluded")
      o.write_excluded = value();
    else
      throw std::runtime_error("unknown argument " + a.toStdString() +
                               " (allowed: --filter, --jobs, --targets, --write-passing, --write-excluded)");
  }
  if (o.targets.empty()) throw std::runtime_error("--targets names no target");
  return o;
}

// Hand-written reasons from an existing excluded file: "test_name  reason text".
std::map<std::string, std::string> read_reasons(const std::string& path) {
  std::map<std::string, std::string> reasons;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t gap = line.find_first_of(" \t");
    if (gap == std::string::npos) continue;
    const size_t text = line.find_first_not_of(" \t", gap);
    if (text != std::string::npos) reasons[line.substr(0, gap)] = line.substr(text);
  }
  return reasons;
}

bool is_automatic(const std::string& reason) { return reason.rfind("fails", 0) == 0; }

// One line with names and numbers blanked: "(Range): input N (limit) must be known at compile time".
std::string blanked(std::string text) {
  text = std::regex_replace(text, std::regex(R"(^exit \d+: )"), "");
  text = std::regex_replace(text, std::regex(R"(^tessel: )"), "");
  text = std::regex_replace(text, std::regex(R"(^\S*model\.onnx: )"), "");
  text = std::regex_replace(text, std::regex(R"(node '[^']*' \()"), "(");
  text = std::regex_replace(text, std::regex(R"('[^']*')"), "'…'");
  text = std::regex_replace(text, std::regex(R"(-?\d+(\.\d+)?(e[-+]?\d+)?)"), "N");
  if (text.rfind("output_N: element", 0) == 0) return "wrong values (beyond rtol 1e-4)";
  return text.size() > 110 ? text.substr(0, 107) + "..." : text;
}

// The causes of one failure, for grouping: one per part of the model that blocks compiling
// ("unknown op Einsum", "input '…': ONNX data type UINTN is not supported by Tessel"), else the
// error line blanked. Messages of older builds ("2 unsupported ops: 'n' (Op), ...", "opset 6 ...
// is not supported") are read too, to survey a build from before opaque nodes.
std::vector<std::string> failure_causes(const std::string& message) {
  static const std::regex unknown_op(R"(^\(([A-Za-z0-9_.:]+)\): unknown op)");
  static const std::regex old_unsupported(R"(unsupported ops?: (.*))");
  static const std::regex node_op(R"('[^']*' \(([A-Za-z0-9_.:]+)\))");
  static const std::regex opset(R"(opset (\d+) )");
  std::set<std::string> causes;
  std::smatch m;
  const std::string marker = "Tessel cannot run: ";
  if (const size_t at = message.find(marker); at != std::string::npos) {
    std::string rest = message.substr(at + marker.size());
    for (size_t end; !rest.empty(); rest = end == std::string::npos ? "" : rest.substr(end + 2)) {
      end = rest.find("; ");
      const std::string item = blanked(rest.substr(0, end));
      causes.insert(std::regex_search(item, m, unknown_op) ? "unknown op " + m[1].str() : item);
    }
  } else if (std::regex_search(message, m, old_unsupported)) {
    const std::string list = m[1];
    for (auto it = std::sregex_iterator(list.begin(), list.end(), node_op); it != std::sregex_iterator(); ++it)
      causes.insert("unknown op " + (*it)[1].str());
  } else if (message.find("is not supported (Tessel imports opsets") != std::string::npos &&
             std::regex_search(message, m, opset)) {
    causes.insert("opset " + m[1].str() + " (the importer refuses it)");
  } else {
    causes.insert(blanked(message));
  }
  return {causes.begin(), causes.end()};
}

struct Outcome {
  const NodeTest* test = nullptr;
  std::map<std::string, NodeTestResult> by_target;
  bool passed_everywhere() const {
    for (const auto& [target, r] : by_target)
      if (!r.passed) return false;
    return true;
  }
};

// "fails: msg" when every target fails alike, else "fails on llvm: msg".
std::string automatic_reason(const Outcome& o) {
  std::string reason;
  std::set<std::string> messages;
  for (const auto& [target, r] : o.by_target)
    if (!r.passed) messages.insert(r.message);
  bool all_fail = true;
  for (const auto& [target, r] : o.by_target) all_fail = all_fail && !r.passed;
  if (all_fail && messages.size() == 1) return "fails: " + *messages.begin();
  for (const auto& [target, r] : o.by_target)
    if (!r.passed) reason += (reason.empty() ? "fails on " : "; on ") + target + ": " + r.message;
  return reason;
}

void print_counts(const std::vector<Outcome>& outcomes, const std::vector<std::string>& targets) {
  std::printf("\npassed per folder and target:\n  %-20s %7s", "folder", "tests");
  for (const std::string& t : targets) std::printf(" %7s", t.c_str());
  std::printf(" %7s\n", "all");
  std::map<std::string, std::pair<int, std::map<std::string, int>>> rows;  // dir -> (tests, target -> passed)
  for (const Outcome& o : outcomes) {
    for (const std::string& dir : {o.test->directory, std::string("total")}) {
      auto& [count, passed] = rows[dir];
      ++count;
      for (const auto& [target, r] : o.by_target) passed[target] += r.passed ? 1 : 0;
      passed["all"] += o.passed_everywhere() ? 1 : 0;
    }
  }
  for (const char* dir : kTestDirectories) rows[dir];  // folders with no test still get a row
  std::vector<std::string> order(std::begin(kTestDirectories), std::end(kTestDirectories));
  order.push_back("total");
  for (const std::string& dir : order) {
    auto& [count, passed] = rows[dir];
    std::printf("  %-20s %7d", dir.c_str(), count);
    for (const std::string& t : targets) std::printf(" %7d", passed[t]);
    std::printf(" %7d\n", passed["all"]);
  }
}

void print_causes(const std::vector<Outcome>& outcomes, const std::string& target) {
  std::map<std::string, std::vector<std::string>> by_cause;
  for (const Outcome& o : outcomes) {
    auto it = o.by_target.find(target);
    if (it == o.by_target.end() || it->second.passed) continue;
    for (const std::string& cause : failure_causes(it->second.message)) by_cause[cause].push_back(o.test->name);
  }
  std::vector<std::pair<size_t, std::string>> ranked;
  for (const auto& [cause, names] : by_cause) ranked.emplace_back(names.size(), cause);
  std::sort(ranked.begin(), ranked.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  std::printf("\nfailures on %s by cause (folders; a folder lacking two ops counts under both):\n", target.c_str());
  for (const auto& [count, cause] : ranked) {
    const auto& names = by_cause[cause];
    std::string examples;
    for (size_t i = 0; i < names.size() && i < 3; ++i) examples += (i ? ", " : "") + names[i];
    std::printf("  %4zu  %s  [%s%s]\n", count, cause.c_str(), examples.c_str(), names.size() > 3 ? ", ..." : "");
  }
}

int survey(const SurveyOptions& options) {
  const std::string tessel = tessel_binary_path(TESSEL_BINARY_DIR "/app/cli/tessel");
  const std::string data_dir = node_test_data_dir();

  std::vector<NodeTest> tests;
  for (const std::string& name : list_all_tests(data_dir)) {
    if (!options.filter.empty() && name.find(options.filter) == std::string::npos) continue;
    tests.push_back(read_node_test(data_dir, name));
  }
  std::vector<Outcome> outcomes(tests.size());
  for (size_t i = 0; i < tests.size(); ++i) outcomes[i].test = &tests[i];
  for (const std::string& target : options.targets) {
    RunOptions run_options;
    run_options.tessel_binary = tessel;
    run_options.parallel_processes = options.jobs;
    run_options.target = target;
    const std::vector<NodeTestResult> results = run_node_tests(tests, run_options);
    for (size_t i = 0; i < tests.size(); ++i) {
      const NodeTest& t = tests[i];
      const NodeTestResult& r = results[i];
      outcomes[i].by_target[target] = r;
      std::printf("%s %-56s %-5s [%s, opset %d]%s%s\n", r.passed ? "PASS" : "FAIL", t.name.c_str(), target.c_str(),
                  t.element_kind.c_str(), t.opset, r.passed ? "" : " ", r.message.c_str());
    }
    std::fflush(stdout);
  }

  std::vector<std::string> passing;
  std::vector<std::pair<std::string, std::string>> excluded;
  const std::map<std::string, std::string> old_reasons =
      options.write_excluded.empty() ? std::map<std::string, std::string>() : read_reasons(options.write_excluded);
  for (const Outcome& o : outcomes) {
    if (o.passed_everywhere()) {
      passing.push_back(o.test->name);
      continue;
    }
    auto old = old_reasons.find(o.test->name);
    const bool keep_old = old != old_reasons.end() && !is_automatic(old->second);
    excluded.emplace_back(o.test->name, keep_old ? old->second : automatic_reason(o));
  }
  print_counts(outcomes, options.targets);
  for (const std::string& target : options.targets) print_causes(outcomes, target);
  std::printf("\nsurvey: %zu tests, %zu pass on every target (passing.txt), %zu excluded (excluded.txt)\n",
              tests.size(), passing.size(), excluded.size());

  if (!options.write_passing.empty()) {
    std::ofstream out(options.write_passing);
    out << "# Tests that must pass (ctest onnx_conformance*): node tests by name, the other folders as\n"
           "# folder/name. Regenerate with\n"
           "#   onnx_conformance_survey --write-passing tests/conformance/passing.txt "
           "--write-excluded tests/conformance/excluded.txt\n";
    for (const std::string& name : passing) out << name << "\n";
  }
  if (!options.write_excluded.empty()) {
    std::ofstream out(options.write_excluded);
    out << "# Tests left out of passing.txt, each with its reason (a hand-written one, or \"fails\" and the\n"
           "# error the survey saw).\n";
    for (const auto& [name, reason] : excluded) out << name << "  " << reason << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  try {
    return survey(parse_arguments(app.arguments()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onnx_conformance_survey: %s\n", e.what());
    return 1;
  }
}
