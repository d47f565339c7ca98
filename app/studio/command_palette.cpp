#include "app/studio/command_palette.h"

#include <QAction>
#include <QApplication>
#include <QKeyEvent>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QVBoxLayout>
#include <memory>

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

bool CommandPalette::holds(const QObject* object) const {
  // Across windows: a popup of the palette (its line edit's context menu) is the palette's too.
  for (auto* w = qobject_cast<const QWidget*>(object); w; w = w->parentWidget())
    if (w == this) return true;
  return false;
}

// Installed on the application while the palette is shown. Qt offers a key first as a
// ShortcutOverride to the widget that will get it, and matches shortcuts and menu-bar mnemonics
// only when no one claims it: the palette claims every key, so none of the window's fire. A key
// addressed to a widget outside the palette (the main window still had the keyboard) is typed into
// the palette instead; a key inside it goes its usual way. A click outside closes the palette.
bool CommandPalette::eventFilter(QObject* watched, QEvent* e) {
  const QEvent::Type type = e->type();
  // A click elsewhere means the user has left the palette: it closes, and the click goes through.
  if (type == QEvent::MouseButtonPress && watched->isWidgetType() && !holds(watched)) {
    hide();
    return false;
  }
  if (type != QEvent::ShortcutOverride && type != QEvent::KeyPress && type != QEvent::KeyRelease) return false;
  if (!watched->isWidgetType()) return false;  // the platform window: it hands the key to a widget next
  if (type == QEvent::ShortcutOverride) {
    e->accept();
    return true;
  }
  if (holds(watched) || forwarding_) return false;
  if (type == QEvent::KeyPress) {
    QWidget* target = focusWidget() ? focusWidget() : edit_;
    std::unique_ptr<QEvent> copy(e->clone());
    forwarding_ = true;
    QCoreApplication::sendEvent(target, copy.get());
    forwarding_ = false;
  }
  return true;
}

void CommandPalette::showEvent(QShowEvent* e) {
  QWidget* focus = QApplication::focusWidget();
  if (focus && !holds(focus)) return_focus_ = focus;
  qApp->installEventFilter(this);
  QDialog::showEvent(e);
}

void CommandPalette::hideEvent(QHideEvent* e) {
  qApp->removeEventFilter(this);
  // Closed by the user (Escape, Enter, a click), not because the window went away: the keyboard
  // goes back to the widget it came from, and its window is made active again (without a window
  // manager nothing else would).
  QWidget* window = parentWidget() ? parentWidget()->window() : nullptr;
  if (!e->spontaneous() && window && window->isVisible()) {
    window->activateWindow();
    if (return_focus_ && return_focus_->isVisible() && return_focus_->window() == window)
      return_focus_->setFocus(Qt::OtherFocusReason);
  }
  return_focus_ = nullptr;
  QDialog::hideEvent(e);
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
