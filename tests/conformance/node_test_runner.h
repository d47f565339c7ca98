#pragma once
// Runs node tests through the `tessel` binary, a few processes at a time, and checks every
// output_K.pb it writes against the expected one (onnx_tensor_compare.h).
//
//   tessel run <test>/model.onnx --inputs <test>/test_data_set_0 --out-dir <tmp> --target ref
//        │                                                              │
//        └── exit status + last stderr line               output_K.pb ──┴─▶ compare_tensors
//
// Needs a QCoreApplication (QProcess is driven by its event loop).
#include <map>
#include <string>
#include <vector>

#include "tests/conformance/node_test_catalog.h"

namespace tessel::testing {

struct NodeTestResult {
  std::string name;
  bool passed = false;
  // Empty when passed; otherwise one line: the tool's error, a crash or timeout, or the first
  // output that differs ("output_0: element [1,2] is 0.5, expected 0.25 (...)").
  std::string message;
};

struct RunOptions {
  std::string tessel_binary;
  int parallel_processes = 3;
  int timeout_ms = 60000;  // per test
  std::string target = "ref";  // --target of every `tessel run`
};

// Results in the order of `tests`.
std::vector<NodeTestResult> run_node_tests(const std::vector<NodeTest>& tests, const RunOptions& options);

// Compares <expected_dir>/output_K.pb with <actual_dir>/output_K.pb for K < count; empty when all
// match, else the first difference as one line.
std::string compare_output_files(const std::string& expected_dir, const std::string& actual_dir, int count);

// Per op: {tests that passed, tests run}, counting a test once for each op its model uses.
std::map<std::string, std::pair<int, int>> pass_counts_by_op(const std::vector<NodeTest>& tests,
                                                             const std::vector<NodeTestResult>& results);

// `tessel`'s path: $TESSEL_BINARY if set, else the given default (BUILD/app/cli/tessel, in the build tree).
std::string tessel_binary_path(const std::string& built_default);

}  // namespace tessel::testing
