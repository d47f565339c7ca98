// If, Loop and Scan (core/graph/ops/control_flow.h): bodies built by hand that read outer values,
// the branch If takes, Loop's carried values, scan outputs and early exit, Scan's axes and
// directions, the errors that name the outer and the inner node, and the ONNX node tests run
// in-process through the importer and the reference executor.
#include <QtTest>
#include <filesystem>

#include "core/frontend/onnx_import.h"
#include "core/graph/ops/control_flow.h"
#include "test_ops_nn_util.h"

using namespace tessel;
using namespace nn_test;
namespace fs = std::filesystem;

namespace {

const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

const char* kNodeTestNames[] = {
    "if", "loop11", "scan9_sum", "range_float_type_positive_delta_expanded", "range_int32_type_negative_delta_expanded",
};

Attrs attrs_of(const std::string& op, const AttrMap& map) { return get_op(op).parse_attrs(op, map); }

ValueId node1(Graph& g, const std::string& name, const std::string& op, std::vector<ValueId> inputs,
              const AttrMap& map = {}) {
  return g.add_node1(name, get_op(op), attrs_of(op, map), std::move(inputs));
}

// then: x + x, else: -x; both read x from outside.
std::pair<GraphPtr, GraphPtr> if_branches() {
  Graph then_body, else_body;
  then_body.name = "then_body";
  else_body.name = "else_body";
  const ValueId tx = then_body.add_input("x", {});
  then_body.outputs = {node1(then_body, "double", "Add", {tx, tx})};
  const ValueId ex = else_body.add_input("x", {});
  else_body.outputs = {node1(else_body, "negate", "Neg", {ex})};
  then_body.captured_inputs = else_body.captured_inputs = 1;
  return {std::make_shared<const Graph>(then_body), std::make_shared<const Graph>(else_body)};
}

// A graph with one control-flow node over `inputs` (a defined Tensor in `known` makes that input a
// constant, e.g. a trip count); returns the graph, typed.
Graph control_flow_graph(const std::string& op, const AttrMap& map, const std::vector<TensorType>& inputs,
                         const std::vector<Tensor>& known, int num_outputs) {
  Graph g;
  std::vector<ValueId> ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i < known.size() && known[i].defined())
      ids.push_back(g.add_constant("c" + std::to_string(i), known[i]));
    else if (inputs[i].shape.empty() && inputs[i].dtype == DataType::kUInt8)
      ids.push_back(kNoValue);  // absent
    else
      ids.push_back(g.add_input("in" + std::to_string(i), inputs[i]));
  }
  g.outputs = g.add_node("cf", get_op(op), attrs_of(op, map), ids, num_outputs);
  infer_types(g);
  return g;
}

const TensorType kAbsent{DataType::kUInt8, {}};

// Loop body: (iter, cond, acc f32[2]) -> (cond unchanged, acc + iter, acc + iter).
GraphPtr accumulate_body() {
  Graph b;
  b.name = "accumulate";
  const ValueId iter = b.add_input("iter", {DataType::kInt64, {}});
  const ValueId cond = b.add_input("cond", {DataType::kBool, {}});
  const ValueId acc = b.add_input("acc", {DataType::kFloat32, {2}});
  const ValueId as_float = node1(b, "to_float", "Cast", {iter}, {{"to", int64_t{1}}});
  const ValueId next = node1(b, "add", "Add", {acc, as_float});
  b.outputs = {node1(b, "pass_cond", "Identity", {cond}), next, node1(b, "record", "Identity", {next})};
  return std::make_shared<const Graph>(b);
}

// Loop body: (iter, cond, count i64[]) -> (count + 1 < limit, count + 1), limit read from outside.
GraphPtr count_to_limit_body() {
  Graph b;
  b.name = "count";
  b.add_input("iter", {DataType::kInt64, {}});
  b.add_input("cond", {DataType::kBool, {}});
  const ValueId count = b.add_input("count", {DataType::kInt64, {}});
  const ValueId limit = b.add_input("limit", {});
  b.captured_inputs = 1;
  const ValueId one = b.add_constant("one", Tensor::scalar<int64_t>(1));
  const ValueId next = node1(b, "increment", "Add", {count, one});
  b.outputs = {node1(b, "below", "Less", {next, limit}), next};
  return std::make_shared<const Graph>(b);
}

