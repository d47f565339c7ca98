#pragma once
// Steps through a lesson: going to a page runs its actions through callbacks that the mediator wires
// to the real studio (SessionController, Selection, KernelEditLoop), and the results that come back
// (a kernel measurement, a model profile) are kept per page, so each page can show its measured
// speed-up over the lesson's baseline page.
//
//   go_to(k) ─▶ open_model(path, pass_options, target)   (only when the model or its options change)
//            ─▶ set_target(target)                       (or only the page's target changes)
//            ─▶ select_kernel(K) ─▶ set_schedule(K, s) | reset_schedule(K) ─▶ profile()
//   loop.measured ─▶ note_measurement(m)  ─┐ recorded for page k ─▶ result_text(k):
//   loop.profiled ─▶ note_profile(p)      ─┘   "0.197 ms, 231× faster than 'Naive loops'"
//
// Not a QObject. Usage:
//   LessonRunner runner(load_lesson(path), actions);
//   runner.on_result = [pane](int page) { pane->refresh(); };
//   runner.go_to(0);  ...  runner.next();
#include <QString>
#include <functional>
#include <optional>

#include "views/common/kernel_results.h"
#include "views/common/kernel_time.h"
#include "views/lessons/lesson.h"

namespace tessel::views {

struct LessonActions {
  // `target` empty: the session's target stays.
  std::function<void(const QString& model_path, const nlohmann::json& pass_options, const QString& target)> open_model;
  std::function<void(const QString& target)> set_target;  // the model stays open
  std::function<void(const QString& kernel)> select_kernel;
  std::function<void(const QString& kernel, const schedule::Schedule& s)> set_schedule;
  std::function<void(const QString& kernel)> reset_schedule;  // back to the default schedule
  std::function<void()> profile;
};

struct LessonPageResult {
  std::optional<KernelTime> kernel;  // the page's kernel, measured correct
  std::optional<double> model_ms;    // the model profile's median run
  int64_t model_bytes = 0;           // bytes moved by all kernels of that profile
  int kernels = 0;
};

class LessonRunner {
 public:
  LessonRunner(Lesson lesson, LessonActions actions);

  const Lesson& lesson() const { return lesson_; }
  int page_count() const { return static_cast<int>(lesson_.pages.size()); }
  int page_index() const { return page_; }  // -1 before the first go_to
  const LessonPage& page() const { return lesson_.pages.at(static_cast<size_t>(page_)); }

  void go_to(int index);  // clamps; runs the page's actions
  // Shows page `index` (clamped) without running its actions: the studio already holds what the
  // page set up (a session restored after a crash).
  void resume_at(int index);
  bool next();  // false on the last page
  bool back();  // false on the first page

  // Results of the current page's actions. A measurement counts when it is correct and for the
  // page's kernel; a profile counts when the page profiles.
  void note_measurement(const KernelMeasurement& m);
  void note_profile(const ModelProfile& p);
  const LessonPageResult& result(int page) const { return results_.at(static_cast<size_t>(page)); }
  // Baseline time over this page's time (kernel times when both pages measured the kernel, else
  // model times); nullopt until both are known.
  std::optional<double> speedup(int page) const;
  std::string result_text(int page) const;  // "" until measured
  std::function<void(int page)> on_result;
  std::function<void(int page)> on_page_changed;  // after go_to, next, back, resume_at

 private:
  int baseline_page() const;
  // The model and pass options page `k` works on (the last opened at or before it).
  std::pair<std::string, nlohmann::json> model_of(size_t k) const;

  Lesson lesson_;
  LessonActions actions_;
  std::vector<LessonPageResult> results_;
  int page_ = -1;
  std::string opened_model_;
  std::string opened_target_;
  nlohmann::json opened_options_;
};

}  // namespace tessel::views
