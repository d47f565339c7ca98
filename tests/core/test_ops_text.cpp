// TfIdfVectorizer (core/graph/ops/text_ops.h): n-gram counts with skips worked by hand, the three
// modes, shape inference and its errors, and the ONNX node tests in-process.
#include <QtTest>
#include <filesystem>

#include "core/frontend/onnx_import.h"
#include "test_ops_nn_util.h"

using namespace tessel;
using namespace nn_test;
namespace fs = std::filesystem;

namespace {

const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

// Unigrams 2, 3 and bigrams (3,7), (7,8): columns 0..3.
AttrMap pool_attrs(const std::string& mode, int64_t skips) {
  return {{"max_gram_length", int64_t{2}},
          {"min_gram_length", int64_t{1}},
          {"max_skip_count", skips},
          {"mode", mode},
          {"ngram_counts", std::vector<int64_t>{0, 2}},
          {"ngram_indexes", std::vector<int64_t>{0, 1, 2, 3}},
          {"pool_int64s", std::vector<int64_t>{2, 3, 3, 7, 7, 8}},
          {"weights", std::vector<double>{0.5, 2.0, 3.0, 4.0}}};
}

std::vector<double> elements(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get_double(i));
  return v;
}

}  // namespace

class TestOpsText : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void counts_ngrams_with_skips() {
    // Tokens 3 7 3 9 8 2: unigram 2 once, 3 twice, bigram (3,7) once side by side; (7,8) only
    // with two tokens skipped between them.
    const Tensor x = Tensor::from_values<int32_t>({6}, std::vector<int32_t>{3, 7, 3, 9, 8, 2});
    QCOMPARE(elements(run1("TfIdfVectorizer", pool_attrs("TF", 0), {x})), (std::vector<double>{1, 2, 1, 0}));
    QCOMPARE(elements(run1("TfIdfVectorizer", pool_attrs("TF", 2), {x})), (std::vector<double>{1, 2, 1, 1}));
    QCOMPARE(elements(run1("TfIdfVectorizer", pool_attrs("IDF", 2), {x})), (std::vector<double>{0.5, 2, 3, 4}));
    QCOMPARE(elements(run1("TfIdfVectorizer", pool_attrs("TFIDF", 0), {x})), (std::vector<double>{0.5, 4, 3, 0}));
    // Batched: one output row per input row.
    const Tensor batch = Tensor::from_values<int64_t>({2, 3}, std::vector<int64_t>{2, 2, 2, 7, 8, 3});
    const Tensor y = run1("TfIdfVectorizer", pool_attrs("TF", 0), {batch});
    QCOMPARE(y.shape(), (Shape{2, 4}));
    QCOMPARE(elements(y), (std::vector<double>{3, 0, 0, 0, 0, 1, 0, 1}));
  }

  void rejects_what_it_cannot_count() {
    const Tensor x = Tensor::from_values<int32_t>({3}, std::vector<int32_t>{1, 2, 3});
    AttrMap a = pool_attrs("TF", 0);
    a["ngram_indexes"] = std::vector<int64_t>{0, 1, 2};
    QVERIFY(error_of("TfIdfVectorizer", a, {x}).contains("ngram_indexes has 3 entries; the pool holds 4 n-grams"));
    a = pool_attrs("TF", 0);
    a["ngram_counts"] = std::vector<int64_t>{0, 3};
    QVERIFY(error_of("TfIdfVectorizer", a, {x}).contains("does not hold whole 2-grams"));
    a = pool_attrs("TF", 0);
    a["pool_strings"] = std::vector<std::string>{"a"};
    QVERIFY(error_of("TfIdfVectorizer", a, {x}).contains("string tensors"));
    QVERIFY(error_of("TfIdfVectorizer", pool_attrs("TF", 0), {f32({3}, {1, 2, 3})}).contains("allowed: i32, i64"));
  }

  void node_tests_data() {
    QTest::addColumn<QString>("name");
    if (!fs::exists(kNodeTests)) return;
    for (const auto& entry : fs::directory_iterator(kNodeTests)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("test_tfidfvectorizer", 0) == 0) QTest::newRow(name.c_str()) << QString::fromStdString(name);
    }
  }
  void node_tests() {
    QFETCH(QString, name);
    const fs::path dir = kNodeTests / name.toStdString() / "test_data_set_0";
    const Graph g = import_onnx((kNodeTests / name.toStdString() / "model.onnx").string());
    const Tensor got = run_reference(g, {read_tensor_pb((dir / "input_0.pb").string())})[0];
    const Tensor want = read_tensor_pb((dir / "output_0.pb").string());
    QCOMPARE(got.shape(), want.shape());
    QCOMPARE(elements(got), elements(want));
  }
};

QTEST_APPLESS_MAIN(TestOpsText)
#include "test_ops_text.moc"