std::string run_node_test(const std::string& name) {
  const fs::path dir = kNodeTests / ("test_" + name);
  const std::string model = (dir / "model.onnx").string();
  ImportOptions options;
  std::vector<Tensor> feeds;
  const std::vector<OnnxInputInfo> inputs = onnx_runtime_inputs(model);
  for (size_t k = 0; k < inputs.size(); ++k) {
    feeds.push_back(read_tensor_pb((dir / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb")).string()));
    if (inputs[k].feeds_shape_operand) options.bound_inputs.emplace(inputs[k].name, feeds.back());
  }
  const std::vector<Tensor> outputs = run_reference(import_onnx(model, options), feeds);
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Tensor want = read_tensor_pb((dir / "test_data_set_0" / ("output_" + std::to_string(k) + ".pb")).string());
    if (want.shape() != outputs[k].shape())
      return "output " + std::to_string(k) + " has shape " + shape_str(outputs[k].shape()) + ", expected " +
             shape_str(want.shape());
    for (int64_t i = 0; i < want.numel(); ++i) {
      const double g = outputs[k].get_double(i), w = want.get_double(i);
      if (std::abs(g - w) > 1e-6 + 1e-4 * std::abs(w))
        return "output " + std::to_string(k) + " element " + std::to_string(i) + " is " + std::to_string(g) +
               ", expected " + std::to_string(w);
    }
  }
  return {};
}

void expect_error(const std::function<void()>& fn, const std::vector<QString>& parts) {
  QString got;
  try {
    fn();
  } catch (const Error& e) {
    got = QString::fromStdString(e.what());
  }
  for (const QString& want : parts) QVERIFY2(got.contains(want), qPrintable("got: " + got + "\nwanted: " + want));
}

}  // namespace

class TestOpsControlFlow : public QObject {
  Q_OBJECT

 private slots:
  void if_runs_the_branch_cond_picks_reading_outer_values() {
    auto [then_body, else_body] = if_branches();
    const AttrMap map = {{"then_branch", then_body}, {"else_branch", else_body}};
    const Graph g = control_flow_graph("If", map, {{DataType::kBool, {}}, {DataType::kFloat32, {3}}}, {}, 1);
    QCOMPARE(g.value(g.outputs[0]).type, (TensorType{DataType::kFloat32, {3}}));
    const Tensor x = f32({3}, {1, -2, 3});
    const Tensor doubled = run_reference(g, {Tensor::scalar<bool>(true), x})[0];
    const Tensor negated = run_reference(g, {Tensor::scalar<bool>(false), x})[0];
    for (int64_t i = 0; i < 3; ++i) {
      QCOMPARE(doubled.get_double(i), 2 * x.get_double(i));
      QCOMPARE(negated.get_double(i), -x.get_double(i));
    }
  }

  void if_branches_of_different_types_need_a_known_cond() {
    Graph wide;
    wide.name = "wide";
    wide.outputs = {wide.add_constant("w", f32({4}, {1, 2, 3, 4}))};
    Graph narrow;
    narrow.name = "narrow";
    narrow.outputs = {narrow.add_constant("n", f32({2}, {5, 6}))};
    const AttrMap map = {{"then_branch", std::make_shared<const Graph>(wide)},
                         {"else_branch", std::make_shared<const Graph>(narrow)}};
    expect_error(
        [&] {
          control_flow_graph("If", map, {{DataType::kBool, {}}}, {}, 1);
        },
        {"node 'cf' (If)", "f32[4] from then_branch and f32[2] from else_branch"});
    const Graph known = control_flow_graph("If", map, {{DataType::kBool, {}}}, {Tensor::scalar<bool>(false)}, 1);
    QCOMPARE(known.value(known.outputs[0]).type.shape, (Shape{2}));
  }

  void loop_carries_state_and_stacks_scan_outputs() {
    const Graph g = control_flow_graph("Loop", {{"body", accumulate_body()}},
                                       {{DataType::kInt64, {}}, kAbsent, {DataType::kFloat32, {2}}},
                                       {Tensor::scalar<int64_t>(4)}, 2);
    QCOMPARE(g.value(g.outputs[1]).type.shape, (Shape{4, 2}));
    const auto out = run_reference(g, {f32({2}, {0, 10})});
    QCOMPARE(out[0].get_double(0), 6.0);  // 0+1+2+3
    QCOMPARE(out[0].get_double(1), 16.0);
    const double running[] = {0, 1, 3, 6};
    for (int i = 0; i < 4; ++i) {
      QCOMPARE(out[1].get_double(2 * i), running[i]);
      QCOMPARE(out[1].get_double(2 * i + 1), 10 + running[i]);
    }
  }

  void inference_runs_a_loop_of_constants_through_the_handed_down_executor() {
    // Every input known: type inference computes the outputs with the reference kernel, whose body
    // runs through the slot the reference executor fills when libtessel_core loads. A program that
    // only imports a model reaches this before it runs any graph.
    const std::vector<TensorType> types = {{DataType::kInt64, {}}, kAbsent, {DataType::kFloat32, {2}}};
    const std::vector<Tensor> known = {Tensor::scalar<int64_t>(4), Tensor(), f32({2}, {0, 10})};
    const Graph g = control_flow_graph("Loop", {{"body", accumulate_body()}}, types, known, 2);
    const Tensor& final_acc = g.value(g.outputs[0]).value;
    QVERIFY(final_acc.defined());
    QCOMPARE(final_acc.get_double(0), 6.0);  // 0+1+2+3
    QCOMPARE(final_acc.get_double(1), 16.0);

    // With the slot empty the kernel says what is missing instead of crashing.
    ops::set_subgraph_runner(nullptr);
    expect_error([&] { control_flow_graph("Loop", {{"body", accumulate_body()}}, types, known, 2); },
                 {"body 'accumulate'", "no executor to run it"});
    ops::set_subgraph_runner(&run_reference_values);
  }

  void loop_stops_when_the_body_says_so() {
    // M = 100, the body counts while count + 1 < limit, limit read from the enclosing graph.
    const Graph g = control_flow_graph(
        "Loop", {{"body", count_to_limit_body()}},
        {{DataType::kInt64, {}}, {DataType::kBool, {}}, {DataType::kInt64, {}}, {DataType::kInt64, {}}},
        {Tensor::scalar<int64_t>(100)}, 1);
    const auto out =
        run_reference(g, {Tensor::scalar<bool>(true), Tensor::scalar<int64_t>(0), Tensor::scalar<int64_t>(5)});
    QCOMPARE(out[0].get_double(0), 5.0);  // iterations give 1 (1<5), 2, 3, 4, 5 (5<5 is false: stop)
    const auto none =
        run_reference(g, {Tensor::scalar<bool>(false), Tensor::scalar<int64_t>(0), Tensor::scalar<int64_t>(5)});
    QCOMPARE(none[0].get_double(0), 0.0);  // cond false from the start: the body never runs
  }

  void loop_scan_outputs_need_a_known_trip_count() {
    // The same counting body, with its carried value recorded: the body computes its condition.
    Graph b = *count_to_limit_body();
    b.outputs.push_back(b.outputs[1]);
    const GraphPtr body = std::make_shared<const Graph>(b);
    expect_error(
        [&] {
          control_flow_graph("Loop", {{"body", body}},
                             {{DataType::kInt64, {}}, kAbsent, {DataType::kInt64, {}}, {DataType::kInt64, {}}},
                             {Tensor::scalar<int64_t>(3)}, 2);
        },
        {"node 'cf' (Loop)", "number of iterations is known only at run time"});
  }

  void loop_carried_value_must_keep_its_type() {
    Graph b;
    b.name = "grows";
    b.add_input("iter", {DataType::kInt64, {}});
    const ValueId cond = b.add_input("cond", {DataType::kBool, {}});
    const ValueId v = b.add_input("v", {DataType::kFloat32, {2}});
    b.outputs = {cond, node1(b, "grow", "Concat", {v, v}, {{"axis", int64_t{0}}})};
    expect_error(
        [&] {
          control_flow_graph("Loop", {{"body", std::make_shared<const Graph>(b)}},
                             {{DataType::kInt64, {}}, kAbsent, {DataType::kFloat32, {2}}}, {Tensor::scalar<int64_t>(3)},
                             1);
        },
        {"carried value 0 ('v') enters the body as f32[2] and leaves it as f32[4]"});
  }

  void a_body_error_names_the_outer_and_the_inner_node() {
    // The body adds its f32[2] carried value to an f32[3] value it reads from outside.
    Graph b;
    b.name = "bad_body";
    b.add_input("iter", {DataType::kInt64, {}});
    const ValueId cond = b.add_input("cond", {DataType::kBool, {}});
    const ValueId v = b.add_input("v", {DataType::kFloat32, {2}});
    const ValueId outer = b.add_input("outer", {});
    b.captured_inputs = 1;
    b.outputs = {cond, node1(b, "mismatch", "Add", {v, outer})};
    expect_error(
        [&] {
          control_flow_graph("Loop", {{"body", std::make_shared<const Graph>(b)}},
                             {{DataType::kInt64, {}}, kAbsent, {DataType::kFloat32, {2}}, {DataType::kFloat32, {3}}},
                             {Tensor::scalar<int64_t>(3)}, 1);
        },
        {"node 'cf' (Loop)", "body 'bad_body'", "node 'mismatch' (Add)"});
  }

  void a_body_failing_at_run_time_names_the_iteration() {
    // Gather with an index carried in from outside: out of range only when run.
    Graph b;
    b.name = "gather_body";
    b.add_input("iter", {DataType::kInt64, {}});
    const ValueId cond = b.add_input("cond", {DataType::kBool, {}});
    b.add_input("v", {DataType::kFloat32, {1}});
    const ValueId index = b.add_input("index", {});
    b.captured_inputs = 1;
    const ValueId table = b.add_constant("table", f32({3}, {1, 2, 3}));
    b.outputs = {cond, node1(b, "pick", "Gather", {table, index})};
    const Graph g =
        control_flow_graph("Loop", {{"body", std::make_shared<const Graph>(b)}},
                           {{DataType::kInt64, {}}, kAbsent, {DataType::kFloat32, {1}}, {DataType::kInt64, {1}}},
                           {Tensor::scalar<int64_t>(2)}, 1);
    const Tensor bad = Tensor::from_values<int64_t>({1}, std::vector<int64_t>{7});
    expect_error(
        [&] {
          run_reference(g, {f32({1}, {0}), bad});
        },
        {"node 'cf' (Loop)", "iteration 0", "node 'pick' (Gather)"});
  }

  void scan_walks_an_axis_in_either_direction() {
    // Running sums over the columns of x [2,3], read last column first; outputs stacked on axis 1.
    Graph b;
    b.name = "running_sum";
    const ValueId sum = b.add_input("sum", {DataType::kFloat32, {2}});
    const ValueId column = b.add_input("column", {DataType::kFloat32, {2}});
    const ValueId next = node1(b, "add", "Add", {sum, column});
    b.outputs = {next, node1(b, "record", "Identity", {next})};
    const AttrMap map = {{"body", std::make_shared<const Graph>(b)},
                         {"num_scan_inputs", int64_t{1}},
                         {"scan_input_axes", std::vector<int64_t>{1}},
                         {"scan_input_directions", std::vector<int64_t>{1}},
                         {"scan_output_axes", std::vector<int64_t>{-1}}};
    const Graph g = control_flow_graph("Scan", map, {{DataType::kFloat32, {2}}, {DataType::kFloat32, {2, 3}}}, {}, 2);
    QCOMPARE(g.value(g.outputs[1]).type.shape, (Shape{2, 3}));
    const auto out = run_reference(g, {f32({2}, {0, 100}), f32({2, 3}, {1, 2, 3, 4, 5, 6})});
    QCOMPARE(out[0].get_double(0), 6.0);
    QCOMPARE(out[0].get_double(1), 115.0);
    // Step 0 reads column 2, step 1 column 1, step 2 column 0; slices land at steps 0, 1, 2.
    const double want[] = {3, 5, 6, 106, 111, 115};
    for (int i = 0; i < 6; ++i) QCOMPARE(out[1].get_double(i), want[i]);

    AttrMap reversed_output = map;
    reversed_output["scan_output_directions"] = std::vector<int64_t>{1};
    const Graph r =
        control_flow_graph("Scan", reversed_output, {{DataType::kFloat32, {2}}, {DataType::kFloat32, {2, 3}}}, {}, 2);
    const auto rout = run_reference(r, {f32({2}, {0, 100}), f32({2, 3}, {1, 2, 3, 4, 5, 6})});
    const double rwant[] = {6, 5, 3, 115, 111, 106};
    for (int i = 0; i < 6; ++i) QCOMPARE(rout[1].get_double(i), rwant[i]);
  }

  void subgraphs_show_in_attributes_and_blockers() {
    auto [then_body, else_body] = if_branches();
    const Attrs a = attrs_of("If", {{"then_branch", then_body}, {"else_branch", else_body}});
    QCOMPARE(a->subgraphs().size(), size_t{2});
    const std::string text = a->print_non_default();
    QVERIFY2(text.find("then_branch=graph 'then_body' (reads x) -> (double), 1 node") != std::string::npos,
             text.c_str());
    expect_error([&] { attrs_of("Loop", {}); }, {"Loop: missing required attribute 'body'"});
    expect_error([&] { attrs_of("Loop", {{"body", int64_t{3}}}); }, {"attribute 'body': expected graph, got int"});
  }

  void node_tests_data() {
    QTest::addColumn<QString>("name");
    for (const char* name : kNodeTestNames) QTest::newRow(name) << QString(name);
  }
  void node_tests() {
    QFETCH(QString, name);
    if (!fs::exists(kNodeTests)) QSKIP("libonnx-testdata is not installed");
    std::string failure;
    try {
      failure = run_node_test(name.toStdString());
    } catch (const Error& e) {
      failure = e.what();
    }
    QVERIFY2(failure.empty(), failure.c_str());
  }
};

QTEST_APPLESS_MAIN(TestOpsControlFlow)
#include "test_ops_control_flow.moc"
