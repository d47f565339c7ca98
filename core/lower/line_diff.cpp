#include "core/lower/line_diff.h"

#include <algorithm>
#include <sstream>
#include <vector>

namespace tessel::lower {

namespace {
std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}
}  // namespace

std::string line_diff(const std::string& before, const std::string& after, int context) {
  if (before == after) return {};
  auto a = split_lines(before), b = split_lines(after);
  // Trim the common head and tail first: most steps change a few lines in the middle.
  size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head && a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) ++tail;
  size_t n = a.size() - head - tail, m = b.size() - head - tail;
  std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = a[head + i] == b[head + j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  // Every line of the result: ' ' kept, '-' removed, '+' added.
  std::vector<std::pair<char, std::string>> ops;
  for (size_t i = 0; i < head; ++i) ops.emplace_back(' ', a[i]);
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[head + i] == b[head + j]) {
      ops.emplace_back(' ', a[head + i]);
      ++i;
      ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      ops.emplace_back('-', a[head + i]);
      ++i;
    } else {
      ops.emplace_back('+', b[head + j]);
      ++j;
    }
  }
  for (size_t k = a.size() - tail; k < a.size(); ++k) ops.emplace_back(' ', a[k]);
  std::vector<bool> keep(ops.size(), false);
  for (size_t k = 0; k < ops.size(); ++k) {
    if (ops[k].first == ' ') continue;
    size_t lo = k >= static_cast<size_t>(context) ? k - static_cast<size_t>(context) : 0;
    size_t hi = std::min(ops.size() - 1, k + static_cast<size_t>(context));
    for (size_t q = lo; q <= hi; ++q) keep[q] = true;
  }
  std::string out;
  bool gap = false;
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!keep[k]) {
      gap = true;
      continue;
    }
    if (gap && !out.empty()) out += "@@\n";
    gap = false;
    out += ops[k].first;
    out += ' ';
    out += ops[k].second;
    out += '\n';
  }
  return out;
}

}  // namespace tessel::lower
