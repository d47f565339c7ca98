#include "views/schedule/schedule_editor_pane.h"

#include <QAction>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QListView>
#include <QMenu>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTimer>
#include <QUndoGroup>
#include <QUndoStack>
#include <QVBoxLayout>

#include "core/compile/kernel_compiler.h"
#include "core/support/error.h"
#include "views/common/kernel_time.h"
#include "views/edit/kernel_lowering.h"
#include "views/schedule/schedule_highlighter.h"
#include "views/schedule/step_choices.h"
#include "views/schedule/step_form.h"

namespace tessel::views {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

// One edit of one kernel's steps: the whole list before and after, so undo restores it exactly.
class EntriesCommand final : public QUndoCommand {
 public:
  EntriesCommand(ScheduleEditorPane* pane, QString kernel, ScheduleEntries before, ScheduleEntries after,
                 const QString& text, bool is_reset)
      : QUndoCommand(text),
        pane_(pane),
        kernel_(std::move(kernel)),
        before_(std::move(before)),
        after_(std::move(after)),
        reset_(is_reset) {}
  void redo() override { apply(after_, reset_); }
  void undo() override { apply(before_, false); }
  const ScheduleEntries& before() const { return before_; }
  const ScheduleEntries& after() const { return after_; }

 private:
  void apply(const ScheduleEntries& e, bool reset) {
    // Undo stacks are per kernel, and only the shown kernel's stack is active in the group.
    if (pane_->kernel() == kernel_) pane_->apply_entries(e, reset);
  }
  ScheduleEditorPane* pane_;
  QString kernel_;
  ScheduleEntries before_, after_;
  bool reset_;
};

// Line (1-based) of the step in `row` in the text form: steps are the lines that are neither
// blank nor comments, "# disabled:" lines included (entries_from_text's rule).
int line_of_row(const QString& text, int row) {
  if (row < 0) return 0;
  const QStringList lines = text.split('\n');
  int step = 0;
  for (int i = 0; i < lines.size(); ++i) {
    QString t = lines[i].trimmed();
    if (t.isEmpty() || (t.startsWith('#') && !t.startsWith("# disabled:"))) continue;
    if (step++ == row) return i + 1;
  }
  return 0;
}

}  // namespace

bool same_shape(const te::ComputeDag& a, const te::ComputeDag& b) {
  if (a.ops.size() != b.ops.size() || a.outputs.size() != b.outputs.size()) return false;
  auto reduce_extents = [](const te::Tensor& t) {
    std::vector<int64_t> out;
    if (const loopir::Reduce* r = t->reduction())
      for (const loopir::IterVar& v : r->axes) out.push_back(v.extent);
    return out;
  };
  for (size_t i = 0; i < a.ops.size(); ++i) {
    const te::Tensor &x = a.ops[i], &y = b.ops[i];
    if (x->is_placeholder != y->is_placeholder || x->shape != y->shape || x->dtype != y->dtype) return false;
    // Placeholder names follow the graph's values; stage names are what a schedule refers to.
    if (!x->is_placeholder && (x->name != y->name || reduce_extents(x) != reduce_extents(y))) return false;
  }
  return true;
}

QStringList same_shape_kernels_in(const StudioSnapshot& snapshot, const std::string& kernel) {
  QStringList out;
  std::string why;
  std::optional<te::ComputeDag> mine = kernel_dag(snapshot, kernel, &why);
  if (!mine) return out;
  for (const FusionGroup& g : snapshot.fusion->groups) {
    if (g.kernel_name == kernel) continue;
    std::optional<te::ComputeDag> other = compile::kernel_dag(*snapshot.optimized, g, &why);
    if (other && same_shape(*mine, *other)) out << q(g.kernel_name);
  }
  return out;
}

struct ScheduleEditorPane::KernelState {
  te::ComputeDag dag;
  schedule::Schedule default_schedule;
  ScheduleEntries entries;
  schedule::Schedule sent;  // what on_schedule_edited / the caller last had for this kernel
  QUndoStack* stack = nullptr;
  int64_t generation = -1;  // newest lowering shown
  StepChoices replay;       // the whole enabled schedule replayed (for errors before lowering)
};

