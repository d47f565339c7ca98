#pragma once
// The ONNX backend tests as a catalog: each test's folder, the ops its model uses (with
// sub-graphs), its opset, and the kind of element types its tensors have. Read with the ONNX
// protobuf classes alone.
//
//   <data>/node/test_add_bcast/model.onnx                     named "test_add_bcast"
//             /test_add_bcast/test_data_set_0/input_0.pb, input_1.pb, output_0.pb
//   <data>/pytorch-converted/test_Conv2d/model.onnx            named "pytorch-converted/test_Conv2d"
//
// The node tests keep their bare names; the tests of the other folders (kTestDirectories) are
// named with their folder in front.
#include <set>
#include <string>
#include <vector>

namespace tessel::testing {

// The folders of the ONNX test data that hold single-model tests, "node" first.
inline constexpr const char* kTestDirectories[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};

struct NodeTest {
  std::string name;           // "test_add_bcast", "simple/test_sign_model"
  std::string directory;      // "node", "pytorch-converted", ...
  std::string folder;         // absolute path of the test's folder
  std::set<std::string> ops;  // op types; ops of other domains are prefixed "domain."
  int opset = 0;              // of the default domain
  // "float32" when every floating tensor of the graph's inputs and outputs is float32 (integer and
  // bool tensors allowed); otherwise the first other kind met: "float64", "float16", "bfloat16",
  // "string", "complex", "uint16", "uint32", "uint64", "sequence/optional/map".
  std::string element_kind;
  int expected_outputs = 0;  // output_K.pb files in test_data_set_0
};

// Where the node tests live: $TESSEL_ONNX_NODE_TESTS if set, else the libonnx-testdata folder.
// The other test folders are its siblings.
std::string node_test_data_dir();

// Reads one test's model; `name` as list_all_tests gives it. Throws std::runtime_error naming the
// file when it cannot be parsed.
NodeTest read_node_test(const std::string& data_dir, const std::string& name);

// Every test_* folder of data_dir with a model.onnx, sorted by name.
std::vector<std::string> list_node_tests(const std::string& data_dir);

// The node tests, then the tests of the other kTestDirectories beside data_dir (those that exist),
// each named "<folder>/<test>".
std::vector<std::string> list_all_tests(const std::string& data_dir);

// Names in a list file: one per line; '#' starts a comment; text after the first blank on a line
// (a reason, in excluded.txt) is ignored. Throws std::runtime_error when the file cannot be read.
std::vector<std::string> read_test_list(const std::string& path);

}  // namespace tessel::testing
