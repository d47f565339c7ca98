// Selecting and growing ops: Slice, Pad, Tile, Expand, Gather, GatherElements, ScatterElements.
// Expected values are written out by hand or computed by explicit index loops in the test.
#include <cstring>
#include <limits>

#include "test_ops_shape_helpers.h"

using namespace shape_test;

namespace {

Tensor slice(const Tensor& x, std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes = {},
             std::vector<int64_t> steps = {}) {
  return run1("Slice", {},
              {x, ints(starts), ints(ends), axes.empty() ? none() : ints(axes), steps.empty() ? none() : ints(steps)});
}

Tensor pad(const Tensor& x, std::vector<int64_t> pads, const std::string& mode, Tensor value = Tensor()) {
  return run1("Pad", {{"mode", mode}}, {x, ints(pads), value});
}

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

}  // namespace

class TestShapeIndexOps : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void sliceClampsLikePython() {
    const Tensor x = iota({10});
    QCOMPARE(floats(slice(x, {2}, {5})), (std::vector<float>{2, 3, 4}));
    QCOMPARE(floats(slice(x, {-3}, {kMax})), (std::vector<float>{7, 8, 9}));  // INT64_MAX end
    QCOMPARE(floats(slice(x, {-100}, {2})), (std::vector<float>{0, 1}));      // clamped start
    QCOMPARE(floats(slice(x, {1}, {9}, {0}, {3})), (std::vector<float>{1, 4, 7}));
    QCOMPARE(floats(slice(x, {-1}, {-kMax}, {0}, {-1})), (std::vector<float>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
    QCOMPARE(floats(slice(x, {8}, {1}, {0}, {-3})), (std::vector<float>{8, 5, 2}));
    QCOMPARE(floats(slice(x, {100}, {-200}, {0}, {-1})), (std::vector<float>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
    QCOMPARE(slice(x, {100}, {200}, {0}, {-1}).shape(), (Shape{0}));  // both clamp to 9
    // Zero-size results.
    QCOMPARE(slice(x, {5}, {5}).shape(), (Shape{0}));
    QCOMPARE(slice(x, {7}, {3}).shape(), (Shape{0}));
    QCOMPARE(slice(x, {20}, {30}).shape(), (Shape{0}));
    QCOMPARE(slice(Tensor(DataType::kFloat32, {0, 3}), {0}, {1}, {0}, {-1}).shape(), (Shape{0, 3}));
  }

  void sliceSelectsAxesOfATensor() {
    const Tensor x = iota({3, 4, 5});
    const Tensor y = slice(x, {1, -2}, {kMax, 0}, {-1, 1}, {2, -1});  // axis 2: 1,3; axis 1: 2,1
    QCOMPARE(y.shape(), (Shape{3, 2, 2}));
    const int64_t rows[] = {2, 1}, cols[] = {1, 3};
    for (int64_t a = 0; a < 3; ++a)
      for (int64_t b = 0; b < 2; ++b)
        for (int64_t c = 0; c < 2; ++c)
          QCOMPARE(y.data<float>()[(a * 2 + b) * 2 + c], float((a * 4 + rows[b]) * 5 + cols[c]));
    // int32 operands work the same.
    QCOMPARE(run1("Slice", {}, {x, i32({1}, {1}), i32({1}, {2})}).shape(), (Shape{1, 4, 5}));
  }

  void sliceErrors() {
    const Tensor x = iota({3, 4});
    EXPECT_ERROR(slice(x, {0}, {1}, {0}, {0}), "0 step");
    EXPECT_ERROR(slice(x, {0, 0}, {1}), "differ in length");
    EXPECT_ERROR(slice(x, {0}, {1}, {2}), "axis 2 is out of range");
    EXPECT_ERROR(slice(x, {0, 0}, {1, 1}, {1, -1}), "repeated");
    EXPECT_ERROR(slice(x, {0, 0, 0}, {1, 1, 1}), "more entries than the input's rank");
    EXPECT_ERROR(run1("Slice", {}, {x, ints({0}), ints({1})}, 2), "must be known at compile time");
  }

  void padConstantWithValueAndCrop() {
    const Tensor x = iota({2, 3});
    // Pad 1 row on top, crop 1 column on the left, add 2 columns on the right, fill 9.
    const Tensor y = pad(x, {1, -1, 0, 2}, "constant", Tensor::scalar<float>(9.0f));
    QCOMPARE(y.shape(), (Shape{3, 4}));
    QCOMPARE(floats(y), (std::vector<float>{9, 9, 9, 9, 1, 2, 9, 9, 4, 5, 9, 9}));
    QCOMPARE(floats(pad(x, {0, 1, 0, 0}, "constant")), (std::vector<float>{0, 0, 1, 2, 0, 3, 4, 5}));  // default 0
    // Integer data pads with an integer constant.
    const Tensor xi = Tensor::from_int64s({3}, {1, 2, 3});
    QCOMPARE(pad(xi, {2, 1}, "constant", Tensor::scalar<int64_t>(-7)).to_int64s(),
             (std::vector<int64_t>{-7, -7, 1, 2, 3, -7}));
  }

  void padReflectAndEdge() {
    const Tensor x = f32({3}, {1, 2, 3});
    QCOMPARE(floats(pad(x, {2, 2}, "reflect")), (std::vector<float>{3, 2, 1, 2, 3, 2, 1}));
    QCOMPARE(floats(pad(x, {2, 2}, "edge")), (std::vector<float>{1, 1, 1, 2, 3, 3, 3}));
    QCOMPARE(floats(pad(x, {-1, 1}, "reflect")), (std::vector<float>{2, 3, 2}));
    const Tensor m = iota({2, 2});
    QCOMPARE(floats(pad(m, {1, 0, 0, 1}, "edge")), (std::vector<float>{0, 1, 1, 0, 1, 1, 2, 3, 3}));
  }

  void movesHalfFloatsBitExactly() {
    // Data movement copies bytes: f16 patterns (NaN payloads included) survive Slice, Concat, Pad.
    const uint16_t bits[] = {0x3c00, 0x7e01, 0xc000, 0x0001};
    Tensor h(DataType::kFloat16, {4});
    std::memcpy(h.raw_data(), bits, sizeof bits);
    const Tensor s = slice(h, {1}, {3});
    QCOMPARE(reinterpret_cast<const uint16_t*>(s.raw_data())[0], uint16_t{0x7e01});
    QCOMPARE(reinterpret_cast<const uint16_t*>(s.raw_data())[1], uint16_t{0xc000});
    const Tensor c = run_op("Concat", {{"axis", int64_t{0}}}, {s, h}, 1, 2).outputs[0];
    QCOMPARE(c.shape(), (Shape{6}));
    QCOMPARE(reinterpret_cast<const uint16_t*>(c.raw_data())[5], uint16_t{0x0001});
    const Tensor p = pad(h, {1, 0}, "edge");
    QCOMPARE(reinterpret_cast<const uint16_t*>(p.raw_data())[0], uint16_t{0x3c00});
    QCOMPARE(reinterpret_cast<const uint16_t*>(p.raw_data())[2], uint16_t{0x7e01});
  }

  void padErrors() {
    const Tensor x = iota({2, 3});
    EXPECT_ERROR(pad(x, {1, 1}, "constant"), "has 2 entries; an input of rank 2 needs 4");
    EXPECT_ERROR(pad(x, {-2, 0, -1, 0}, "constant"), "below zero");
    EXPECT_ERROR(pad(x, {0, 0, 0, 0}, "wrap"), "mode");
    EXPECT_ERROR(pad(x, {1, 0, 0, 0}, "constant", Tensor::scalar<int64_t>(1)), "constant_value has dtype i64");
    EXPECT_ERROR(pad(Tensor(DataType::kFloat32, {0, 2}), {1, 0, 0, 0}, "edge"), "cannot pad axis 0 of size 0");
  }

  void tileRepeats() {
    const Tensor x = iota({2, 2});
    const Tensor y = run1("Tile", {}, {x, ints({2, 3})});
    QCOMPARE(y.shape(), (Shape{4, 6}));
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 6; ++j) QCOMPARE(y.data<float>()[i * 6 + j], float((i % 2) * 2 + j % 2));
    QCOMPARE(run1("Tile", {}, {x, ints({0, 1})}).shape(), (Shape{0, 2}));
    EXPECT_ERROR(run1("Tile", {}, {x, ints({2})}), "has 1 entries for an input of rank 2");
    EXPECT_ERROR(run1("Tile", {}, {x, ints({2, -1})}), "negative");
  }

  void expandBroadcastsBothWays() {
    const Tensor x = f32({3, 1}, {1, 2, 3});
    const Tensor y = run1("Expand", {}, {x, ints({2, 1, 4})});
    QCOMPARE(y.shape(), (Shape{2, 3, 4}));  // bidirectional: the 1 in `shape` keeps the input's 3
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        for (int64_t k = 0; k < 4; ++k) QCOMPARE(y.data<float>()[(i * 3 + j) * 4 + k], float(j + 1));
    QCOMPARE(run1("Expand", {}, {x, ints({1})}).shape(), (Shape{3, 1}));
    EXPECT_ERROR(run1("Expand", {}, {x, ints({2, 2})}), "do not broadcast");
    EXPECT_ERROR(run1("Expand", {}, {x, ints({-1})}), "negative dimension");
  }

  void gatherAnyAxisNegativeAndScalarIndices() {
    const Tensor x = iota({3, 4});
    const Tensor rows = run1("Gather", {}, {x, ints({2, -3})}, 1);
    QCOMPARE(rows.shape(), (Shape{2, 4}));
    QCOMPARE(floats(rows), (std::vector<float>{8, 9, 10, 11, 0, 1, 2, 3}));
    const Tensor cols = run1("Gather", {{"axis", int64_t{-1}}}, {x, i32({2, 2}, {3, 0, -1, 1})}, 1);
    QCOMPARE(cols.shape(), (Shape{3, 2, 2}));
    for (int64_t r = 0; r < 3; ++r) {
      const int64_t picks[] = {3, 0, 3, 1};
      for (int64_t k = 0; k < 4; ++k) QCOMPARE(cols.data<float>()[r * 4 + k], float(r * 4 + picks[k]));
    }
    const Tensor scalar = run1("Gather", {{"axis", int64_t{1}}}, {x, Tensor::scalar<int64_t>(2)}, 1);
    QCOMPARE(scalar.shape(), (Shape{3}));  // a scalar index removes the axis
    QCOMPARE(floats(scalar), (std::vector<float>{2, 6, 10}));
  }

  void gatherErrors() {
    const Tensor x = iota({3, 4});
    EXPECT_ERROR(run1("Gather", {}, {x, ints({3})}), "index 3 is out of range for axis 0 of size 3");
    EXPECT_ERROR(run1("Gather", {}, {x, ints({-4})}), "index -4 is out of range");
    EXPECT_ERROR(run1("Gather", {{"axis", int64_t{2}}}, {x, ints({0})}), "axis 2 is out of range");
    EXPECT_ERROR(run1("Gather", {}, {x, f32({1}, {0})}), "indices must be int32 or int64");
    // Out-of-range indices are reported even when the gathered slices are empty.
    EXPECT_ERROR(run1("Gather", {{"axis", int64_t{1}}}, {Tensor(DataType::kFloat32, {0, 4}), ints({9})}),
                 "index 9 is out of range");
  }

  void gatherElements() {
    const Tensor x = iota({3, 3});
    const Tensor idx = Tensor::from_int64s({2, 3}, {1, 2, 0, 2, -1, 1});
    const Tensor a0 = run1("GatherElements", {}, {x, idx});
    const Tensor a1 = run1("GatherElements", {{"axis", int64_t{1}}}, {x, idx});
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        int64_t k = idx.data<int64_t>()[i * 3 + j];
        if (k < 0) k += 3;
        QCOMPARE(a0.data<float>()[i * 3 + j], x.data<float>()[k * 3 + j]);
        QCOMPARE(a1.data<float>()[i * 3 + j], x.data<float>()[i * 3 + k]);
      }
    EXPECT_ERROR(run1("GatherElements", {}, {x, ints({0, 1})}), "must have the rank of the data");
    EXPECT_ERROR(run1("GatherElements", {}, {x, Tensor::from_int64s({1, 1}, {3})}), "index 3 is out of range");
    EXPECT_ERROR(run1("GatherElements", {{"axis", int64_t{1}}}, {x, Tensor::from_int64s({4, 1}, {0, 0, 0, 0})}),
                 "exceed the data");
  }

  void scatterElements() {
    const Tensor x(DataType::kFloat32, {3, 3});
    const Tensor idx = Tensor::from_int64s({2, 3}, {1, 0, 2, 0, 2, 1});
    const Tensor upd = f32({2, 3}, {1, 2, 3, 4, 5, 6});
    const Tensor y = run1("ScatterElements", {}, {x, idx, upd}, 1);
    // Build the expected result independently: out[idx[i][j]][j] = upd[i][j].
    std::vector<float> want(9, 0.0f);
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j) want[idx.data<int64_t>()[i * 3 + j] * 3 + j] = upd.data<float>()[i * 3 + j];
    QCOMPARE(floats(y), want);
    // Duplicate indices with reduction=add accumulate; int64 stays exact.
    const Tensor base = Tensor::from_int64s({1, 3}, {int64_t{1} << 60, 0, 0});
    const Tensor dup = Tensor::from_int64s({1, 3}, {0, 0, -2});
    const Tensor add = Tensor::from_int64s({1, 3}, {1, 2, 10});
    const Tensor s =
        run1("ScatterElements", {{"axis", int64_t{1}}, {"reduction", std::string("add")}}, {base, dup, add}, 1);
    QCOMPARE(s.to_int64s(), (std::vector<int64_t>{(int64_t{1} << 60) + 3, 10, 0}));
    EXPECT_ERROR(run1("ScatterElements", {}, {x, idx, f32({1, 3}, {1, 2, 3})}), "must have the shape of the indices");
    EXPECT_ERROR(run1("ScatterElements", {{"reduction", std::string("max")}}, {x, idx, upd}), "reduction");
    EXPECT_ERROR(run1("ScatterElements", {}, {x, Tensor::from_int64s({1, 1}, {5}), f32({1, 1}, {1})}), "index 5");
  }
};

QTEST_APPLESS_MAIN(TestShapeIndexOps)
#include "test_ops_shape_index.moc"
