#pragma once
// A small highlighter for the texts the program pane shows: the loop program, LLVM IR, assembly
// and C source. Keywords, numbers, comments and names (%x / @f in IR, registers in assembly) in
// a few colours; the language is picked from the artifact's name.
#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <vector>

namespace tessel::views {

class CodeHighlighter final : public QSyntaxHighlighter {
 public:
  enum class Language { kLoop, kLlvmIr, kAsm, kC };
  CodeHighlighter(QTextDocument* document, Language language);
  // "llvm_ir" -> kLlvmIr, "asm"/"assembly" -> kAsm, "c_source"/"c" -> kC, anything else kLoop.
  static Language language_of(const QString& artifact_name);

 protected:
  void highlightBlock(const QString& text) override;

 private:
  struct Rule {
    QRegularExpression re;
    QTextCharFormat format;
  };
  std::vector<Rule> rules_;
  QString comment_;  // line comment start
};

}  // namespace tessel::views