ScheduleEditorPane::ScheduleEditorPane(QWidget* parent)
    : QWidget(parent), model_(new ScheduleStepModel(this)), undo_group_(new QUndoGroup(this)) {
  setObjectName("schedule");
  title_ = new QLabel(tr("No kernel selected"), this);
  title_->setStyleSheet("font-weight: bold");
  badge_ = new QLabel(this);
  badge_->setObjectName("badge");
  // A long measuring error must not widen the dock (and the window with it): the badge is cut, its
  // tooltip and the error line below hold the whole text.
  badge_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  title_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  expression_ = new QPlainTextEdit(this);
  expression_->setReadOnly(true);
  expression_->setLineWrapMode(QPlainTextEdit::NoWrap);
  expression_->setMaximumHeight(90);
  expression_->setMinimumHeight(40);  // two lines at least; the pane gives the badge its own line
  expression_->setFont(QFont("monospace", 9));

  list_ = new QListView(this);
  list_->setModel(model_);
  list_->setSelectionMode(QAbstractItemView::SingleSelection);
  list_->setDragDropMode(QAbstractItemView::InternalMove);
  list_->setDefaultDropAction(Qt::MoveAction);
  list_->setFont(QFont("monospace", 9));
  text_ = new QPlainTextEdit(this);
  text_->setObjectName("schedule_text");
  text_->setLineWrapMode(QPlainTextEdit::NoWrap);
  text_->setFont(QFont("monospace", 9));
  highlighter_ = new ScheduleHighlighter(text_->document());
  auto* apply = new QPushButton(tr("Apply text (Ctrl+Return)"), this);
  auto* text_page = new QWidget(this);
  auto* text_layout = new QVBoxLayout(text_page);
  text_layout->setContentsMargins(0, 0, 0, 0);
  text_layout->addWidget(text_, 1);
  text_layout->addWidget(apply, 0, Qt::AlignRight);
  modes_ = new QTabWidget(this);
  modes_->addTab(list_, tr("Steps"));
  modes_->addTab(text_page, tr("Text"));

  error_ = new QLabel(this);
  error_->setObjectName("error");
  error_->setWordWrap(true);
  error_->setStyleSheet("color: #b41414");
  error_->hide();

  delete_ = new QPushButton(tr("Delete"), this);
  reset_ = new QPushButton(tr("Reset to default"), this);
  copy_ = new QPushButton(tr("Copy to…"), this);  // short: the pane shares the left column
  copy_->setToolTip(tr("Copy this schedule to other kernels of the same shape"));
  auto* copy_menu = new QMenu(copy_);
  copy_->setMenu(copy_menu);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(delete_);
  buttons->addStretch(1);
  buttons->addWidget(reset_);
  buttons->addWidget(copy_);

  form_ = new StepForm(this);
  // The kernel's name, and under it the badge (time ± spread · GFLOP/s · target) with the whole
  // width of the pane.
  auto* header = new QVBoxLayout;
  header->setSpacing(0);
  header->addWidget(title_);
  header->addWidget(badge_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(header);
  layout->addWidget(expression_);
  layout->addWidget(modes_, 1);
  layout->addWidget(error_);
  layout->addLayout(buttons);
  layout->addWidget(form_);
  setEnabled(false);  // until a kernel is shown

  model_->on_toggle_requested = [this](int row, bool on) { set_step_enabled(row, on); };
  // Deferred: the view is inside its drop handler, and the command resets the model.
  model_->on_move_requested = [this](int from, int to) {
    QTimer::singleShot(0, this, [this, from, to] { move_step(from, to); });
  };
  form_->on_add = [this](const schedule::ScheduleStep& s) {
    int row = selected_row();
    add_step(s, row);  // before the selected step (the form offers the axes that exist there)
  };
  form_->on_replace = [this](const schedule::ScheduleStep& s) {
    if (selected_row() >= 0) replace_step(selected_row(), s);
  };
  connect(list_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& index) {
    if (syncing_) return;
    refresh_choices();
    if (index.isValid()) form_->load(model_->entries()[static_cast<size_t>(index.row())].step);
    if (on_step_selected && index.isValid()) on_step_selected(enabled_step_of_row(model_->entries(), index.row()));
  });
  connect(delete_, &QPushButton::clicked, this, [this] {
    if (selected_row() >= 0) remove_step(selected_row());
  });
  auto* delete_key = new QAction(list_);
  delete_key->setShortcut(QKeySequence::Delete);
  delete_key->setShortcutContext(Qt::WidgetShortcut);
  list_->addAction(delete_key);
  connect(delete_key, &QAction::triggered, this, [this] {
    if (selected_row() >= 0) remove_step(selected_row());
  });
  connect(reset_, &QPushButton::clicked, this, [this] { reset_to_default(); });
  connect(copy_menu, &QMenu::aboutToShow, this, [this, copy_menu] {
    copy_menu->clear();
    QStringList kernels = same_shape_kernels ? same_shape_kernels(kernel_) : QStringList{};
    kernels.removeAll(kernel_);
    if (kernels.isEmpty()) {
      copy_menu->addAction(tr("No other kernel has this shape"))->setEnabled(false);
      return;
    }
    copy_menu->addAction(tr("All %1 kernels").arg(kernels.size()), this,
                         [this, kernels] { copy_schedule_to(kernels); });
    copy_menu->addSeparator();
    for (const QString& k : kernels) copy_menu->addAction(k, this, [this, k] { copy_schedule_to({k}); });
  });
  auto* apply_key = new QAction(text_);
  apply_key->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return));
  apply_key->setShortcutContext(Qt::WidgetShortcut);
  text_->addAction(apply_key);
  connect(apply_key, &QAction::triggered, this, [this] { apply_text(text_->toPlainText()); });
  connect(apply, &QPushButton::clicked, this, [this] { apply_text(text_->toPlainText()); });
  // Typing applies after a pause; a line that does not parse only marks itself.
  auto* pause = new QTimer(this);
  pause->setSingleShot(true);
  pause->setInterval(700);
  connect(text_, &QPlainTextEdit::textChanged, this, [this, pause] {
    if (!syncing_) pause->start();
  });
  connect(pause, &QTimer::timeout, this, [this] { apply_text(text_->toPlainText()); });
}

