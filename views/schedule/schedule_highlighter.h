#pragma once
// Highlighting for the schedule's text form (one step per line): the step kind, axis and stage
// names, integers, keyed arguments, comments; a disabled step ("# disabled: ...") greyed and
// struck out; the failing line underlined with a red wave.
#include <QSyntaxHighlighter>

namespace tessel::views {

class ScheduleHighlighter final : public QSyntaxHighlighter {
 public:
  explicit ScheduleHighlighter(QTextDocument* document);
  void set_error_line(int line);  // 1-based; 0 clears
  int error_line() const { return error_line_; }

 protected:
  void highlightBlock(const QString& text) override;

 private:
  int error_line_ = 0;
};

}  // namespace tessel::views
