#pragma once
// Small ONNX models written in the tests themselves, through the ONNX protobuf classes, so each
// test shows the model it imports next to what it expects.
#include <onnx/onnx_pb.h>

#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "core/frontend/onnx_import.h"
#include "core/frontend/onnx_tensor.h"
#include "core/runtime/reference_executor.h"
#include "core/support/error.h"

namespace tessel::testing {

// A dim is a number or a symbolic name.
using Dim = std::variant<int64_t, std::string>;

class OnnxModel {
 public:
  explicit OnnxModel(int64_t opset = 17, int64_t ir_version = 8) {
    model_.set_ir_version(ir_version);
    model_.set_producer_name("tessel-tests");
    auto* imp = model_.add_opset_import();
    imp->set_domain("");
    imp->set_version(opset);
    model_.mutable_graph()->set_name("test_graph");
  }

  onnx::ModelProto& proto() { return model_; }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }

  OnnxModel& input(const std::string& name, DataType dtype, const std::vector<Dim>& dims) {
    describe(graph().add_input(), name, dtype, &dims);
    return *this;
  }
  OnnxModel& output(const std::string& name, DataType dtype) {
    describe(graph().add_output(), name, dtype, nullptr);
    return *this;
  }
  OnnxModel& initializer(const std::string& name, const Tensor& value) {
    tensor_to_onnx(value, name, graph().add_initializer());
    return *this;
  }
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    onnx::NodeProto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }

  std::string bytes() const { return model_.SerializeAsString(); }
  // Writes the model to DIR/NAME and returns the path.
  std::string save(const QTemporaryDir& dir, const std::string& name = "model.onnx") const {
    const std::string path = dir.filePath(QString::fromStdString(name)).toStdString();
    write_file(path, bytes());
    return path;
  }

  static void write_file(const std::string& path, const std::string& data) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
  }

 private:
  static void describe(onnx::ValueInfoProto* v, const std::string& name, DataType dtype, const std::vector<Dim>* dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(dtype_to_onnx(dtype));
    auto* shape = tt->mutable_shape();  // the checker wants a shape field; no dims given: left empty
    if (!dims) return;
    for (const Dim& d : *dims) {
      auto* dim = shape->add_dim();
      if (std::holds_alternative<int64_t>(d))
        dim->set_dim_value(std::get<int64_t>(d));
      else
        dim->set_dim_param(std::get<std::string>(d));
    }
  }

  onnx::ModelProto model_;
};

inline onnx::AttributeProto* add_attr(onnx::NodeProto& n, const std::string& name,
                                      onnx::AttributeProto::AttributeType t) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(t);
  return a;
}
inline void attr_int(onnx::NodeProto& n, const std::string& name, int64_t v) {
  add_attr(n, name, onnx::AttributeProto::INT)->set_i(v);
}
inline void attr_float(onnx::NodeProto& n, const std::string& name, float v) {
  add_attr(n, name, onnx::AttributeProto::FLOAT)->set_f(v);
}
inline void attr_string(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  add_attr(n, name, onnx::AttributeProto::STRING)->set_s(v);
}
inline void attr_ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = add_attr(n, name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
inline void attr_floats(onnx::NodeProto& n, const std::string& name, const std::vector<float>& v) {
  auto* a = add_attr(n, name, onnx::AttributeProto::FLOATS);
  for (float x : v) a->add_floats(x);
}
inline void attr_tensor(onnx::NodeProto& n, const std::string& name, const Tensor& t) {
  tensor_to_onnx(t, "", add_attr(n, name, onnx::AttributeProto::TENSOR)->mutable_t());
}

inline Tensor f32(Shape shape, std::vector<float> v) { return Tensor::from_values<float>(std::move(shape), v); }
inline Tensor i64(Shape shape, std::vector<int64_t> v) { return Tensor::from_int64s(std::move(shape), v); }

// Values 0.5, -1.25, 2, ... that differ everywhere, for inputs.
inline Tensor ramp(Shape shape, float scale = 0.37f) {
  Tensor t(DataType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, ((i * 7) % 11 - 5) * scale);
  return t;
}

// The message of the tessel::Error that `fn` throws; fails the test when it throws nothing or
// anything else.
template <class F>
QString error_of(F&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  } catch (const std::exception& e) {
    return "NOT A tessel::Error: " + QString::fromStdString(e.what());
  }
  return "NO ERROR";
}

inline void compare_tensors(const Tensor& got, const Tensor& want, double tolerance = 1e-5) {
  QCOMPARE(got.dtype(), want.dtype());
  QCOMPARE(shape_str(got.shape()), shape_str(want.shape()));
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double a = got.get_double(i), b = want.get_double(i);
    if (std::abs(a - b) > tolerance * (1 + std::abs(b)))
      QFAIL(qPrintable(QString("element %1: got %2, want %3").arg(i).arg(a).arg(b)));
  }
}

}  // namespace tessel::testing
