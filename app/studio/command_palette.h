#pragma once
// Ctrl+Shift+P: type a few letters of any action in the window and press Enter. Every QAction the
// menus hold is found, so a new action is in the palette as soon as it is in a menu.
#include <QDialog>

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

 private:
  struct Entry {
    QString label;
    QAction* action;
  };
  void collect();
  QMenuBar* menus_;
  QLineEdit* edit_;
  QListWidget* list_;
  std::vector<Entry> entries_;
};

}  // namespace tessel::studio
