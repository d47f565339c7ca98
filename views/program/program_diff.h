#pragma once
// What the program pane draws, Qt-free: a program against the one before it as every line
// marked kept / added / removed (inline mode) or as two aligned columns (side-by-side mode), and
// which schedule step made a loop (the reverse of "the lines this step added").
//
//   inline                      side by side
//     for i in 0..64 {          for i in 0..64 {     │ for i.outer in 0..8 {     (removed | added)
//   - for i in 0..64 {                               │   for i.inner in 0..8 {
//   + for i.outer in 0..8 {
//   +   for i.inner in 0..8 {
#include <string>
#include <vector>

#include "core/lower/step_views.h"

namespace tessel::views {

struct DiffLine {
  enum class Kind { kSame, kAdded, kRemoved, kFiller } kind = Kind::kSame;  // filler: side-by-side padding
  std::string text;
};

// Every line of `after`, with the lines of `before` it dropped, in order (lower::line_diff with
// unlimited context). Equal texts give all lines kSame. The line diff is quadratic in the lines
// between the common head and tail; past `max_cells` (the UI thread must stay responsive on an
// unrolled program) it gives `hunks` instead: ViewRecord::diff, made on the worker, parsed, with
// "@@" gaps as a "⋯" line.
std::vector<DiffLine> inline_diff(const std::string& before, const std::string& after, const std::string& hunks = {},
                                  size_t max_cells = 4'000'000);
// A lower::line_diff text ("  " / "- " / "+ " prefixes, "@@" gaps) as lines.
std::vector<DiffLine> parse_line_diff(const std::string& diff);

struct SideBySide {
  std::vector<DiffLine> left, right;  // the same length: a run of removed lines faces the added run
};
SideBySide side_by_side(const std::vector<DiffLine>& diff);

// The loop variable a printed line opens ("for i.outer in 0..8 parallel {" -> "i.outer"); empty
// when the line is not a loop header.
std::string loop_var_of_line(const std::string& line);

// Which view made the loop `var` that view `at` shows: walking back from `at`, the first view
// whose program has the loop after one that does not. Returns the view index (0: the loop is in
// the unscheduled program), -1 when view `at` has no such loop.
int view_that_introduced_loop(const std::vector<lower::ViewRecord>& views, int at, const std::string& var);

}  // namespace tessel::views
