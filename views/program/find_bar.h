#pragma once
// Ctrl+F for the program pane's texts: a line under the text with the search field, previous /
// next, and "n of m" matches. Enter finds the next match, Shift+Enter the previous one, Escape
// closes the bar. It searches whichever text edit `target` returns when asked.
#include <QWidget>
#include <functional>

class QLabel;
class QLineEdit;
class QPlainTextEdit;

namespace tessel::views {

class FindBar final : public QWidget {
 public:
  explicit FindBar(QWidget* parent = nullptr);
  std::function<QPlainTextEdit*()> target;
  void open();                                        // shows the bar and focuses the field
  bool find(const QString& text, bool backward = false);  // selects the match; wraps around
  int count_matches(const QString& text) const;
  QLineEdit* field() const { return field_; }

 private:
  QLineEdit* field_;
  QLabel* status_;
};

}  // namespace tessel::views
