#include "views/program/find_bar.h"

#include <QHBoxLayout>
#include <QGuiApplication>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QShortcut>
#include <QTextDocument>
#include <QToolButton>

namespace tessel::views {

FindBar::FindBar(QWidget* parent) : QWidget(parent) {
  field_ = new QLineEdit(this);
  field_->setPlaceholderText(tr("Find"));
  field_->setClearButtonEnabled(true);
  status_ = new QLabel(this);
  auto* prev = new QToolButton(this);
  prev->setText(QString::fromUtf8("▲"));
  auto* next = new QToolButton(this);
  next->setText(QString::fromUtf8("▼"));
  auto* close = new QToolButton(this);
  close->setText(QString::fromUtf8("✕"));
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(2, 0, 2, 0);
  layout->addWidget(field_, 1);
  layout->addWidget(status_);
  layout->addWidget(prev);
  layout->addWidget(next);
  layout->addWidget(close);
  connect(field_, &QLineEdit::returnPressed, this, [this] {
    find(field_->text(), QGuiApplication::keyboardModifiers() & Qt::ShiftModifier);
  });
  connect(field_, &QLineEdit::textChanged, this, [this](const QString& t) { find(t); });
  connect(prev, &QToolButton::clicked, this, [this] { find(field_->text(), true); });
  connect(next, &QToolButton::clicked, this, [this] { find(field_->text()); });
  connect(close, &QToolButton::clicked, this, [this] { hide(); });
  auto* escape = new QShortcut(QKeySequence(Qt::Key_Escape), this, [this] { hide(); });
  escape->setContext(Qt::WidgetWithChildrenShortcut);
  hide();
}

void FindBar::open() {
  show();
  field_->setFocus();
  field_->selectAll();
}

int FindBar::count_matches(const QString& text) const {
  QPlainTextEdit* edit = target ? target() : nullptr;
  if (!edit || text.isEmpty()) return 0;
  int n = 0;
  for (QTextCursor c = edit->document()->find(text); !c.isNull(); c = edit->document()->find(text, c)) ++n;
  return n;
}

bool FindBar::find(const QString& text, bool backward) {
  QPlainTextEdit* edit = target ? target() : nullptr;
  if (!edit || text.isEmpty()) {
    status_->clear();
    return false;
  }
  QTextDocument::FindFlags flags;
  if (backward) flags |= QTextDocument::FindBackward;
  bool found = edit->find(text, flags);
  if (!found) {  // wrap around
    QTextCursor c = edit->textCursor();
    c.movePosition(backward ? QTextCursor::End : QTextCursor::Start);
    edit->setTextCursor(c);
    found = edit->find(text, flags);
  }
  int n = count_matches(text);
  status_->setText(found ? tr("%n match(es)", nullptr, n) : tr("not found"));
  field_->setStyleSheet(found ? QString() : "background: #ffe0e0");
  return found;
}

}  // namespace tessel::views
