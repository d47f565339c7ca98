// onnx_conformance_survey: runs EVERY ONNX node test whose ops are all in `tessel ops`, prints
// PASS/FAIL with the error line, and can rewrite the lists the ctest reads:
//
//   onnx_conformance_survey [--filter TEXT] [--jobs N]
//                           [--write-passing FILE]    every test that passes
//                           [--write-excluded FILE]   every surveyed test that fails, with a reason
//
// A reason written by hand in the existing excluded file is kept while that test still fails;
// reasons the survey writes itself start with "fails:" and quote the error.
#include <QCoreApplication>
#include <QProcess>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "tests/conformance/node_test_catalog.h"
#include "tests/conformance/node_test_runner.h"

using namespace tessel::testing;

namespace {

struct SurveyOptions {
  std::string filter;
  int jobs = 3;
  std::string write_passing;
  std::string write_excluded;
};

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
    else if (a == "--write-passing")
      o.write_passing = value();
    else if (a == "--write-excluded")
      o.write_excluded = value();
    else
      throw std::runtime_error("unknown argument " + a.toStdString() +
                               " (allowed: --filter, --jobs, --write-passing, --write-excluded)");
  }
  return o;
}

// ONNX op names (capitalised identifiers) that start a line of `tessel ops` output; header words
// and Tessel's own lower-case ops are never ONNX op types, so they cannot widen the survey.
std::set<std::string> supported_ops(const std::string& tessel) {
  QProcess p;
  p.start(QString::fromStdString(tessel), {"ops"});
  if (!p.waitForFinished(60000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
    throw std::runtime_error("`" + tessel + " ops` failed: " + p.readAllStandardError().trimmed().toStdString());
  std::set<std::string> ops;
  const std::regex name("^\\s*([A-Z][A-Za-z0-9]*)\\b");
  for (const QByteArray& line : p.readAllStandardOutput().split('\n')) {
    std::smatch m;
    const std::string text = line.toStdString();
    if (std::regex_search(text, m, name)) ops.insert(m[1]);
  }
  // The importer handles these itself: Constant becomes a constant, Upsample becomes Resize.
  ops.insert("Constant");
  if (ops.count("Resize")) ops.insert("Upsample");
  return ops;
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

// A reason the survey writes itself; hand-written ones (kept while the test fails) say why in words.
std::string automatic_reason(const NodeTestResult& result) { return "fails: " + result.message; }

bool is_automatic(const std::string& reason) { return reason.rfind("fails:", 0) == 0; }

int survey(const SurveyOptions& options) {
  const std::string tessel = tessel_binary_path(TESSEL_BINARY_DIR "/app/cli/tessel");
  const std::set<std::string> ops = supported_ops(tessel);
  const std::string data_dir = node_test_data_dir();

  std::vector<NodeTest> tests;
  int unsupported = 0;
  std::map<std::string, int> blocked_by;  // missing op -> node tests it keeps out of the survey
  for (const std::string& name : list_node_tests(data_dir)) {
    if (!options.filter.empty() && name.find(options.filter) == std::string::npos) continue;
    NodeTest test = read_node_test(data_dir, name);
    bool all_supported = !test.ops.empty();
    for (const std::string& op : test.ops) all_supported = all_supported && ops.count(op);
    if (all_supported) {
      tests.push_back(std::move(test));
      continue;
    }
    ++unsupported;
    for (const std::string& op : test.ops)
      if (!ops.count(op)) ++blocked_by[op];
  }

  RunOptions run_options;
  run_options.tessel_binary = tessel;
  run_options.parallel_processes = options.jobs;
  const std::vector<NodeTestResult> results = run_node_tests(tests, run_options);

  std::vector<std::string> passing;
  std::vector<std::pair<std::string, std::string>> excluded;
  const std::map<std::string, std::string> old_reasons =
      options.write_excluded.empty() ? std::map<std::string, std::string>() : read_reasons(options.write_excluded);
  int passed = 0;
  for (size_t i = 0; i < tests.size(); ++i) {
    const NodeTest& t = tests[i];
    const NodeTestResult& r = results[i];
    std::printf("%s %-52s [%s, opset %d]%s%s\n", r.passed ? "PASS" : "FAIL", t.name.c_str(), t.element_kind.c_str(),
                t.opset, r.passed ? "" : " ", r.message.c_str());
    passed += r.passed ? 1 : 0;
    if (r.passed) {
      passing.push_back(t.name);
      continue;
    }
    auto old = old_reasons.find(t.name);
    const bool keep_old = old != old_reasons.end() && !is_automatic(old->second) && !r.passed;
    excluded.emplace_back(t.name, keep_old ? old->second : automatic_reason(r));
  }
  std::printf("\nop pass counts (passed/run):\n");
  for (const auto& [op, counts] : pass_counts_by_op(tests, results))
    std::printf("  %-28s %d/%d\n", op.c_str(), counts.first, counts.second);
  std::vector<std::pair<int, std::string>> missing;
  for (const auto& [op, count] : blocked_by) missing.emplace_back(-count, op);
  std::sort(missing.begin(), missing.end());
  std::printf("\nops not in `tessel ops`, by node tests they keep out:\n ");
  for (const auto& [count, op] : missing) std::printf(" %s=%d", op.c_str(), -count);
  std::printf("\n");
  std::printf(
      "survey: %zu node tests with only supported ops (%zu ops supported), %d passed, %zu failed; "
      "%d left out for unsupported ops\n",
      tests.size(), ops.size(), passed, tests.size() - passed, unsupported);
  std::printf("survey: %zu tests pass (passing.txt), %zu excluded (excluded.txt)\n", passing.size(), excluded.size());

  if (!options.write_passing.empty()) {
    std::ofstream out(options.write_passing);
    out << "# Node tests that must pass (ctest onnx_conformance). Regenerate with\n"
           "#   onnx_conformance_survey --write-passing tests/conformance/passing.txt "
           "--write-excluded tests/conformance/excluded.txt\n";
    for (const std::string& name : passing) out << name << "\n";
  }
  if (!options.write_excluded.empty()) {
    std::ofstream out(options.write_excluded);
    out << "# Node tests of supported ops left out of passing.txt, each with its reason.\n";
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
