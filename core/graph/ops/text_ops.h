#pragma once
// Text ops: TfIdfVectorizer (ONNX opset 9 form) over integer tokens (pool_strings is refused: its
// string n-grams are not implemented), and StringNormalizer over string tensors.
//
// The pool lists the n-grams to count, grouped by length: ngram_counts[n-1] is where the n-grams
// of length n start in pool_int64s. The k-th n-gram of the pool is counted in output column
// ngram_indexes[k]. In a row of tokens, an n-gram is n tokens `skip + 1` apart (skip from 0 to
// max_skip_count), starting anywhere; unigrams are counted once (at skip 0). Each row of the
// input ([N] or [B,N]) becomes a row of C = max(ngram_indexes) + 1 floats:
//   TF: the count; IDF: weights[k] where the count is not 0; TFIDF: count · weights[k]
// (weights all 1 when absent).
#include "core/graph/ops/common.h"

namespace tessel::ops {

struct TfIdfVectorizerAttrs {
  int64_t max_gram_length = 1, min_gram_length = 1, max_skip_count = 0;
  std::string mode = "TF";
  std::vector<int64_t> ngram_counts, ngram_indexes, pool_int64s;
  std::vector<std::string> pool_strings;
  std::vector<float> weights;
  template <class V>
  void visit(V& v) {
    v(max_gram_length, {.name = "max_gram_length", .doc = "Longest n-gram counted", .min = 1});
    v(max_skip_count, {.name = "max_skip_count", .doc = "Most tokens skipped between two of an n-gram", .min = 0});
    v(min_gram_length, {.name = "min_gram_length", .doc = "Shortest n-gram counted", .min = 1});
    v(mode, {.name = "mode",
             .doc = "What a column holds: count, weight, or their product",
             .choices = {"TF", "IDF", "TFIDF"}});
    v(ngram_counts, {.name = "ngram_counts", .doc = "Where the n-grams of each length start in the pool", .min = 0});
    v(ngram_indexes, {.name = "ngram_indexes", .doc = "Output column of each n-gram of the pool", .min = 0});
    v(pool_int64s,
      {.name = "pool_int64s", .doc = "The n-grams to count, grouped by length", .def = std::vector<int64_t>{}});
    v(pool_strings, {.name = "pool_strings",
                     .doc = "String n-grams (not supported)",
                     .def = std::vector<std::string>{}});
    v(weights,
      {.name = "weights", .doc = "Weight of each n-gram of the pool; empty: all 1", .def = std::vector<float>{}});
  }
};

struct TfIdfVectorizerOp {
  using Attrs = TfIdfVectorizerAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Counts the pool's n-grams (with skips) in each row of token ids";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

// StringNormalizer: drops the stopwords from a row of strings ([C] or [1, C]), then changes the
// case of what is left. An empty result is one empty string ([1] or [1, 1]), as ONNX asks. Case
// changes and case-insensitive matching act on ASCII letters; `locale` is accepted and otherwise
// ignored (the ONNX tests use the default "en_US").
struct StringNormalizerAttrs {
  std::string case_change_action = "NONE", locale;
  int64_t is_case_sensitive = 0;
  std::vector<std::string> stopwords;
  template <class V>
  void visit(V& v) {
    v(case_change_action, {.name = "case_change_action",
                           .doc = "The case of the output strings",
                           .def = std::string("NONE"),
                           .choices = {"LOWER", "UPPER", "NONE"}});
    v(is_case_sensitive, {.name = "is_case_sensitive",
                          .doc = "Whether a stopword must match in case",
                          .def = int64_t{0},
                          .min = 0,
                          .max = 1});
    v(locale,
      {.name = "locale", .doc = "Locale of the case rules (ASCII rules whatever its value)", .def = std::string()});
    v(stopwords, {.name = "stopwords", .doc = "Strings to drop", .def = std::vector<std::string>{}});
  }
};

struct StringNormalizerOp {
  using Attrs = StringNormalizerAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {0};  // how many strings stay depends on them
  static constexpr const char* doc = "Drops stopwords from a row of strings and changes the case of the rest";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

}  // namespace tessel::ops
