#pragma once
// Shows the running lesson: the page's title and text, its measured result (and speed-up over the
// baseline page), Back / Next. The mediator owns the LessonRunner and its actions; the pane only
// drives it. No Q_OBJECT.
//
// Usage:
//   pane->set_runner(runner.get());          // shows page runner->page_index() (go_to(0) first)
//   runner->on_result = [pane](int) { pane->refresh(); };
#include <QLabel>
#include <QPushButton>
#include <QTextBrowser>
#include <QWidget>

#include "views/lessons/lesson_runner.h"

namespace tessel::views {

class LessonPane : public QWidget {
 public:
  explicit LessonPane(QWidget* parent = nullptr);
  void set_runner(LessonRunner* runner);  // not owned; null: no lesson
  void refresh();
  QString result_text() const { return result_->text(); }

 private:
  LessonRunner* runner_ = nullptr;
  QLabel* title_ = nullptr;
  QLabel* position_ = nullptr;
  QTextBrowser* text_ = nullptr;
  QLabel* result_ = nullptr;
  QPushButton* back_ = nullptr;
  QPushButton* next_ = nullptr;
};

}  // namespace tessel::views
