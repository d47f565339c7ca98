// TfIdfVectorizer and StringNormalizer: checks, shape inference and the reference kernels (text_ops.h).
#include "core/graph/ops/text_ops.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace tessel::ops {

namespace {

std::string s(int64_t v) { return std::to_string(v); }

// The pool's n-grams, each with its index k in pool order, checked against the attributes.
struct Pool {
  std::map<std::vector<int64_t>, int64_t> ngrams;
  int64_t columns = 0;
};

Pool read_pool(const TfIdfVectorizerAttrs& a) {
  const char* op = "TfIdfVectorizer";
  if (!a.pool_strings.empty())
    throw Error(std::string(op) + ": pool_strings (n-grams of string tensors) is not supported");
  if (a.min_gram_length > a.max_gram_length)
    throw Error(std::string(op) + ": min_gram_length " + s(a.min_gram_length) + " exceeds max_gram_length " +
                s(a.max_gram_length));
  const int64_t size = static_cast<int64_t>(a.pool_int64s.size());
  Pool p;
  int64_t k = 0;
  for (size_t n = 1; n <= a.ngram_counts.size(); ++n) {
    const int64_t begin = a.ngram_counts[n - 1];
    const int64_t end = n < a.ngram_counts.size() ? a.ngram_counts[n] : size;
    if (begin > end || end > size || (end - begin) % static_cast<int64_t>(n) != 0)
      throw Error(std::string(op) + ": ngram_counts " + s(begin) + ".." + s(end) + " does not hold whole " +
                  s(static_cast<int64_t>(n)) + "-grams of the pool of " + s(size));
    for (int64_t at = begin; at < end; at += static_cast<int64_t>(n), ++k)
      p.ngrams.emplace(
          std::vector<int64_t>(a.pool_int64s.begin() + at, a.pool_int64s.begin() + at + static_cast<int64_t>(n)), k);
  }
  if (static_cast<int64_t>(a.ngram_indexes.size()) != k)
    throw Error(std::string(op) + ": ngram_indexes has " + s(static_cast<int64_t>(a.ngram_indexes.size())) +
                " entries; the pool holds " + s(k) + " n-grams");
  if (!a.weights.empty() && static_cast<int64_t>(a.weights.size()) != k)
    throw Error(std::string(op) + ": weights has " + s(static_cast<int64_t>(a.weights.size())) +
                " entries; the pool holds " + s(k) + " n-grams");
  for (int64_t column : a.ngram_indexes) p.columns = std::max(p.columns, column + 1);
  return p;
}

}  // namespace

void TfIdfVectorizerOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (x.dtype != DataType::kInt32 && x.dtype != DataType::kInt64)
    throw Error("TfIdfVectorizer: the input has dtype " + std::string(dtype_name(x.dtype)) + "; allowed: i32, i64");
  if (x.shape.size() != 1 && x.shape.size() != 2)
    throw Error("TfIdfVectorizer: the input must be [N] or [B,N], it is " + shape_str(x.shape));
  const Pool p = read_pool(a);
  ctx.set_output(0, DataType::kFloat32, x.shape.size() == 1 ? Shape{p.columns} : Shape{x.shape[0], p.columns});
}

void TfIdfVectorizerOp::reference(const Attrs& a, const KernelArgs& args) {
  const Pool p = read_pool(a);
  const Tensor& x = args.in(0);
  Tensor& y = args.out(0);
  const std::vector<int64_t> tokens = x.to_int64s();
  const int64_t rows = x.shape().size() == 1 ? 1 : x.shape()[0], n = x.shape().back();
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t* row = tokens.data() + r * n;
    std::vector<int64_t> counts(p.ngrams.size(), 0);
    for (int64_t skip = 0; skip <= a.max_skip_count; ++skip) {
      const int64_t step = skip + 1;
      for (int64_t start = 0; start < n; ++start)
        for (int64_t len = std::max<int64_t>(a.min_gram_length, skip > 0 ? 2 : 1); len <= a.max_gram_length; ++len) {
          if (start + (len - 1) * step >= n) break;
          std::vector<int64_t> gram;
          for (int64_t j = 0; j < len; ++j) gram.push_back(row[start + j * step]);
          auto it = p.ngrams.find(gram);
          if (it != p.ngrams.end()) ++counts[static_cast<size_t>(it->second)];
        }
    }
    for (size_t k = 0; k < counts.size(); ++k) {
      if (counts[k] == 0) continue;
      const double w = a.weights.empty() ? 1.0 : double{a.weights[k]};
      const double v = a.mode == "TF"    ? static_cast<double>(counts[k])
                       : a.mode == "IDF" ? w
                                         : static_cast<double>(counts[k]) * w;
      const int64_t at = r * p.columns + a.ngram_indexes[k];
      y.set_double(at, y.get_double(at) + v);
    }
  }
}

// ---------------------------------------------------------------- StringNormalizer

namespace {

std::string with_case(std::string_view text, const std::string& action) {
  std::string out(text);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (action == "LOWER") c = static_cast<char>(std::tolower(u));
    if (action == "UPPER") c = static_cast<char>(std::toupper(u));
  }
  return out;
}

// The strings of the row that are not stopwords, with their case changed.
std::vector<std::string> normalized(const StringNormalizerAttrs& a, const Tensor& x) {
  const bool sensitive = a.is_case_sensitive != 0;
  std::vector<std::string> stop;
  for (const std::string& w : a.stopwords) stop.push_back(sensitive ? w : with_case(w, "LOWER"));
  std::vector<std::string> kept;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const std::string_view word = x.string_at(i);
    const std::string key = sensitive ? std::string(word) : with_case(word, "LOWER");
    if (std::find(stop.begin(), stop.end(), key) == stop.end()) kept.push_back(with_case(word, a.case_change_action));
  }
  if (kept.empty()) kept.emplace_back();  // ONNX: all dropped → one empty string
  return kept;
}

}  // namespace

void StringNormalizerOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (x.dtype != DataType::kString)
    throw Error("StringNormalizer: input 0 has dtype " + std::string(dtype_name(x.dtype)) + "; allowed: str");
  if (!(x.shape.size() == 1 || (x.shape.size() == 2 && x.shape[0] == 1)))
    throw Error("StringNormalizer: input 0 must be [C] or [1, C], got " + shape_str(x.shape));
  const int64_t kept = static_cast<int64_t>(
      normalized(a, ctx.require_value(0, "the input (how many strings stay depends on them)")).size());
  ctx.set_output(0, DataType::kString, x.shape.size() == 1 ? Shape{kept} : Shape{1, kept});
}

void StringNormalizerOp::reference(const Attrs& a, const KernelArgs& args) {
  const std::vector<std::string> kept = normalized(a, args.in(0));
  Tensor& y = args.out(0);
  for (size_t i = 0; i < kept.size(); ++i) y.set_string(static_cast<int64_t>(i), kept[i]);
}

}  // namespace tessel::ops
