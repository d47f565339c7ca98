#include "core/pass/instrument.h"

#include <chrono>
#include <cstdio>
#include <ostream>

namespace tessel {

std::string_view step_kind_name(StepKind kind) {
  switch (kind) {
    case StepKind::kGraphPass:
      return "graph pass";
    case StepKind::kScheduleStep:
      return "schedule step";
    case StepKind::kLoweringPass:
      return "lowering pass";
  }
  return "step";
}

std::string failure_text(StepKind kind, std::string_view name, std::string_view reason) {
  switch (kind) {
    case StepKind::kGraphPass:
      return "pass '" + std::string(name) + "' failed: " + std::string(reason);
    case StepKind::kLoweringPass:
      return "lowering pass " + std::string(name) + ": " + std::string(reason);
    case StepKind::kScheduleStep:
      break;
  }
  return std::string(name) + ": " + std::string(reason);
}

const std::string& StepRecord::text() const {
  static const std::string kNone;
  return after ? after->text() : kNone;
}

StepRecordPtr Instrumentation::run(StepKind kind, std::string name, const IrSnapshotPtr& before,
                                   const std::function<IrSnapshotPtr()>& step) const {
  for (Instrument* inst : instruments_) inst->before_step(name, kind, before);
  auto record = std::make_shared<StepRecord>();
  record->name = std::move(name);
  record->kind = kind;
  record->before = before;
  const auto start = std::chrono::steady_clock::now();
  std::string failure;
  try {
    record->after = step();
  } catch (const Error& e) {
    failure = e.what();
  } catch (const std::exception& e) {
    failure = std::string("internal error: ") + e.what();
  }
  record->wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  record->changed = failure.empty() && record->after != before;
  if (failure.empty()) {
    try {
      for (Instrument* inst : instruments_) inst->after_step(*record);
    } catch (const Error& e) {
      failure = e.what();
    }
  }
  if (failure.empty()) return record;
  record->after = before;
  record->changed = false;
  record->error = failure_text(kind, record->name, failure);
  for (Instrument* inst : instruments_) inst->step_failed(*record);
  throw StepFailure(std::move(record), failure);
}

void StepRecorder::after_step(const StepRecord& record) {
  records_.push_back(std::make_shared<const StepRecord>(record));
}

void StepRecorder::step_failed(const StepRecord& record) {
  // A verifier called after this recorder may have rejected a step this recorder already kept as
  // done: the failure replaces it.
  if (!records_.empty() && records_.back()->name == record.name && !records_.back()->failed() &&
      records_.back()->before == record.before)
    records_.pop_back();
  records_.push_back(std::make_shared<const StepRecord>(record));
}

void StepTimer::add(std::string_view step, double ms) {
  for (Entry& e : entries_)
    if (e.step == step) {
      e.total_ms += ms;
      ++e.runs;
      return;
    }
  entries_.push_back({std::string(step), ms, 1});
}

double StepTimer::total_ms() const {
  double t = 0;
  for (const Entry& e : entries_) t += e.total_ms;
  return t;
}

std::string StepTimer::table() const {
  std::string out;
  char line[160];
  std::snprintf(line, sizeof line, "%-28s %5s %10s\n", "step", "runs", "ms");
  out += line;
  for (const Entry& e : entries_) {
    std::snprintf(line, sizeof line, "%-28s %5d %10.3f\n", e.step.c_str(), e.runs, e.total_ms);
    out += line;
  }
  std::snprintf(line, sizeof line, "%-28s %5s %10.3f\n", "total", "", total_ms());
  out += line;
  return out;
}

TextDumper::TextDumper(std::ostream& out, When when, std::string step_name)
    : out_(out), when_(when), step_name_(std::move(step_name)) {}

TextDumper TextDumper::from_option(std::ostream& out, const std::string& which) {
  if (which == "all") return TextDumper(out, When::kAll);
  if (which == "changed") return TextDumper(out, When::kChanged);
  return TextDumper(out, When::kNamed, which);
}

bool TextDumper::selects(When when, std::string_view name, std::string_view step, bool changed) {
  switch (when) {
    case When::kAll:
      return true;
    case When::kChanged:
      return changed;
    case When::kNamed:
      return step == name ||
             (step.size() > name.size() && step.substr(0, name.size()) == name && step[name.size()] == ' ');
  }
  return false;
}

void TextDumper::after_step(const StepRecord& record) {
  if (!selects(when_, step_name_, record.name, record.changed)) return;
  out_ << "// ---- after " << record.name << (record.changed ? "" : " (unchanged)") << ", " << record.wall_ms << " ms\n"
       << record.text() << "\n";
}

void TextDumper::step_failed(const StepRecord& record) {
  if (when_ == When::kNamed && !selects(when_, step_name_, record.name, false)) return;
  out_ << "// ---- " << record.name << " FAILED: " << record.error << "\n";
}

void Verifier::after_step(const StepRecord& record) {
  if (!record.changed || !record.after) return;
  try {
    check_(*record.after);
  } catch (const Error& e) {
    throw Error("verifier after '" + record.name + "': " + e.what());
  }
}

}  // namespace tessel
