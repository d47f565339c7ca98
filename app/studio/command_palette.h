#pragma once
// Ctrl+Shift+P: type a few letters of any action in the window and press Enter. Every QAction the
// menus hold is found, so a new action is in the palette as soon as it is in a menu.
//
// While it is open, every key belongs to the palette. The window system gives it the keyboard only
// some time after it is shown, and what the user typed meanwhile went to the main window: a bare
// Alt there put the menu bar in keyboard mode, and the next "p" opened the Passes menu over the
// page. So, while visible, the palette takes each key event addressed to a widget outside it (the
// text goes into its line edit) and lets no key of the window's shortcuts or menu bar fire, even
// for keys typed into the palette itself. A click outside closes it; when it closes, the focus
// goes back to where it was.
#include <QDialog>
#include <QPointer>

class QLineEdit;
class QListWidget;
class QMenuBar;

namespace tessel::studio {

class CommandPalette final : public QDialog {
 public:
  explicit CommandPalette(QMenuBar* menus, QWidget* parent);
  void open_palette();
  // Actions whose "Menu › Action" text contains every word of `query` (case-insensitive).
  QList<QAction*> matching(const QString& query) const;
  void filter(const QString& query);
  bool trigger_current();
  QLineEdit* edit() const { return edit_; }
  QListWidget* list() const { return list_; }

 protected:
  bool eventFilter(QObject* watched, QEvent* e) override;
  void showEvent(QShowEvent* e) override;
  void hideEvent(QHideEvent* e) override;

 private:
  struct Entry {
    QString label;
    QAction* action;
  };
  void collect();
  bool holds(const QObject* object) const;  // the palette, or a widget or popup of it
  QMenuBar* menus_;
  QLineEdit* edit_;
  QListWidget* list_;
  std::vector<Entry> entries_;
  QPointer<QWidget> return_focus_;  // where the focus was when the palette opened
  bool forwarding_ = false;         // a key taken from the window is on its way to the line edit
};

}  // namespace tessel::studio
