// Typed attributes: every visitor derived from one `visit` declaration, and every error.
#include <QtTest>

#include "core/attrs/attrs.h"

using namespace tessel;

namespace {
struct PoolLikeAttrs {
  std::vector<int64_t> kernel_shape;
  std::vector<int64_t> strides;
  int64_t ceil_mode;
  float alpha;
  std::string auto_pad;
  DataType to;
  template <class V> void visit(V& v) {
    v(kernel_shape, {.name = "kernel_shape", .doc = "Window size", .min = 1});
    v(strides, {.name = "strides", .doc = "Stride per axis", .def = std::vector<int64_t>{}, .min = 1});
    v(ceil_mode, {.name = "ceil_mode", .doc = "Round output size up", .def = 0, .min = 0, .max = 1});
    v(alpha, {.name = "alpha", .doc = "Slope", .def = 0.5f});
    v(auto_pad, {.name = "auto_pad", .doc = "Padding rule", .def = "NOTSET",
                 .choices = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"}});
    v(to, {.name = "to", .doc = "Output type", .def = DataType::kFloat32});
  }
};

AttrMap base() { return {{"kernel_shape", std::vector<int64_t>{3, 3}}}; }

QString error_of(const AttrMap& m) {
  try {
    attrs_from_map<PoolLikeAttrs>("MaxPool", m);
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}
}  // namespace

class TestAttrs : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void defaults_apply_when_absent() {
    auto a = attrs_from_map<PoolLikeAttrs>("MaxPool", base());
    QCOMPARE(a.kernel_shape, (std::vector<int64_t>{3, 3}));
    QVERIFY(a.strides.empty());
    QCOMPARE(a.ceil_mode, int64_t{0});
    QCOMPARE(a.alpha, 0.5f);
    QCOMPARE(QString::fromStdString(a.auto_pad), QString("NOTSET"));
    QCOMPARE(a.to, DataType::kFloat32);
  }
  void values_are_read_and_converted() {
    AttrMap m = base();
    m["alpha"] = int64_t{2};  // ints are accepted for floats
    m["to"] = int64_t{7};     // ONNX type code for int64
    m["auto_pad"] = std::string("VALID");
    auto a = attrs_from_map<PoolLikeAttrs>("MaxPool", m);
    QCOMPARE(a.alpha, 2.0f);
    QCOMPARE(a.to, DataType::kInt64);
    QCOMPARE(QString::fromStdString(a.auto_pad), QString("VALID"));
  }
  void unknown_key_is_named() {
    AttrMap m = base();
    m["stride"] = std::vector<int64_t>{2, 2};
    QVERIFY(error_of(m).contains("MaxPool: unknown attribute(s): stride"));
  }
  void missing_required_is_named() { QVERIFY(error_of({}).contains("MaxPool: missing required attribute 'kernel_shape'")); }
  void wrong_type_is_named() {
    AttrMap m = base();
    m["ceil_mode"] = std::string("yes");
    QString e = error_of(m);
    QVERIFY2(e.contains("attribute 'ceil_mode'") && e.contains("expected int"), qPrintable(e));
  }
  void out_of_range_names_value_and_range() {
    AttrMap m = base();
    m["ceil_mode"] = int64_t{2};
    QString e = error_of(m);
    QVERIFY2(e.contains("MaxPool") && e.contains("'ceil_mode'") && e.contains("value 2") && e.contains("[0, 1]"), qPrintable(e));
    AttrMap m2 = base();
    m2["strides"] = std::vector<int64_t>{1, 0};
    QVERIFY(error_of(m2).contains(">= 1"));
  }
  void bad_choice_lists_allowed() {
    AttrMap m = base();
    m["auto_pad"] = std::string("SAME");
    QString e = error_of(m);
    QVERIFY2(e.contains("\"SAME\"") && e.contains("SAME_UPPER"), qPrintable(e));
  }
  void equality_and_hash() {
    Attrs a = make_attrs(attrs_from_map<PoolLikeAttrs>("p", base()));
    Attrs b = make_attrs(attrs_from_map<PoolLikeAttrs>("p", base()));
    AttrMap m = base();
    m["ceil_mode"] = int64_t{1};
    Attrs c = make_attrs(attrs_from_map<PoolLikeAttrs>("p", m));
    QVERIFY(a->equals(*b));
    QCOMPARE(a->hash(), b->hash());
    QVERIFY(!a->equals(*c));
    QVERIFY(a->hash() != c->hash());
    Attrs other = make_attrs(NoAttrs{});
    QVERIFY(!a->equals(*other));
  }
  void prints_only_non_default_fields() {
    AttrMap m = base();
    m["alpha"] = 0.25;
    Attrs a = make_attrs(attrs_from_map<PoolLikeAttrs>("p", m));
    QCOMPARE(QString::fromStdString(a->print_non_default()), QString("kernel_shape=[3,3], alpha=0.25"));
  }
  void json_round_trip() {
    AttrMap m = base();
    m["auto_pad"] = std::string("SAME_LOWER");
    Attrs a = make_attrs(attrs_from_map<PoolLikeAttrs>("p", m));
    nlohmann::json j = a->to_json();
    QCOMPARE(j["auto_pad"].get<std::string>(), std::string("SAME_LOWER"));
    Attrs back = make_attrs(attrs_from_map<PoolLikeAttrs>("p", attr_map_from_json(j)));
    QVERIFY(a->equals(*back));
  }
  void json_errors() {
    QVERIFY_THROWS_EXCEPTION(Error, attr_map_from_json(nlohmann::json::parse(R"({"a": [1, "x"]})")));
    QVERIFY_THROWS_EXCEPTION(Error, attr_map_from_json(nlohmann::json::parse("[1]")));
  }
  void documentation_lists_every_field() {
    auto doc = attrs_doc<PoolLikeAttrs>();
    QCOMPARE(doc.size(), size_t{6});
    QCOMPARE(QString::fromStdString(doc[0].name), QString("kernel_shape"));
    QVERIFY(doc[0].required);
    QCOMPARE(QString::fromStdString(doc[2].range), QString("[0, 1]"));
    QCOMPARE(QString::fromStdString(doc[3].default_value), QString("0.5"));
    QCOMPARE(QString::fromStdString(doc[4].type), QString("string"));
    QVERIFY(QString::fromStdString(doc[4].range).contains("SAME_LOWER"));
  }
};

QTEST_APPLESS_MAIN(TestAttrs)
#include "test_attrs.moc"
