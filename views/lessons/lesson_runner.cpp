#include "views/lessons/lesson_runner.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

namespace tessel::views {

namespace {
std::string format(const char* pattern, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, pattern, v);
  return buf;
}
std::string bytes_text(int64_t bytes) {
  return bytes >= 1 << 20 ? format("%.2f MB", static_cast<double>(bytes) / (1 << 20))
                          : format("%.1f KB", static_cast<double>(bytes) / 1024);
}
}  // namespace

LessonRunner::LessonRunner(Lesson lesson, LessonActions actions)
    : lesson_(std::move(lesson)), actions_(std::move(actions)), results_(lesson_.pages.size()) {}

std::pair<std::string, nlohmann::json> LessonRunner::model_of(size_t k) const {
  nlohmann::json options = nlohmann::json::object();
  for (size_t j = k + 1; j-- > 0;)
    if (lesson_.pages[j].model_path) {
      options = lesson_.pages[j].pass_options;
      break;
    }
  return {lesson_.model_at(k), options};
}

void LessonRunner::go_to(int index) {
  if (lesson_.pages.empty()) return;
  page_ = std::clamp(index, 0, page_count() - 1);
  const LessonPage& p = page();
  // Going back to an earlier page reopens that page's model: a page sees the last model opened at
  // or before it, whatever order the user visits pages in.
  auto [model, options] = model_of(static_cast<size_t>(page_));
  const std::string target = lesson_.target_at(static_cast<size_t>(page_));
  if (!model.empty() && (model != opened_model_ || options != opened_options_)) {
    opened_model_ = model;
    opened_options_ = options;
    opened_target_ = target;
    if (actions_.open_model)
      actions_.open_model(QString::fromStdString(model), options, QString::fromStdString(target));
  } else if (!target.empty() && target != opened_target_) {
    opened_target_ = target;
    if (actions_.set_target) actions_.set_target(QString::fromStdString(target));
  }
  const QString kernel = QString::fromStdString(p.kernel);
  if (!kernel.isEmpty() && actions_.select_kernel) actions_.select_kernel(kernel);
  if (p.schedule_action == LessonPage::ScheduleAction::kHand && actions_.set_schedule)
    actions_.set_schedule(kernel, p.schedule);
  if (p.schedule_action == LessonPage::ScheduleAction::kDefault && actions_.reset_schedule)
    actions_.reset_schedule(kernel);
  if (p.profile && actions_.profile) actions_.profile();
  if (on_page_changed) on_page_changed(page_);
}

void LessonRunner::resume_at(int index) {
  if (lesson_.pages.empty()) return;
  page_ = std::clamp(index, 0, page_count() - 1);
  std::tie(opened_model_, opened_options_) = model_of(static_cast<size_t>(page_));
  opened_target_ = lesson_.target_at(static_cast<size_t>(page_));
  if (on_page_changed) on_page_changed(page_);
}

bool LessonRunner::next() {
  if (page_ + 1 >= page_count()) return false;
  go_to(page_ + 1);
  return true;
}

bool LessonRunner::back() {
  if (page_ <= 0) return false;
  go_to(page_ - 1);
  return true;
}

void LessonRunner::note_measurement(const KernelMeasurement& m) {
  if (page_ < 0 || m.verdict != KernelMeasurement::Verdict::kCorrect || m.kernel != page().kernel) return;
  if (page().schedule_action == LessonPage::ScheduleAction::kNone) return;  // this page measures nothing
  LessonPageResult& r = results_[static_cast<size_t>(page_)];
  r.kernel = kernel_time(m);
  if (on_result) on_result(page_);
}

void LessonRunner::note_profile(const ModelProfile& p) {
  if (page_ < 0 || !page().profile || !p.error.empty()) return;
  LessonPageResult& r = results_[static_cast<size_t>(page_)];
  r.model_ms = p.profile.total_ms;
  r.model_bytes = 0;
  for (const auto& k : p.profile.kernels) r.model_bytes += k.bytes;
  r.kernels = static_cast<int>(p.profile.kernels.size());
  if (on_result) on_result(page_);
}

int LessonRunner::baseline_page() const {
  for (size_t k = 0; k < lesson_.pages.size(); ++k)
    if (lesson_.pages[k].baseline) return static_cast<int>(k);
  return 0;
}

std::optional<double> LessonRunner::speedup(int page) const {
  const LessonPageResult& base = result(baseline_page());
  const LessonPageResult& r = result(page);
  if (base.kernel && r.kernel && r.kernel->ms > 0) return base.kernel->ms / r.kernel->ms;
  if (base.model_ms && r.model_ms && *r.model_ms > 0) return *base.model_ms / *r.model_ms;
  return std::nullopt;
}

std::string LessonRunner::result_text(int page) const {
  const LessonPageResult& r = result(page);
  const int base = baseline_page();
  const std::string base_title = "'" + lesson_.pages[static_cast<size_t>(base)].title + "'";
  std::string s;
  if (r.kernel) s = "kernel " + r.kernel->text() + " on " + r.kernel->target_kind();
  if (r.model_ms)
    s += (s.empty() ? "" : "; ") + std::string("model ") + format_ms(*r.model_ms) + ", " + bytes_text(r.model_bytes) +
         " moved by " + std::to_string(r.kernels) + " kernels";
  if (s.empty()) return s;
  std::optional<double> up = speedup(page);
  if (page == base) {
    s += " — the baseline";
  } else if (up) {
    s += *up >= 1 ? format(" — %.1f× faster than ", *up) + base_title
                  : format(" — %.2f× the speed of ", *up) + base_title;
    const LessonPageResult& b = result(base);
    if (r.model_ms && b.model_ms && b.model_bytes > 0)
      s += format(", %.2f× its bytes", static_cast<double>(r.model_bytes) / static_cast<double>(b.model_bytes));
  }
  return s;
}

}  // namespace tessel::views
