// Reshaping, reordering, joining and shape-valued ops: Reshape, Flatten, Squeeze, Unsqueeze,
// Transpose, DepthToSpace, SpaceToDepth, Concat, Split, Shape, Size, ConstantOfShape, Range.
// Expected values are written out by hand or computed by explicit index loops in the test.
#include "test_ops_shape_helpers.h"

using namespace shape_test;

namespace {

Shape shape_of(const std::string& op, const AttrMap& attrs, const std::vector<Tensor>& inputs) {
  return run1(op, attrs, inputs).shape();
}

}  // namespace

class TestShapeOps : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void reshapeInfersAndCopies() {
    const Tensor x = iota({2, 3, 4});
    QCOMPARE(shape_of("Reshape", {}, {x, ints({4, -1})}), (Shape{4, 6}));
    QCOMPARE(shape_of("Reshape", {}, {x, ints({0, 0, -1, 2})}), (Shape{2, 3, 2, 2}));  // 0 copies the input dim
    QCOMPARE(shape_of("Reshape", {}, {x, ints({-1})}), (Shape{24}));
    const Tensor y = run1("Reshape", {}, {x, ints({6, 4})});
    QCOMPARE(floats(y), floats(x));  // row-major order is kept
    // allowzero=1: a 0 is a real zero-size dimension.
    QCOMPARE(shape_of("Reshape", {{"allowzero", int64_t{1}}}, {Tensor(DataType::kFloat32, {0, 3}), ints({3, 0})}),
             (Shape{3, 0}));
    // Scalar ↔ [1].
    QCOMPARE(shape_of("Reshape", {}, {f32({1}, {5}), ints({})}), Shape{});
  }

  void reshapeErrors() {
    const Tensor x = iota({2, 3, 4});
    EXPECT_ERROR(run1("Reshape", {}, {x, ints({-1, -1})}), "more than one -1");
    EXPECT_ERROR(run1("Reshape", {}, {x, ints({5, -1})}), "the -1 cannot be inferred");
    EXPECT_ERROR(run1("Reshape", {}, {x, ints({5, 5})}), "24 elements");
    EXPECT_ERROR(run1("Reshape", {}, {x, ints({-2, 12})}), "invalid dimension -2");
    EXPECT_ERROR(run1("Reshape", {}, {x, ints({0, 0, 0, 0})}), "has rank 3");
    EXPECT_ERROR(run1("Reshape", {{"allowzero", int64_t{1}}}, {x, ints({0, -1})}), "both 0 and -1");
    EXPECT_ERROR(run1("Reshape", {{"allowzero", int64_t{2}}}, {x, ints({24})}), "allowzero");
    // The shape must be known when the graph is built.
    EXPECT_ERROR(run1("Reshape", {}, {x, ints({24})}, /*runtime_inputs=*/2), "must be known at compile time");
    // The node is named in the message.
    EXPECT_ERROR(run1("Reshape", {}, {x, ints({-1, -1})}), "node 'node' (Reshape)");
  }

  void flatten() {
    const Tensor x = iota({2, 3, 4, 5});
    QCOMPARE(shape_of("Flatten", {}, {x}), (Shape{2, 60}));
    QCOMPARE(shape_of("Flatten", {{"axis", int64_t{0}}}, {x}), (Shape{1, 120}));
    QCOMPARE(shape_of("Flatten", {{"axis", int64_t{4}}}, {x}), (Shape{120, 1}));
    QCOMPARE(shape_of("Flatten", {{"axis", int64_t{-1}}}, {x}), (Shape{24, 5}));
    QCOMPARE(floats(run1("Flatten", {{"axis", int64_t{2}}}, {x})), floats(x));
    EXPECT_ERROR(run1("Flatten", {{"axis", int64_t{5}}}, {x}), "axis 5 is out of range for rank 4");
    EXPECT_ERROR(run1("Flatten", {{"axis", int64_t{-5}}}, {x}), "out of range");
  }

  void squeezeAndUnsqueeze() {
    const Tensor x = iota({1, 3, 1, 2});
    QCOMPARE(shape_of("Squeeze", {}, {x}), (Shape{3, 2}));  // no axes: every size-1 axis
    QCOMPARE(shape_of("Squeeze", {}, {x, ints({-2})}), (Shape{1, 3, 2}));
    QCOMPARE(floats(run1("Squeeze", {}, {x, ints({0, 2})})), floats(x));
    EXPECT_ERROR(run1("Squeeze", {}, {x, ints({1})}), "its size is 3, not 1");
    EXPECT_ERROR(run1("Squeeze", {}, {x, ints({4})}), "axis 4 is out of range");
    EXPECT_ERROR(run1("Squeeze", {}, {x, ints({0, -4})}), "repeated");

    const Tensor y = iota({3, 2});
    QCOMPARE(shape_of("Unsqueeze", {}, {y, ints({0})}), (Shape{1, 3, 2}));
    QCOMPARE(shape_of("Unsqueeze", {}, {y, ints({-1})}), (Shape{3, 2, 1}));
    QCOMPARE(shape_of("Unsqueeze", {}, {y, ints({3, 0})}), (Shape{1, 3, 2, 1}));  // positions in the output
    QCOMPARE(shape_of("Unsqueeze", {}, {y, ints({1, 3})}), (Shape{3, 1, 2, 1}));
    QCOMPARE(shape_of("Unsqueeze", {}, {Tensor::scalar<float>(1), ints({0})}), (Shape{1}));
    QCOMPARE(floats(run1("Unsqueeze", {}, {y, ints({1})})), floats(y));
    EXPECT_ERROR(run1("Unsqueeze", {}, {y, ints({3})}), "out of range for rank 3");  // output rank 3
    QCOMPARE(shape_of("Unsqueeze", {}, {y, ints({3, 1})}), (Shape{3, 1, 2, 1}));
    EXPECT_ERROR(run1("Unsqueeze", {}, {y, ints({1, 1})}), "repeated");
    EXPECT_ERROR(run1("Unsqueeze", {}, {y}), "has 1 inputs");
  }

  void transposeMatchesIndexLoops() {
    const Tensor x = iota({2, 3, 4});
    const Tensor t = run1("Transpose", {{"perm", std::vector<int64_t>{1, 2, 0}}}, {x});
    QCOMPARE(t.shape(), (Shape{3, 4, 2}));
    for (int64_t a = 0; a < 3; ++a)
      for (int64_t b = 0; b < 4; ++b)
        for (int64_t c = 0; c < 2; ++c) QCOMPARE(t.data<float>()[(a * 4 + b) * 2 + c], float((c * 3 + a) * 4 + b));
    // Default perm reverses the axes.
    const Tensor r = run1("Transpose", {}, {x});
    QCOMPARE(r.shape(), (Shape{4, 3, 2}));
    for (int64_t a = 0; a < 4; ++a)
      for (int64_t b = 0; b < 3; ++b)
        for (int64_t c = 0; c < 2; ++c) QCOMPARE(r.data<float>()[(a * 3 + b) * 2 + c], float((c * 3 + b) * 4 + a));
    EXPECT_ERROR(run1("Transpose", {{"perm", std::vector<int64_t>{0, 1}}}, {x}),
                 "has 2 entries for an input of rank 3");
    EXPECT_ERROR(run1("Transpose", {{"perm", std::vector<int64_t>{0, 0, 1}}}, {x}), "not a permutation");
    EXPECT_ERROR(run1("Transpose", {{"perm", std::vector<int64_t>{0, 1, 3}}}, {x}), "not a permutation");
  }

  void transposeMovesAnyDtype() {
    const Tensor x = Tensor::from_int64s({2, 2}, {int64_t{1} << 62, 2, 3, -(int64_t{1} << 60)});
    const Tensor t = run1("Transpose", {}, {x});
    QCOMPARE(t.dtype(), DataType::kInt64);
    QCOMPARE(t.data<int64_t>()[1], 3);
    QCOMPARE(t.data<int64_t>()[2], int64_t{2});
    QCOMPARE(t.data<int64_t>()[0], int64_t{1} << 62);
    const bool b[] = {true, false, false, true, true, true};
    const Tensor bt = run1("Transpose", {}, {Tensor::from_values<bool>({2, 3}, b)});
    QCOMPARE(bt.shape(), (Shape{3, 2}));
    QCOMPARE(bt.data<bool>()[1], true);   // [0][1] = x[1][0]
    QCOMPARE(bt.data<bool>()[2], false);  // [1][0] = x[0][1]
    QCOMPARE(bt.data<bool>()[4], false);  // [2][0] = x[0][2]
  }

  void depthToSpaceAndBack() {
    // [1, 8, 2, 3] with blocksize 2: DCR takes the block from the channel's high part.
    const Tensor x = iota({1, 8, 2, 3});
    const Tensor dcr = run1("DepthToSpace", {{"blocksize", int64_t{2}}}, {x});
    const Tensor crd = run1("DepthToSpace", {{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}}, {x});
    QCOMPARE(dcr.shape(), (Shape{1, 2, 4, 6}));
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t h = 0; h < 4; ++h)
        for (int64_t w = 0; w < 6; ++w) {
          const int64_t bh = h % 2, bw = w % 2;
          const int64_t dcr_channel = (bh * 2 + bw) * 2 + c, crd_channel = (c * 2 + bh) * 2 + bw;
          const int64_t at = (c * 4 + h) * 6 + w;
          QCOMPARE(dcr.data<float>()[at], float((dcr_channel * 2 + h / 2) * 3 + w / 2));
          QCOMPARE(crd.data<float>()[at], float((crd_channel * 2 + h / 2) * 3 + w / 2));
        }
    // SpaceToDepth inverts DCR DepthToSpace.
    const Tensor back = run1("SpaceToDepth", {{"blocksize", int64_t{2}}}, {dcr});
    QCOMPARE(back.shape(), x.shape());
    QCOMPARE(floats(back), floats(x));
    EXPECT_ERROR(run1("DepthToSpace", {{"blocksize", int64_t{3}}}, {x}), "not divisible by blocksize^2 = 9");
    EXPECT_ERROR(run1("SpaceToDepth", {{"blocksize", int64_t{2}}}, {x}), "not divisible by blocksize 2");
    EXPECT_ERROR(run1("DepthToSpace", {{"blocksize", int64_t{2}}}, {iota({8, 2, 3})}), "must be 4-D");
    EXPECT_ERROR(run1("DepthToSpace", {{"blocksize", int64_t{2}}, {"mode", std::string("XYZ")}}, {x}), "mode");
    EXPECT_ERROR(run1("DepthToSpace", {}, {x}), "missing required attribute 'blocksize'");
  }

  void concatJoinsAlongAnyAxis() {
    const Tensor a = iota({2, 1, 3});
    Tensor b(DataType::kFloat32, {2, 2, 3});
    for (int64_t i = 0; i < b.numel(); ++i) b.data<float>()[i] = 100.0f + static_cast<float>(i);
    const Tensor c = run_op("Concat", {{"axis", int64_t{-2}}}, {a, b}, 1, 2).outputs[0];
    QCOMPARE(c.shape(), (Shape{2, 3, 3}));
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        for (int64_t k = 0; k < 3; ++k) {
          const float want = j == 0 ? a.data<float>()[i * 3 + k] : b.data<float>()[(i * 2 + j - 1) * 3 + k];
          QCOMPARE(c.data<float>()[(i * 3 + j) * 3 + k], want);
        }
    // Zero-size inputs contribute nothing.
    const Tensor e(DataType::kFloat32, {2, 0, 3});
    QCOMPARE(floats(run_op("Concat", {{"axis", int64_t{1}}}, {e, a, e}, 1, 3).outputs[0]), floats(a));
  }

  void concatErrors() {
    const Tensor a = iota({2, 3});
    EXPECT_ERROR(run_op("Concat", {{"axis", int64_t{0}}}, {a, iota({2, 3, 1})}, 1, 2), "input 1 has rank 3");
    EXPECT_ERROR(run_op("Concat", {{"axis", int64_t{0}}}, {a, iota({2, 4})}, 1, 2), "outside the concatenation axis");
    EXPECT_ERROR(run_op("Concat", {{"axis", int64_t{2}}}, {a, a}, 1, 2), "axis 2 is out of range");
    EXPECT_ERROR(run_op("Concat", {{"axis", int64_t{0}}}, {a, ints({1, 2, 3})}, 1, 2), "dtype");
    EXPECT_ERROR(run_op("Concat", {}, {a, a}, 1, 2), "missing required attribute 'axis'");
  }

  void splitEqualAndVariable() {
    const Tensor x = iota({2, 6});
    const OpRun eq = run_op("Split", {{"axis", int64_t{1}}}, {x}, 3);
    QCOMPARE(eq.outputs.size(), size_t{3});
    for (int k = 0; k < 3; ++k) {
      QCOMPARE(eq.outputs[k].shape(), (Shape{2, 2}));
      QCOMPARE(floats(eq.outputs[k]),
               (std::vector<float>{float(2 * k), float(2 * k + 1), float(6 + 2 * k), float(7 + 2 * k)}));
    }
    const OpRun var = run_op("Split", {{"axis", int64_t{-1}}}, {x, ints({1, 0, 5})}, 3);
    QCOMPARE(var.outputs[0].shape(), (Shape{2, 1}));
    QCOMPARE(var.outputs[1].shape(), (Shape{2, 0}));
    QCOMPARE(floats(var.outputs[0]), (std::vector<float>{0, 6}));
    QCOMPARE(floats(var.outputs[2]), (std::vector<float>{1, 2, 3, 4, 5, 7, 8, 9, 10, 11}));
    EXPECT_ERROR(run_op("Split", {}, {x}, 4), "cannot be split into 4 equal parts");
    EXPECT_ERROR(run_op("Split", {{"axis", int64_t{1}}}, {x}, 4), "cannot be split into 4 equal parts");
    EXPECT_ERROR(run_op("Split", {{"axis", int64_t{1}}}, {x, ints({1, 2})}, 3), "has 2 entries for 3 outputs");
    EXPECT_ERROR(run_op("Split", {{"axis", int64_t{1}}}, {x, ints({1, 2})}, 2), "sums to 3");
    EXPECT_ERROR(run_op("Split", {{"axis", int64_t{1}}}, {x, ints({7, -1})}, 2), "negative length");
  }

  void shapeAndSizeAreKnownAtCompileTime() {
    const OpRun r = run_op("Shape", {}, {iota({2, 3, 4})});
    const Value& out = r.graph.value(r.graph.outputs[0]);
    QVERIFY(out.value.defined());  // though the input is only known at run time
    QCOMPARE(out.value.to_int64s(), (std::vector<int64_t>{2, 3, 4}));
    QCOMPARE(r.outputs[0].to_int64s(), (std::vector<int64_t>{2, 3, 4}));
    auto shape_slice = [](int64_t start, int64_t end) {
      return run1("Shape", {{"start", start}, {"end", end}}, {iota({2, 3, 4, 5})}).to_int64s();
    };
    QCOMPARE(shape_slice(1, 3), (std::vector<int64_t>{3, 4}));
    QCOMPARE(shape_slice(-1, 100), (std::vector<int64_t>{5}));
    QCOMPARE(shape_slice(-10, -2), (std::vector<int64_t>{2, 3}));
    QCOMPARE(shape_slice(3, 1), std::vector<int64_t>{});
    const OpRun s = run_op("Size", {}, {iota({2, 3, 4})});
    QCOMPARE(s.graph.value(s.graph.outputs[0]).value.to_int64s(), std::vector<int64_t>{24});
    QCOMPARE(s.outputs[0].shape(), Shape{});
    QCOMPARE(s.outputs[0].data<int64_t>()[0], 24);
  }

  void constantOfShape() {
    const Tensor z = run1("ConstantOfShape", {}, {ints({2, 3})}, 0);
    QCOMPARE(z.dtype(), DataType::kFloat32);
    QCOMPARE(floats(z), std::vector<float>(6, 0.0f));
    const Tensor seven = run1("ConstantOfShape", {{"value", Tensor::from_int64s({1}, {7})}}, {ints({4})}, 0);
    QCOMPARE(seven.dtype(), DataType::kInt64);
    QCOMPARE(seven.to_int64s(), std::vector<int64_t>(4, 7));
    QCOMPARE(run1("ConstantOfShape", {}, {ints({})}, 0).shape(), Shape{});  // empty shape: a scalar
    QCOMPARE(run1("ConstantOfShape", {}, {ints({0, 5})}, 0).numel(), 0);
    EXPECT_ERROR(run1("ConstantOfShape", {}, {ints({-1})}, 0), "negative dimension");
    EXPECT_ERROR(run1("ConstantOfShape", {{"value", ints({1, 2})}}, {ints({2})}, 0), "one-element tensor");
    EXPECT_ERROR(run1("ConstantOfShape", {}, {ints({2})}, 1), "must be known at compile time");
  }

  void rangeCountsExactly() {
    auto range_i64 = [](int64_t s, int64_t l, int64_t d) {
      return run1("Range", {}, {Tensor::scalar<int64_t>(s), Tensor::scalar<int64_t>(l), Tensor::scalar<int64_t>(d)}, 0);
    };
    QCOMPARE(range_i64(0, 5, 1).to_int64s(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
    QCOMPARE(range_i64(10, 4, -3).to_int64s(), (std::vector<int64_t>{10, 7}));
    QCOMPARE(range_i64(0, 5, -1).numel(), 0);
    // Exact at the top of the int64 range (no trip through double).
    const int64_t big = int64_t{1} << 60;
    QCOMPARE(range_i64(big + 1, big + 4, 2).to_int64s(), (std::vector<int64_t>{big + 1, big + 3}));
    const Tensor f =
        run1("Range", {}, {Tensor::scalar<float>(1.0f), Tensor::scalar<float>(2.0f), Tensor::scalar<float>(0.25f)}, 0);
    QCOMPARE(floats(f), (std::vector<float>{1.0f, 1.25f, 1.5f, 1.75f}));
    EXPECT_ERROR(range_i64(0, 5, 0), "delta must not be 0");
    EXPECT_ERROR(
        run1("Range", {}, {Tensor::scalar<int64_t>(0), Tensor::scalar<int32_t>(5), Tensor::scalar<int64_t>(1)}, 0),
        "limit has dtype i32");
    EXPECT_ERROR(
        run1("Range", {}, {Tensor::scalar<uint8_t>(0), Tensor::scalar<uint8_t>(5), Tensor::scalar<uint8_t>(1)}, 0),
        "Range takes");
    // The length depends on the values, so they must be known when the graph is built.
    EXPECT_ERROR(
        run1("Range", {}, {Tensor::scalar<int64_t>(0), Tensor::scalar<int64_t>(5), Tensor::scalar<int64_t>(1)}, 1),
        "must be known at compile time");
  }

  void shapeChainFeedsReshapeAtCompileTime() {
    // The exporters' pattern: Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])).
    Graph g;
    const ValueId x = g.add_input("x", {DataType::kFloat32, {2, 3, 4}});
    auto node = [&](const char* op, AttrMap attrs, std::vector<ValueId> in) {
      return g.add_node1(std::string(op) + std::to_string(g.nodes.size()), get_op(op),
                         get_op(op).parse_attrs(op, attrs), std::move(in));
    };
    const ValueId shape = node("Shape", {}, {x});
    const ValueId batch = node("Gather", {}, {shape, g.add_constant("zero", Tensor::scalar<int64_t>(0))});
    const ValueId batch1 = node("Unsqueeze", {}, {batch, g.add_constant("axes", ints({0}))});
    const ValueId target = node("Concat", {{"axis", int64_t{0}}}, {batch1, g.add_constant("rest", ints({-1}))});
    g.outputs = {node("Reshape", {}, {x, target})};
    infer_types(g);
    QCOMPARE(g.value(target).value.to_int64s(), (std::vector<int64_t>{2, -1}));
    QCOMPARE(g.value(g.outputs[0]).type.shape, (Shape{2, 12}));
    const Tensor in = iota({2, 3, 4});
    QCOMPARE(floats(run_reference(g, {in})[0]), floats(in));
  }

  void patternKindsAndFlops() {
    QCOMPARE(get_op("Reshape").pattern, PatternKind::kInjective);
    QCOMPARE(get_op("Expand").pattern, PatternKind::kBroadcast);
    QCOMPARE(get_op("Resize").pattern, PatternKind::kInjective);
    QCOMPARE(get_op("layout_transform").pattern, PatternKind::kInjective);
    QCOMPARE(get_op("Shape").pattern, PatternKind::kOpaque);
    QCOMPARE(get_op("Reshape").shape_inputs, std::vector<int>{1});
    const OpRun r = run_op("Transpose", {}, {iota({2, 3})});
    QCOMPARE(node_flops(r.graph, r.graph.nodes[0]), 0);
  }
};

QTEST_APPLESS_MAIN(TestShapeOps)
#include "test_ops_shape.moc"
