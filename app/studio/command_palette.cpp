#include "app/studio/command_palette.h"

#include <QAction>
#include <QKeyEvent>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QVBoxLayout>

namespace tessel::studio {

namespace {

// Up/Down in the line edit move through the list, so typing never has to stop.
class ArrowKeysToList final : public QObject {
 public:
  ArrowKeysToList(QListWidget* list, QObject* parent) : QObject(parent), list_(list) {}
  bool eventFilter(QObject*, QEvent* e) override {
    if (e->type() != QEvent::KeyPress) return false;
    auto* key = static_cast<QKeyEvent*>(e);
    if (key->key() != Qt::Key_Down && key->key() != Qt::Key_Up) return false;
    int row = list_->currentRow() + (key->key() == Qt::Key_Down ? 1 : -1);
    if (row >= 0 && row < list_->count()) list_->setCurrentRow(row);
    return true;
  }

 private:
  QListWidget* list_;
};

void collect_menu(QMenu* menu, const QString& prefix, std::vector<std::pair<QString, QAction*>>& out) {
  for (QAction* a : menu->actions()) {
    if (a->isSeparator()) continue;
    QString text = a->text().remove('&');
    if (a->menu()) {
      collect_menu(a->menu(), prefix + text + " › ", out);
      continue;
    }
    // A recent file is listed by name; its path (the tooltip) tells two files of one name apart.
    const QString tip = a->toolTip();
    if (tip != text && tip.contains('/')) text += "  —  " + tip;
    if (!text.isEmpty()) out.emplace_back(prefix + text, a);
  }
}

}  // namespace

CommandPalette::CommandPalette(QMenuBar* menus, QWidget* parent) : QDialog(parent), menus_(menus) {
  setWindowTitle(tr("Command Palette"));
  setObjectName("command_palette");
  edit_ = new QLineEdit(this);
  edit_->setPlaceholderText(tr("Type a command…"));
  list_ = new QListWidget(this);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(edit_);
  layout->addWidget(list_);
  resize(520, 360);
  edit_->installEventFilter(new ArrowKeysToList(list_, this));
  connect(edit_, &QLineEdit::textChanged, this, [this](const QString& t) { filter(t); });
  connect(edit_, &QLineEdit::returnPressed, this, [this] { trigger_current(); });
  connect(list_, &QListWidget::itemActivated, this, [this] { trigger_current(); });
}

void CommandPalette::collect() {
  entries_.clear();
  std::vector<std::pair<QString, QAction*>> found;
  for (QAction* top : menus_->actions())
    if (top->menu()) collect_menu(top->menu(), top->text().remove('&') + " › ", found);
  for (auto& [label, action] : found) entries_.push_back({label, action});
}

QList<QAction*> CommandPalette::matching(const QString& query) const {
  QList<QAction*> out;
  const QStringList words = query.split(' ', Qt::SkipEmptyParts);
  for (const Entry& e : entries_) {
    if (!e.action->isEnabled()) continue;
    bool all = true;
    for (const QString& w : words) all = all && e.label.contains(w, Qt::CaseInsensitive);
    if (all) out.push_back(e.action);
  }
  return out;
}

void CommandPalette::filter(const QString& query) {
  if (entries_.empty()) collect();
  list_->clear();
  const QStringList words = query.split(' ', Qt::SkipEmptyParts);
  for (const Entry& e : entries_) {
    if (!e.action->isEnabled()) continue;
    bool all = true;
    for (const QString& w : words) all = all && e.label.contains(w, Qt::CaseInsensitive);
    if (!all) continue;
    QString shortcut = e.action->shortcut().toString(QKeySequence::NativeText);
    auto* item = new QListWidgetItem(shortcut.isEmpty() ? e.label : e.label + "    " + shortcut, list_);
    item->setData(Qt::UserRole, QVariant::fromValue(static_cast<QObject*>(e.action)));
  }
  list_->setCurrentRow(0);
}

void CommandPalette::open_palette() {
  collect();
  edit_->clear();
  filter({});
  show();
  raise();
  activateWindow();
  edit_->setFocus();
}

bool CommandPalette::trigger_current() {
  QListWidgetItem* item = list_->currentItem();
  if (!item) return false;
  auto* action = qobject_cast<QAction*>(item->data(Qt::UserRole).value<QObject*>());
  hide();
  if (!action) return false;
  action->trigger();
  return true;
}

}  // namespace tessel::studio
