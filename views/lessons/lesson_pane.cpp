#include "views/lessons/lesson_pane.h"

#include <QHBoxLayout>
#include <QVBoxLayout>

namespace tessel::views {

LessonPane::LessonPane(QWidget* parent) : QWidget(parent) {
  setObjectName("lesson");
  auto* layout = new QVBoxLayout(this);
  title_ = new QLabel(this);
  QFont bold = title_->font();
  bold.setBold(true);
  bold.setPointSizeF(bold.pointSizeF() * 1.2);
  title_->setFont(bold);
  title_->setWordWrap(true);
  position_ = new QLabel(this);
  position_->setStyleSheet("color: gray;");
  text_ = new QTextBrowser(this);
  text_->setOpenExternalLinks(true);
  result_ = new QLabel(this);
  result_->setWordWrap(true);
  result_->setStyleSheet("font-weight: bold; color: #2e7d32;");
  auto* buttons = new QHBoxLayout;
  back_ = new QPushButton(tr("← Back"), this);
  next_ = new QPushButton(tr("Next →"), this);
  buttons->addWidget(back_);
  buttons->addStretch(1);
  buttons->addWidget(position_);
  buttons->addStretch(1);
  buttons->addWidget(next_);
  layout->addWidget(title_);
  layout->addWidget(text_, 1);
  layout->addWidget(result_);
  layout->addLayout(buttons);
  QObject::connect(back_, &QPushButton::clicked, this, [this] {
    if (runner_ && runner_->back()) refresh();
  });
  QObject::connect(next_, &QPushButton::clicked, this, [this] {
    if (runner_ && runner_->next()) refresh();
  });
  refresh();
}

void LessonPane::set_runner(LessonRunner* runner) {
  runner_ = runner;
  refresh();
}

void LessonPane::refresh() {
  const bool active = runner_ && runner_->page_index() >= 0;
  back_->setEnabled(active && runner_->page_index() > 0);
  next_->setEnabled(active && runner_->page_index() + 1 < runner_->page_count());
  if (!active) {
    title_->setText(tr("No lesson"));
    text_->setPlainText(tr("Pick a lesson from the Lessons menu."));
    result_->clear();
    position_->clear();
    return;
  }
  const LessonPage& p = runner_->page();
  title_->setText(QString::fromStdString(runner_->lesson().title + " — " + p.title));
  position_->setText(tr("page %1 of %2").arg(runner_->page_index() + 1).arg(runner_->page_count()));
  QString text = QString::fromStdString(p.text).toHtmlEscaped();
  if (p.schedule_action == LessonPage::ScheduleAction::kHand) {
    text += "<p><b>" + tr("Schedule of %1:").arg(QString::fromStdString(p.kernel)) +
            "</b></p><pre style=\"white-space: pre-wrap\">" +
            QString::fromStdString(schedule::to_text(p.schedule)).toHtmlEscaped() + "</pre>";
    if (p.schedule.steps.empty()) text += "<p><i>" + tr("(no steps: the plain loops)") + "</i></p>";
  }
  text_->setHtml("<p>" + text + "</p>");
  const std::string result = runner_->result_text(runner_->page_index());
  const bool measures = p.schedule_action != LessonPage::ScheduleAction::kNone || p.profile;
  result_->setText(!result.empty() ? QString::fromStdString(result) : measures ? tr("Measuring…") : QString());
}

}  // namespace tessel::views