ScheduleEditorPane::~ScheduleEditorPane() = default;

ScheduleEditorPane::KernelState* ScheduleEditorPane::current() {
  auto it = kernels_.find(kernel_);
  return it == kernels_.end() ? nullptr : it->second.get();
}

void ScheduleEditorPane::set_kernel(const QString& kernel, te::ComputeDag dag, schedule::Schedule current_schedule,
                                    schedule::Schedule default_schedule) {
  auto& slot = kernels_[kernel];
  if (!slot) {
    slot = std::make_unique<KernelState>();
    slot->stack = new QUndoStack(undo_group_);
  }
  KernelState& st = *slot;
  if (enabled_schedule(st.entries) != current_schedule) {
    // Someone else changed the schedule (a loaded session, a copy from another kernel): the
    // list and its history restart from it.
    st.entries.clear();
    for (const schedule::ScheduleStep& s : current_schedule.steps) st.entries.push_back({s, true});
    st.stack->clear();
  }
  st.dag = std::move(dag);
  st.default_schedule = std::move(default_schedule);
  st.sent = current_schedule;
  kernel_ = kernel;
  if (lowering_ && q(lowering_->kernel) != kernel) lowering_.reset();
  text_error_.clear();
  undo_group_->setActiveStack(st.stack);
  setEnabled(true);
  title_->setText(kernel);
  badge_->clear();
  expression_->setPlainText(q(te::to_string(st.dag)));
  syncing_ = true;
  model_->set_entries(st.entries);
  syncing_ = false;
  sync_text();
  refresh_choices();
  show_errors();
}

void ScheduleEditorPane::clear(bool forget_kernels) {
  kernel_.clear();
  lowering_.reset();
  text_error_.clear();
  undo_group_->setActiveStack(nullptr);
  if (forget_kernels) {
    for (auto& [name, state] : kernels_) delete state->stack;  // owned by the group, not the state
    kernels_.clear();
  }
  title_->setText(tr("No kernel selected"));
  badge_->clear();
  expression_->clear();
  syncing_ = true;
  model_->set_entries({});
  text_->clear();
  syncing_ = false;
  error_->clear();
  error_->hide();
  setEnabled(false);
}

