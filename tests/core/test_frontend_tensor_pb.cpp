// ONNX TensorProto files (input_K.pb / output_K.pb): a round trip for every Tessel dtype, the
// bytes ONNX expects, and clear errors naming the file.
// clang-format off
#include <onnx/onnx_pb.h>  // before onnx-data.pb.h: it defines ONNX_API
#include <onnx/onnx-data.pb.h>
// clang-format on

#include "test_frontend_models.h"

using namespace tessel;
using namespace tessel::testing;

class TestFrontendTensorPb : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  std::string path(const char* name) { return dir_.filePath(name).toStdString(); }

 private Q_SLOTS:
  void round_trip_every_dtype() {
    const DataType all[] = {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16,
                            DataType::kInt8,    DataType::kInt16,   DataType::kInt32,   DataType::kInt64,
                            DataType::kUInt8,   DataType::kBool,    DataType::kUInt16,  DataType::kUInt32,
                            DataType::kUInt64};
    for (DataType dt : all) {
      Tensor t(dt, {2, 3});
      for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, dt == DataType::kBool ? i % 2 : (i * 5 % 7) - 3);
      const std::string p = path("t.pb");
      write_tensor_pb(t, "value", p);
      const Tensor back = read_tensor_pb(p);
      QCOMPARE(back.dtype(), dt);
      QCOMPARE(shape_str(back.shape()), std::string("[2,3]"));
      QVERIFY2(std::memcmp(back.raw_data(), t.raw_data(), t.nbytes()) == 0, dtype_name(dt).data());

      // The file is an ONNX TensorProto with the ONNX type code and the given name.
      onnx::TensorProto proto;
      std::ifstream in(p, std::ios::binary);
      QVERIFY(proto.ParseFromIstream(&in));
      QCOMPARE(proto.name(), std::string("value"));
      QCOMPARE(proto.data_type(), dtype_to_onnx(dt));
      QCOMPARE(proto.dims_size(), 2);
    }
  }

  // ONNX keeps uint32 and uint64 in uint64_data, uint16 in int32_data, each value whole.
  void unsigned_values_in_typed_fields() {
    onnx::TensorProto proto;
    proto.set_data_type(onnx::TensorProto::UINT64);
    proto.add_dims(2);
    proto.add_uint64_data(18446744073709551615ull);
    proto.add_uint64_data(9223372036854775809ull);
    const Tensor u64 = tensor_from_onnx(proto);
    QCOMPARE(u64.dtype(), DataType::kUInt64);
    QCOMPARE(u64.data<uint64_t>()[0], 18446744073709551615ull);
    QCOMPARE(u64.data<uint64_t>()[1], 9223372036854775809ull);
    proto.set_data_type(onnx::TensorProto::UINT32);
    QCOMPARE(tensor_from_onnx(proto).data<uint32_t>()[1], 1u);  // stored wider than the type: wraps
    onnx::TensorProto u16;
    u16.set_data_type(onnx::TensorProto::UINT16);
    u16.add_dims(1);
    u16.add_int32_data(65535);
    QCOMPARE(tensor_from_onnx(u16).data<uint16_t>()[0], uint16_t{65535});
  }

  // A SequenceProto parses as a TensorProto too; the error names it for what it is.
  void a_sequence_file_is_named_as_one() {
    onnx::SequenceProto seq;
    seq.set_name("x0");
    seq.set_elem_type(onnx::SequenceProto::TENSOR);
    for (int i = 0; i < 2; ++i) {
      onnx::TensorProto* t = seq.add_tensor_values();
      t->set_data_type(onnx::TensorProto::FLOAT);
      t->add_dims(1);
      t->add_float_data(1.0f);
    }
    const std::string p = path("seq.pb");
    {
      std::ofstream out(p, std::ios::binary);
      QVERIFY(seq.SerializeToOstream(&out));
    }
    const QString error = error_of([&] { read_tensor_pb(p); });
    QVERIFY2(error.contains("seq.pb") &&
                 error.contains("holds a sequence of 2 tensors (an ONNX SequenceProto), not a tensor"),
             qPrintable(error));
  }

  void scalars_and_empty_tensors() {
    write_tensor_pb(Tensor::scalar<int64_t>(-9), "s", path("s.pb"));
    const Tensor s = read_tensor_pb(path("s.pb"));
    QCOMPARE(s.rank(), int64_t{0});
    QCOMPARE(s.to_int64s(), std::vector<int64_t>{-9});
    write_tensor_pb(Tensor(DataType::kFloat32, {0, 4}), "e", path("e.pb"));
    QCOMPARE(shape_str(read_tensor_pb(path("e.pb")).shape()), std::string("[0,4]"));
  }

  void float16_in_int32_data() {
    onnx::TensorProto proto;
    proto.set_data_type(onnx::TensorProto::FLOAT16);
    proto.add_dims(2);
    proto.add_int32_data(0x4000);  // 2.0
    proto.add_int32_data(0xB800);  // -0.5
    OnnxModel::write_file(path("h.pb"), proto.SerializeAsString());
    const Tensor h = read_tensor_pb(path("h.pb"));
    QCOMPARE(h.dtype(), DataType::kFloat16);
    QCOMPARE(h.get_double(0), 2.0);
    QCOMPARE(h.get_double(1), -0.5);
  }

  void errors_name_the_file() {
    QString msg = error_of([&] { read_tensor_pb(path("none.pb")); });
    QVERIFY2(msg.startsWith(QString::fromStdString(path("none.pb"))) && msg.contains("cannot open"), qPrintable(msg));

    write_tensor_pb(ramp({4, 4}), "x", path("full.pb"));
    std::ifstream in(path("full.pb"), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    OnnxModel::write_file(path("cut.pb"), bytes.substr(0, bytes.size() - 5));
    msg = error_of([&] { read_tensor_pb(path("cut.pb")); });
    QVERIFY2(msg.startsWith(QString::fromStdString(path("cut.pb")) + ": ") && msg.contains("truncated"),
             qPrintable(msg));

    onnx::TensorProto complex;
    complex.set_name("waves");
    complex.set_data_type(onnx::TensorProto::COMPLEX64);
    complex.add_dims(1);
    complex.add_float_data(1.0f);
    complex.add_float_data(0.0f);
    OnnxModel::write_file(path("complex.pb"), complex.SerializeAsString());
    msg = error_of([&] { read_tensor_pb(path("complex.pb")); });
    QVERIFY2(msg.contains("complex.pb: tensor 'waves'") && msg.contains("COMPLEX64"), qPrintable(msg));

    OnnxModel::write_file(path("empty.pb"), "");
    msg = error_of([&] { read_tensor_pb(path("empty.pb")); });
    QVERIFY2(msg.contains("empty.pb: the file is empty"), qPrintable(msg));

    msg = error_of([&] { write_tensor_pb(ramp({2}), "x", path("no_such_dir/x.pb")); });
    QVERIFY2(msg.contains("no_such_dir/x.pb") && msg.contains("cannot open"), qPrintable(msg));
  }
};

QTEST_APPLESS_MAIN(TestFrontendTensorPb)
#include "test_frontend_tensor_pb.moc"
