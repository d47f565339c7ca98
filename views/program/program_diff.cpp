#include "views/program/program_diff.h"

#include <sstream>

#include "core/lower/line_diff.h"

namespace tessel::views {

namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

}  // namespace

std::vector<DiffLine> parse_line_diff(const std::string& diff) {
  std::vector<DiffLine> out;
  for (const std::string& line : split_lines(diff)) {
    if (line == "@@") {
      out.push_back({DiffLine::Kind::kSame, "\xe2\x8b\xaf"});  // "⋯" in UTF-8: unchanged lines left out
      continue;
    }
    if (line.size() < 2) continue;
    DiffLine::Kind kind = line[0] == '+'   ? DiffLine::Kind::kAdded
                          : line[0] == '-' ? DiffLine::Kind::kRemoved
                                           : DiffLine::Kind::kSame;
    out.push_back({kind, line.substr(2)});
  }
  return out;
}

std::vector<DiffLine> inline_diff(const std::string& before, const std::string& after, const std::string& hunks,
                                  size_t max_cells) {
  if (before == after) {
    std::vector<DiffLine> out;
    for (std::string& line : split_lines(after)) out.push_back({DiffLine::Kind::kSame, std::move(line)});
    return out;
  }
  // The size of line_diff's table: the lines left once the common head and tail are trimmed.
  std::vector<std::string> a = split_lines(before), b = split_lines(after);
  size_t head = 0, tail = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  while (tail < a.size() - head && tail < b.size() - head && a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) ++tail;
  const size_t cells = (a.size() - head - tail + 1) * (b.size() - head - tail + 1);
  if (cells > max_cells && !hunks.empty()) return parse_line_diff(hunks);
  return parse_line_diff(lower::line_diff(before, after, /*context=*/1 << 30));
}

SideBySide side_by_side(const std::vector<DiffLine>& diff) {
  // A change is a run of removed and added lines between kept ones; its two sides are padded
  // to the same height so the kept lines after it line up again.
  SideBySide out;
  std::vector<DiffLine> removed, added;
  auto flush = [&] {
    size_t n = std::max(removed.size(), added.size());
    for (size_t k = 0; k < n; ++k) {
      out.left.push_back(k < removed.size() ? removed[k] : DiffLine{DiffLine::Kind::kFiller, {}});
      out.right.push_back(k < added.size() ? added[k] : DiffLine{DiffLine::Kind::kFiller, {}});
    }
    removed.clear();
    added.clear();
  };
  for (const DiffLine& d : diff) {
    if (d.kind == DiffLine::Kind::kRemoved) {
      removed.push_back(d);
    } else if (d.kind == DiffLine::Kind::kAdded) {
      added.push_back(d);
    } else {
      flush();
      out.left.push_back(d);
      out.right.push_back(d);
    }
  }
  flush();
  return out;
}

std::string loop_var_of_line(const std::string& line) {
  size_t b = line.find_first_not_of(' ');
  if (b == std::string::npos || line.compare(b, 4, "for ") != 0) return {};
  size_t start = b + 4, end = line.find(" in ", start);
  if (end == std::string::npos || end == start) return {};
  return line.substr(start, end - start);
}

namespace {

bool has_loop(const std::string& text, const std::string& var) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (loop_var_of_line(line) == var) return true;
  return false;
}

}  // namespace

int view_that_introduced_loop(const std::vector<lower::ViewRecord>& views, int at, const std::string& var) {
  if (at < 0 || static_cast<size_t>(at) >= views.size() || var.empty()) return -1;
  if (!has_loop(views[static_cast<size_t>(at)].record.text(), var)) return -1;
  int k = at;
  while (k > 0 && has_loop(views[static_cast<size_t>(k - 1)].record.text(), var)) --k;
  return k;
}

}  // namespace tessel::views
