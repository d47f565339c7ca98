#include "core/tune/cost_model.h"

#include <algorithm>
#include <numeric>

namespace tessel::tune {

void CostModel::fit(const std::vector<Features>& x, const std::vector<double>& y) {
  trees_.clear();
  trained_ = !x.empty() && x.size() == y.size();
  if (!trained_) return;
  mean_ = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(y.size());
  std::vector<double> prediction(y.size(), mean_), residual(y.size());
  std::vector<int> all(y.size());
  std::iota(all.begin(), all.end(), 0);
  for (int round = 0; round < options_.rounds; ++round) {
    for (size_t i = 0; i < y.size(); ++i) residual[i] = y[i] - prediction[i];
    Tree tree;
    grow(tree, x, residual, all, 0);
    for (size_t i = 0; i < y.size(); ++i) prediction[i] += options_.rate * eval(tree, x[i]);
    trees_.push_back(std::move(tree));
  }
}

double CostModel::predict(const Features& x) const {
  double p = mean_;
  for (const Tree& t : trees_) p += options_.rate * eval(t, x);
  return p;
}

// Adds the subtree for `rows` to `tree` and returns its index. A split is chosen by scanning each
// feature's sorted values: the boundary that minimizes the summed squared error of both sides.
int CostModel::grow(Tree& tree, const std::vector<Features>& x, const std::vector<double>& residual,
                    std::vector<int> rows, int depth) const {
  const int index = static_cast<int>(tree.size());
  tree.push_back({});
  double sum = 0;
  for (int r : rows) sum += residual[static_cast<size_t>(r)];
  const double n = static_cast<double>(rows.size());
  tree[static_cast<size_t>(index)].value = rows.empty() ? 0 : sum / n;
  if (depth >= options_.max_depth || static_cast<int>(rows.size()) < 2 * options_.min_leaf) return index;

  double best_gain = 1e-12;
  int best_feature = -1;
  double best_threshold = 0;
  for (size_t f = 0; f < kNumFeatures; ++f) {
    std::sort(rows.begin(), rows.end(),
              [&](int a, int b) { return x[static_cast<size_t>(a)][f] < x[static_cast<size_t>(b)][f]; });
    double left = 0;
    for (size_t k = 0; k + 1 < rows.size(); ++k) {
      left += residual[static_cast<size_t>(rows[k])];
      const double here = x[static_cast<size_t>(rows[k])][f], next = x[static_cast<size_t>(rows[k + 1])][f];
      const int n_left = static_cast<int>(k + 1), n_right = static_cast<int>(rows.size()) - n_left;
      if (here == next || n_left < options_.min_leaf || n_right < options_.min_leaf) continue;
      // Reduction of squared error = left²/nl + right²/nr − sum²/n.
      const double right = sum - left;
      const double gain = left * left / n_left + right * right / n_right - sum * sum / n;
      if (gain > best_gain) best_gain = gain, best_feature = static_cast<int>(f), best_threshold = (here + next) / 2;
    }
  }
  if (best_feature < 0) return index;
  std::vector<int> lo, hi;
  for (int r : rows)
    (x[static_cast<size_t>(r)][static_cast<size_t>(best_feature)] < best_threshold ? lo : hi).push_back(r);
  const int l = grow(tree, x, residual, std::move(lo), depth + 1);
  const int h = grow(tree, x, residual, std::move(hi), depth + 1);
  Node& node = tree[static_cast<size_t>(index)];
  node.feature = best_feature, node.threshold = best_threshold, node.left = l, node.right = h;
  return index;
}

double CostModel::eval(const Tree& tree, const Features& x) {
  int i = 0;
  while (tree[static_cast<size_t>(i)].feature >= 0) {
    const Node& n = tree[static_cast<size_t>(i)];
    i = x[static_cast<size_t>(n.feature)] < n.threshold ? n.left : n.right;
  }
  return tree[static_cast<size_t>(i)].value;
}

}  // namespace tessel::tune