schedule::Schedule ScheduleEditorPane::schedule() const { return enabled_schedule(model_->entries()); }
const ScheduleEntries& ScheduleEditorPane::entries() const { return model_->entries(); }
QUndoStack* ScheduleEditorPane::undo_stack() const { return undo_group_->activeStack(); }
QString ScheduleEditorPane::badge_text() const { return badge_->text(); }
QString ScheduleEditorPane::error_text() const { return error_->text(); }

int ScheduleEditorPane::selected_row() const {
  QModelIndex i = list_->selectionModel()->currentIndex();
  return i.isValid() && list_->selectionModel()->isSelected(i) ? i.row() : -1;
}

void ScheduleEditorPane::push(ScheduleEntries after, const QString& text, bool is_reset) {
  KernelState* st = current();
  if (!st) return;
  if (after == st->entries && !is_reset) return;
  st->stack->push(new EntriesCommand(this, kernel_, st->entries, std::move(after), text, is_reset));
}

void ScheduleEditorPane::apply_entries(const ScheduleEntries& entries, bool is_reset) {
  KernelState* st = current();
  if (!st) return;
  st->entries = entries;
  const int keep_row = selected_row();
  syncing_ = true;
  model_->set_entries(entries);
  if (keep_row >= 0 && keep_row < model_->rowCount())
    list_->selectionModel()->setCurrentIndex(model_->index(keep_row), QItemSelectionModel::ClearAndSelect);
  syncing_ = false;
  sync_text();
  refresh_choices();
  show_errors();
  schedule::Schedule s = enabled_schedule(entries);
  if (is_reset) {
    st->sent = s;
    if (on_reset) on_reset(kernel_);
  } else if (s != st->sent) {
    st->sent = s;
    if (on_schedule_edited) on_schedule_edited(kernel_, s);
  }
}

void ScheduleEditorPane::add_step(const schedule::ScheduleStep& step, int row) {
  ScheduleEntries e = entries();
  size_t at = row < 0 || static_cast<size_t>(row) > e.size() ? e.size() : static_cast<size_t>(row);
  e.insert(e.begin() + static_cast<std::ptrdiff_t>(at), {step, true});
  push(std::move(e), tr("Add %1").arg(q(schedule::to_string(step))));
}

void ScheduleEditorPane::replace_step(int row, const schedule::ScheduleStep& step) {
  ScheduleEntries e = entries();
  if (row < 0 || static_cast<size_t>(row) >= e.size()) return;
  e[static_cast<size_t>(row)].step = step;
  push(std::move(e), tr("Edit step %1").arg(row + 1));
}

void ScheduleEditorPane::remove_step(int row) {
  ScheduleEntries e = entries();
  if (row < 0 || static_cast<size_t>(row) >= e.size()) return;
  QString text = tr("Delete %1").arg(q(schedule::to_string(e[static_cast<size_t>(row)].step)));
  e.erase(e.begin() + row);
  push(std::move(e), text);
}

void ScheduleEditorPane::move_step(int from, int to) {
  ScheduleEntries e = entries();
  const int n = static_cast<int>(e.size());
  if (from < 0 || from >= n || to < 0 || to >= n || from == to) return;
  ScheduleEntry moved = e[static_cast<size_t>(from)];
  e.erase(e.begin() + from);
  e.insert(e.begin() + to, moved);
  push(std::move(e), tr("Move step %1 to %2").arg(from + 1).arg(to + 1));
}

void ScheduleEditorPane::set_step_enabled(int row, bool enabled) {
  ScheduleEntries e = entries();
  if (row < 0 || static_cast<size_t>(row) >= e.size()) return;
  e[static_cast<size_t>(row)].enabled = enabled;
  push(std::move(e), enabled ? tr("Enable step %1").arg(row + 1) : tr("Disable step %1").arg(row + 1));
}

bool ScheduleEditorPane::apply_text(const QString& text) {
  if (!current()) return false;
  if (text_->toPlainText() != text) {  // applied from outside the editor: show it there too
    syncing_ = true;
    text_->setPlainText(text);
    syncing_ = false;
  }
  int line = 0;
  ScheduleEntries parsed;
  try {
    parsed = entries_from_text(text.toStdString(), &line);
  } catch (const Error& e) {
    text_error_ = q(e.what());
    highlighter_->set_error_line(line);
    show_errors();
    return false;
  }
  text_error_.clear();
  if (parsed == entries()) {
    show_errors();
    return true;
  }
  // The editor keeps the user's text (comments, spacing) rather than the canonical form.
  keep_text_ = true;
  push(std::move(parsed), tr("Edit schedule text"));
  keep_text_ = false;
  return true;
}

