#pragma once
// A lesson: a guided walkthrough shipped as JSON in resources/lessons. Each page is a text plus
// the actions that set the studio up for it, in this order: open a model (with pass options) on
// a target, select a kernel, set its schedule (hand steps or "default"), profile the model.
//
//   {"format": "tessel-lesson", "version": 1, "title": "...", "summary": "...",
//    "pages": [{"title": "Tile", "text": "...",
//               "open_model": {"path": "matmul_256.graph", "pass_options": {}},   (relative to the lesson)
//               "target": "opencl",                  (this page and later ones; absent: the session's)
//               "select_kernel": "fused_mat_mul_0",
//               "schedule": ["tile(matmul_0.i0, matmul_0.i1, 8, 64)"] | "default",
//               "profile": false,
//               "baseline": true}]}                  (the page later pages compare against)
//
// Usage:
//   for (const std::string& f : lesson_files(dir)) { Lesson l = load_lesson(f); menu.add(l.title); }
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/schedule/schedule.h"

namespace tessel::views {

struct LessonPage {
  std::string title;
  std::string text;
  std::optional<std::string> model_path;  // absolute; set when the page opens a model
  nlohmann::json pass_options = nlohmann::json::object();
  std::string target;  // the target from this page on; empty: the one before (or the session's)
  std::string kernel;  // the kernel to select; empty: none
  enum class ScheduleAction { kNone, kHand, kDefault } schedule_action = ScheduleAction::kNone;
  schedule::Schedule schedule;  // kHand
  bool profile = false;
  bool baseline = false;
};

struct Lesson {
  std::string path;
  std::string title;
  std::string summary;
  std::vector<LessonPage> pages;
  // The model each page works on: the last one opened at or before it (empty: none yet).
  std::string model_at(size_t page) const;
  // The target each page compiles for: the last one set at or before it (empty: the session's).
  std::string target_at(size_t page) const;
};

// Throws Error naming the file, the page and what is wrong ("optimize_matmul.json: page 3
// 'Reorder': schedule: line 2: ..."); a page whose kernel needs a model must follow one that opens it.
Lesson load_lesson(const std::string& path);
// The lesson files of a folder (*.json), sorted by name.
std::vector<std::string> lesson_files(const std::string& dir);

}  // namespace tessel::views
