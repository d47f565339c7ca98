#include "views/program/code_highlighter.h"

namespace tessel::views {

namespace {

QTextCharFormat colour(QColor c, bool bold = false) {
  QTextCharFormat f;
  f.setForeground(c);
  if (bold) f.setFontWeight(QFont::Bold);
  return f;
}

}  // namespace

CodeHighlighter::Language CodeHighlighter::language_of(const QString& name) {
  QString n = name.toLower();
  if (n.contains("llvm") || n == "ir") return Language::kLlvmIr;
  if (n.contains("asm") || n.contains("assembly")) return Language::kAsm;
  if (n == "c" || n.startsWith("c_") || n.contains("source")) return Language::kC;
  return Language::kLoop;
}

CodeHighlighter::CodeHighlighter(QTextDocument* document, Language language) : QSyntaxHighlighter(document) {
  const QColor keyword(0, 70, 160), number(170, 80, 0), name(120, 40, 140), type(0, 120, 90);
  auto add = [&](const QString& pattern, QTextCharFormat f) { rules_.push_back({QRegularExpression(pattern), f}); };
  add(R"(\b-?\d+(\.\d+)?([eE][-+]?\d+)?\b)", colour(number));
  switch (language) {
    case Language::kLoop:
      add(R"(\b(for|in|if|else|allocate|let|parallel|vectorized|unrolled|vthread|bind|pragma|func|return)\b)",
          colour(keyword, true));
      add(R"(\b(float32|float16|int32|int64|int8|bool|f32x\d+)\b)", colour(type));
      comment_ = "//";
      break;
    case Language::kLlvmIr:
      add(R"([%@][\w.$-]+)", colour(name));
      add(R"(\b(define|declare|ret|br|call|load|store|getelementptr|phi|icmp|fcmp|add|fadd|mul|fmul|sub|fsub|)"
          R"(alloca|label|inbounds|nsw|nuw|fast|shufflevector|insertelement|extractelement|select|to|align)\b)",
          colour(keyword, true));
      add(R"(\b(i1|i8|i32|i64|float|double|half|void|ptr)\b|<\d+ x \w+>)", colour(type));
      comment_ = ";";
      break;
    case Language::kAsm:
      add(R"(^\s*[.\w$]+:)", colour(name, true));
      add(R"(%?\b([re]?[abcd]x|[re]?[sd]i|[re]?[sb]p|r\d+[dwb]?|[xyz]mm\d+|k[0-7]|[wxvqsd]\d+)\b)", colour(name));
      add(R"(^\s+[a-z][\w.]*)", colour(keyword, true));
      add(R"(^\s*\.\w+)", colour(type));
      comment_ = "#";
      break;
    case Language::kC:
      add(R"(\b(for|if|else|while|return|void|static|inline|const|restrict|struct|typedef|include|pragma)\b)",
          colour(keyword, true));
      add(R"(\b(float|double|int|int32_t|int64_t|uint8_t|char|size_t|bool)\b)", colour(type));
      add(R"(^\s*#\s*\w+)", colour(name, true));
      comment_ = "//";
      break;
  }
}

void CodeHighlighter::highlightBlock(const QString& text) {
  for (const Rule& r : rules_)
    for (auto it = r.re.globalMatch(text); it.hasNext();) {
      auto m = it.next();
      setFormat(static_cast<int>(m.capturedStart()), static_cast<int>(m.capturedLength()), r.format);
    }
  if (!comment_.isEmpty()) {
    qsizetype at = text.indexOf(comment_);
    if (at >= 0) {
      QTextCharFormat f = colour(QColor(120, 120, 120));
      f.setFontItalic(true);
      setFormat(static_cast<int>(at), static_cast<int>(text.size() - at), f);
    }
  }
}

}  // namespace tessel::views
