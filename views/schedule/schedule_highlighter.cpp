#include "views/schedule/schedule_highlighter.h"

#include <QRegularExpression>
#include <QTextDocument>

#include "core/schedule/step.h"

namespace tessel::views {

ScheduleHighlighter::ScheduleHighlighter(QTextDocument* document) : QSyntaxHighlighter(document) {}

void ScheduleHighlighter::set_error_line(int line) {
  if (line == error_line_) return;
  error_line_ = line;
  rehighlight();
}

void ScheduleHighlighter::highlightBlock(const QString& text) {
  static const QRegularExpression kind_re(R"(^\s*(?:#\s*disabled:\s*)?([A-Za-z_]+)\s*\()");
  static const QRegularExpression number_re(R"((?<![\w.])-?\d+\b)");
  static const QRegularExpression key_re(R"(\b([A-Za-z_]\w*)\s*=)");
  static const QRegularExpression name_re(R"(\b[A-Za-z_]\w*(?:\.\w+)+\b)");
  const bool disabled = text.trimmed().startsWith("# disabled:");
  const bool comment = !disabled && text.trimmed().startsWith('#');
  if (comment) {
    QTextCharFormat f;
    f.setForeground(QColor(128, 128, 128));
    f.setFontItalic(true);
    setFormat(0, static_cast<int>(text.size()), f);
  } else {
    QTextCharFormat name_f, number_f, key_f, kind_f;
    name_f.setForeground(QColor(20, 90, 150));
    number_f.setForeground(QColor(170, 80, 0));
    key_f.setForeground(QColor(120, 40, 140));
    auto each = [&](const QRegularExpression& re, const QTextCharFormat& f, int group) {
      for (auto it = re.globalMatch(text); it.hasNext();) {
        auto m = it.next();
        setFormat(static_cast<int>(m.capturedStart(group)), static_cast<int>(m.capturedLength(group)), f);
      }
    };
    each(name_re, name_f, 0);
    each(number_re, number_f, 0);
    each(key_re, key_f, 1);
    auto m = kind_re.match(text);
    if (m.hasMatch()) {
      bool known = schedule::find_step_kind(m.captured(1).toStdString()) != nullptr;
      kind_f.setFontWeight(QFont::Bold);
      kind_f.setForeground(known ? QColor(0, 110, 60) : QColor(190, 20, 20));
      setFormat(static_cast<int>(m.capturedStart(1)), static_cast<int>(m.capturedLength(1)), kind_f);
    }
    if (disabled)
      for (int i = 0; i < text.size(); ++i) {
        QTextCharFormat f = format(i);
        f.setForeground(QColor(150, 150, 150));
        f.setFontStrikeOut(true);
        setFormat(i, 1, f);
      }
  }
  if (currentBlock().blockNumber() + 1 == error_line_)
    for (int i = 0; i < text.size(); ++i) {
      QTextCharFormat f = format(i);
      f.setUnderlineStyle(QTextCharFormat::WaveUnderline);
      f.setUnderlineColor(QColor(210, 0, 0));
      setFormat(i, 1, f);
    }
}

}  // namespace tessel::views