void ScheduleEditorPane::reset_to_default() {
  KernelState* st = current();
  if (!st) return;
  ScheduleEntries e;
  for (const schedule::ScheduleStep& s : st->default_schedule.steps) e.push_back({s, true});
  push(std::move(e), tr("Reset to default"), /*is_reset=*/true);
}

void ScheduleEditorPane::copy_schedule_to(const QStringList& kernels) {
  if (!on_copy_schedule) return;
  const schedule::Schedule s = schedule();
  for (const QString& k : kernels)
    if (k != kernel_) on_copy_schedule(k, s);
}

void ScheduleEditorPane::sync_text() {
  if (keep_text_) return;
  syncing_ = true;
  text_->setPlainText(q(entries_to_text(entries())));
  syncing_ = false;
}

void ScheduleEditorPane::set_target(const std::string& target_spec) {
  offer_ = views::target_offer(target_spec);
  refresh_choices();
}

void ScheduleEditorPane::refresh_choices() {
  KernelState* st = current();
  if (!st) return;
  const schedule::Schedule s = schedule();
  st->replay = step_choices(st->dag, s, s.steps.size(), offer_);
  // The form offers what exists where its step would go: before the selected step (replace,
  // insert), or after the last one when nothing is selected (append).
  const int row = selected_row();
  size_t before = s.steps.size();
  if (row >= 0) {
    before = 0;
    for (int r = 0; r < row; ++r) before += entries()[static_cast<size_t>(r)].enabled;
  }
  form_->set_choices(before == s.steps.size() ? st->replay : step_choices(st->dag, s, before, offer_));
  form_->set_replace_enabled(row >= 0);
  form_->add_button()->setText(row >= 0 ? tr("Insert before step %1").arg(row + 1) : tr("Add step"));
}

void ScheduleEditorPane::show_errors() {
  KernelState* st = current();
  QString message;
  int row = -1;
  if (st && !text_error_.isEmpty()) {
    message = text_error_;  // the highlighter already marks the line
  } else if (st) {
    const schedule::Schedule s = schedule();
    if (lowering_ && lowering_->schedule == s && !lowering_->error.empty()) {
      message = q(lowering_->error);
      row = row_of_enabled_step(entries(), lowering_->error_step);
    } else if (!st->replay.error.empty()) {
      // Not lowered yet (or no edit loop): replaying the steps already finds invalid arguments.
      message = q(st->replay.error);
      row = row_of_enabled_step(entries(), st->replay.applied);
    }
    highlighter_->set_error_line(line_of_row(text_->toPlainText(), row));
  }
  model_->set_error(row, message);
  // No error: the default's own fallback, when it has one (plain loops, or on the host instead of
  // the accelerator), in the words `tessel run --report` uses, so the user knows what runs.
  const bool note = message.isEmpty() && st && lowering_ && lowering_->schedule == schedule() &&
                    !lowering_->schedule_note.empty();
  error_->setStyleSheet(note ? "color: #7a5a00" : "color: #b41414");
  error_->setText(note ? QString::fromUtf8("ⓘ ") + q(lowering_->schedule_note)
                       : message.isEmpty() ? QString() : QString::fromUtf8("✗ ") + message);
  error_->setVisible(note || !message.isEmpty());
  if (row >= 0) list_->scrollTo(model_->index(row));
}

void ScheduleEditorPane::show_lowering(KernelLoweringPtr lowering) {
  KernelState* st = current();
  if (!lowering || !st || q(lowering->kernel) != kernel_ || lowering->generation < st->generation) return;
  st->generation = lowering->generation;
  lowering_ = std::move(lowering);
  if (!lowering_->tensor_expression.empty()) expression_->setPlainText(q(lowering_->tensor_expression));
  show_errors();
}

void ScheduleEditorPane::show_measuring(const QString& kernel) {
  if (kernel == kernel_) badge_->setText(QString::fromUtf8("… measuring"));
}

