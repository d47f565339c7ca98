#pragma once
// The search's cost model: gradient-boosted regression trees, trained online on the candidates
// measured so far, predicting a score (higher = faster) from loop-program features.
//
//   prediction(x) = mean + rate · Σ_t tree_t(x)
//   each round fits one tree (depth ≤ 3) to the residuals y − prediction, by least squares:
//
//          [f7 < 3.5]                a split is the (feature, threshold) that most reduces the
//          /        |                squared error of the two sides' means
//    [f2 < 1.0]    leaf: +0.21
//     /     |
//  -0.40   +0.05
//
// Written here instead of linking XGBoost: the training sets are small (hundreds of rows, a dozen
// features), Tessel's package set is fixed, and a few dozen lines train in well under a
// millisecond, deterministically.
#include <memory>
#include <vector>

#include "core/tune/features.h"

namespace tessel::tune {

class CostModel {
 public:
  struct Options {
    int rounds = 40;
    int max_depth = 3;
    int min_leaf = 2;
    double rate = 0.3;
  };
  CostModel() = default;
  explicit CostModel(Options o) : options_(o) {}

  // Retrains from scratch on all rows (x[i], y[i]).
  void fit(const std::vector<Features>& x, const std::vector<double>& y);
  bool trained() const { return trained_; }
  double predict(const Features& x) const;

 private:
  struct Node {
    int feature = -1;  // -1: a leaf
    double threshold = 0, value = 0;
    int left = -1, right = -1;
  };
  using Tree = std::vector<Node>;  // node 0 is the root

  int grow(Tree& tree, const std::vector<Features>& x, const std::vector<double>& residual, std::vector<int> rows,
           int depth) const;
  static double eval(const Tree& tree, const Features& x);

  Options options_;
  bool trained_ = false;
  double mean_ = 0;
  std::vector<Tree> trees_;
};

}  // namespace tessel::tune