void ScheduleEditorPane::show_measurement(KernelMeasurementPtr m) {
  if (!m || q(m->kernel) != kernel_) return;
  KernelState* st = current();
  if (st && m->generation < st->generation) return;  // measures an older edit
  using V = KernelMeasurement::Verdict;
  const KernelTime t = kernel_time(*m);
  const QString time = q(t.text() + " · " + t.target_kind());
  switch (m->verdict) {
    case V::kPending:
      badge_->setText(QString::fromUtf8("… measuring"));
      break;
    case V::kCorrect:
      badge_->setText(QString::fromUtf8("✓ ") + time);
      break;
    case V::kWrong:
      badge_->setText(QString::fromUtf8("✗ wrong result (max error %1) · ").arg(m->max_abs_error, 0, 'g', 3) + time);
      break;
    case V::kFailed:
      badge_->setText(QString::fromUtf8("✗ ") + q(m->error));
      break;
  }
  badge_->setToolTip(q(t.definition()) + "\n" + q(m->target) +
                     (m->bound.empty() ? QString() : "\nbound: " + q(m->bound)));
}

std::string ScheduleEditorPane::text_form(const QString& kernel) const {
  auto it = kernels_.find(kernel);
  return it == kernels_.end() ? std::string() : entries_to_text(it->second->entries);
}

std::map<std::string, ScheduleHistory> ScheduleEditorPane::histories() const {
  std::map<std::string, ScheduleHistory> out;
  for (const auto& [kernel, state] : kernels_) {
    const QUndoStack* stack = state->stack;
    if (!stack || stack->count() == 0) continue;
    ScheduleHistory h;
    for (int i = 0; i < stack->count(); ++i) {
      const auto* command = static_cast<const EntriesCommand*>(stack->command(i));  // the only kind pushed
      if (i == 0) h.states.push_back(entries_to_text(command->before()));
      h.states.push_back(entries_to_text(command->after()));
      h.labels.push_back(command->text().toStdString());
    }
    h.index = stack->index();
    out[kernel.toStdString()] = std::move(h);
  }
  return out;
}

void ScheduleEditorPane::restore_history(const QString& kernel, const ScheduleHistory& history) {
  if (history.states.size() != history.labels.size() + 1 || history.index < 0 ||
      history.index > static_cast<int>(history.labels.size()))
    return;
  std::vector<ScheduleEntries> states;
  for (const std::string& text : history.states) states.push_back(entries_from_text(text));
  auto& slot = kernels_[kernel];
  if (!slot) {
    slot = std::make_unique<KernelState>();
    slot->stack = new QUndoStack(undo_group_);
  }
  // Commands of a kernel that is not shown change nothing when they run (EntriesCommand::apply):
  // the stack is rebuilt as if no kernel were shown, then the shown one is redrawn.
  const QString shown = kernel_;
  kernel_.clear();
  slot->stack->clear();
  for (size_t i = 0; i < history.labels.size(); ++i)
    slot->stack->push(
        new EntriesCommand(this, kernel, states[i], states[i + 1], QString::fromStdString(history.labels[i]), false));
  slot->stack->setIndex(history.index);
  slot->entries = states[static_cast<size_t>(history.index)];
  kernel_ = shown;
  if (kernel_ == kernel) {
    syncing_ = true;
    model_->set_entries(slot->entries);
    syncing_ = false;
    sync_text();
  }
}

void ScheduleEditorPane::restore_text(const QString& kernel, const std::string& text) {
  ScheduleEntries entries = entries_from_text(text);
  auto& slot = kernels_[kernel];
  if (!slot) {
    slot = std::make_unique<KernelState>();
    slot->stack = new QUndoStack(undo_group_);
  }
  slot->entries = std::move(entries);
}

void ScheduleEditorPane::highlight_step(int step) {
  int row = row_of_enabled_step(entries(), step);
  model_->set_highlight(row);
  syncing_ = true;
  if (row >= 0) {
    list_->selectionModel()->setCurrentIndex(model_->index(row), QItemSelectionModel::ClearAndSelect);
    list_->scrollTo(model_->index(row));
  } else {
    list_->selectionModel()->clearSelection();
  }
  syncing_ = false;
  refresh_choices();
  if (row >= 0) form_->load(entries()[static_cast<size_t>(row)].step);
}

}  // namespace tessel::views
