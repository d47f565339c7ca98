#include "views/program/program_pane.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QListView>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QShortcut>
#include <QSlider>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTextBlock>
#include <QVBoxLayout>
#include <sstream>

#include "views/program/code_highlighter.h"
#include "views/program/find_bar.h"
#include "views/program/program_step_model.h"

namespace tessel::views {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

QPlainTextEdit* make_code_view(QWidget* parent, CodeHighlighter::Language language) {
  auto* e = new QPlainTextEdit(parent);
  e->setReadOnly(true);
  e->setLineWrapMode(QPlainTextEdit::NoWrap);
  e->setFont(QFont("monospace", 9));
  new CodeHighlighter(e->document(), language);
  return e;
}

QString artifact_title(const std::string& name) {
  if (name == "llvm_ir") return "LLVM IR";
  if (name == "asm") return "Assembly";
  if (name == "c_source") return "C source";
  return q(name);
}

// Translucent, so the marks read on light and dark palettes alike.
QColor background_of(DiffLine::Kind k) {
  switch (k) {
    case DiffLine::Kind::kAdded:
      return QColor(40, 180, 40, 60);
    case DiffLine::Kind::kRemoved:
      return QColor(230, 40, 40, 55);
    case DiffLine::Kind::kFiller:
      return QColor(128, 128, 128, 40);
    default:
      return {};
  }
}

// Shows `lines` in `edit`, each line's background marking its kind, `picked` (a block number)
// emphasized; `prefix` adds the inline diff's "+ " / "- " marks.
void show_lines(QPlainTextEdit* edit, const std::vector<DiffLine>& lines, bool prefix, int picked) {
  QString text;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) text += '\n';
    if (prefix)
      text += lines[i].kind == DiffLine::Kind::kAdded ? "+ " : lines[i].kind == DiffLine::Kind::kRemoved ? "- " : "  ";
    text += q(lines[i].text);
  }
  const int scroll = edit->verticalScrollBar()->value();
  edit->setPlainText(text);
  edit->verticalScrollBar()->setValue(scroll);
  QList<QTextEdit::ExtraSelection> marks;
  for (size_t i = 0; i < lines.size(); ++i) {
    QColor bg = static_cast<int>(i) == picked ? QColor(255, 200, 0, 110) : background_of(lines[i].kind);
    if (!bg.isValid()) continue;
    QTextEdit::ExtraSelection s;
    s.cursor = QTextCursor(edit->document()->findBlockByNumber(static_cast<int>(i)));
    s.format.setBackground(bg);
    s.format.setProperty(QTextFormat::FullWidthSelection, true);
    marks.push_back(s);
  }
  edit->setExtraSelections(marks);
}

std::vector<DiffLine> same_lines(const std::string& text) {
  std::vector<DiffLine> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back({DiffLine::Kind::kSame, line});
  return out;
}

}  // namespace

ProgramPane::ProgramPane(QWidget* parent) : QWidget(parent), model_(new ProgramStepModel(this)) {
  setObjectName("program");
  title_ = new QLabel(tr("No kernel selected"), this);
  title_->setStyleSheet("font-weight: bold");
  // Long kernel names must not widen the dock: the label is cut, its tooltip holds the name.
  title_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  source_box_ = new QComboBox(this);
  source_box_->addItem(tr("Schedule steps"));
  source_box_->addItem(tr("Lowering passes"));
  mode_box_ = new QComboBox(this);
  mode_box_->addItem(tr("Inline diff"));
  mode_box_->addItem(tr("Side by side"));
  hide_ = new QCheckBox(tr("Hide unchanged"), this);
  hide_->setToolTip(tr("Hide steps that changed nothing"));
  slider_ = new QSlider(Qt::Horizontal, this);
  slider_->setRange(0, 0);
  slider_->setPageStep(1);
  list_ = new QListView(this);
  list_->setModel(model_);
  list_->setSelectionMode(QAbstractItemView::SingleSelection);
  list_->setFont(QFont("monospace", 9));
  status_ = new QLabel(this);
  status_->setWordWrap(true);

  inline_ = make_code_view(this, CodeHighlighter::Language::kLoop);
  inline_->setObjectName("program_inline");
  left_ = make_code_view(this, CodeHighlighter::Language::kLoop);
  right_ = make_code_view(this, CodeHighlighter::Language::kLoop);
  // The two sides scroll together: their lines are aligned by filler lines.
  connect(left_->verticalScrollBar(), &QScrollBar::valueChanged, right_->verticalScrollBar(), &QScrollBar::setValue);
  connect(right_->verticalScrollBar(), &QScrollBar::valueChanged, left_->verticalScrollBar(), &QScrollBar::setValue);
  auto* sides = new QSplitter(Qt::Horizontal, this);
  sides->addWidget(left_);
  sides->addWidget(right_);
  stack_ = new QStackedWidget(this);
  stack_->addWidget(inline_);
  stack_->addWidget(sides);
  find_ = new FindBar(this);
  auto* program_page = new QWidget(this);
  auto* page_layout = new QVBoxLayout(program_page);
  page_layout->setContentsMargins(0, 0, 0, 0);
  page_layout->addWidget(stack_, 1);
  tabs_ = new QTabWidget(this);
  tabs_->addTab(program_page, tr("Program"));

  auto* scrub = new QWidget(this);
  auto* scrub_layout = new QVBoxLayout(scrub);
  scrub_layout->setContentsMargins(0, 0, 0, 0);
  scrub_layout->addWidget(slider_);
  scrub_layout->addWidget(list_, 1);
  // The steps above the code: the code gets the pane's whole width (beside it, the list took
  // most of a docked pane and left the code a dozen characters).
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(scrub);
  split->addWidget(tabs_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 4);
  split->setChildrenCollapsible(false);
  list_->setMinimumHeight(60);
  scrub->setMaximumHeight(220);
  auto* controls = new QHBoxLayout;
  controls->addWidget(title_, 1);
  controls->addWidget(source_box_);
  controls->addWidget(mode_box_);
  controls->addWidget(hide_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(controls);
  layout->addWidget(status_);
  layout->addWidget(split, 1);
  layout->addWidget(find_);

  find_->target = [this]() -> QPlainTextEdit* {
    if (tabs_->currentIndex() > 0) return qobject_cast<QPlainTextEdit*>(tabs_->currentWidget());
    return mode_ == DiffMode::kInline ? inline_ : right_;
  };
  auto* find_key = new QShortcut(QKeySequence::Find, this, [this] { find_->open(); });
  find_key->setContext(Qt::WidgetWithChildrenShortcut);

  connect(source_box_, &QComboBox::currentIndexChanged, this,
          [this](int i) { set_source(i == 1 ? Source::kPasses : Source::kSteps); });
  connect(mode_box_, &QComboBox::currentIndexChanged, this,
          [this](int i) { set_diff_mode(i == 1 ? DiffMode::kSideBySide : DiffMode::kInline); });
  connect(hide_, &QCheckBox::toggled, this, [this](bool on) { set_hide_unchanged(on); });
  connect(slider_, &QSlider::valueChanged, this, [this](int row) {
    if (!syncing_) show_view(model_->view_of_row(row));
  });
  connect(list_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& i) {
    if (syncing_ || !i.isValid()) return;
    show_view(model_->view_of_row(i.row()));
  });
  for (QPlainTextEdit* e : {inline_, right_})
    connect(e, &QPlainTextEdit::cursorPositionChanged, this, [this, e] {
      if (!syncing_) pick_line(e->textCursor().blockNumber());
    });
}

const std::vector<lower::ViewRecord>& ProgramPane::views() const { return model_->views(); }

void ProgramPane::show_lowering(KernelLoweringPtr lowering) {
  if (!lowering) return;
  if (lowering_ && lowering_->kernel == lowering->kernel && lowering->generation < lowering_->generation) return;
  if (!lowering_ || lowering_->kernel != lowering->kernel) {
    measurement_.reset();
    while (tabs_->count() > 1) {
      QWidget* w = tabs_->widget(1);
      tabs_->removeTab(1);
      delete w;
    }
  }
  lowering_ = std::move(lowering);
  title_->setText(q(lowering_->kernel));
  title_->setToolTip(title_->text());
  rebuild_source();
  view_ = static_cast<int>(views().size()) - 1;  // the newest program: what the edit made
  picked_step_ = -2;
  picked_line_ = -1;
  sync_scrubbers();
  render();
}

void ProgramPane::clear() {
  lowering_.reset();
  measurement_.reset();
  while (tabs_->count() > 1) {
    QWidget* w = tabs_->widget(1);
    tabs_->removeTab(1);
    delete w;
  }
  title_->setText(tr("No kernel selected"));
  title_->setToolTip({});
  rebuild_source();
  view_ = 0;
  picked_step_ = -2;
  picked_line_ = -1;
  sync_scrubbers();
  render();
}

void ProgramPane::rebuild_source() {
  syncing_ = true;
  if (!lowering_)
    model_->set_views({});
  else
    model_->set_views(source_ == Source::kSteps ? lowering_->steps : lowering_->passes);
  syncing_ = false;
}

void ProgramPane::show_measurement(KernelMeasurementPtr m) {
  if (!m || !lowering_ || m->kernel != lowering_->kernel || m->generation < lowering_->generation) return;
  const QString keep = tabs_->currentIndex() > 0 ? tabs_->tabText(tabs_->currentIndex()) : QString();
  measurement_ = std::move(m);
  while (tabs_->count() > 1) {
    QWidget* w = tabs_->widget(1);
    tabs_->removeTab(1);
    delete w;
  }
  for (const auto& [name, text] : measurement_->artifacts) {
    QPlainTextEdit* e = make_code_view(tabs_, CodeHighlighter::language_of(q(name)));
    e->setObjectName(q(name));
    e->setPlainText(q(text));
    int at = tabs_->addTab(e, artifact_title(name));
    if (tabs_->tabText(at) == keep) tabs_->setCurrentIndex(at);
  }
}

QStringList ProgramPane::artifact_names() const {
  QStringList out;
  for (int i = 1; i < tabs_->count(); ++i) out << tabs_->widget(i)->objectName();
  return out;
}

QPlainTextEdit* ProgramPane::artifact_edit(const QString& name) const {
  for (int i = 1; i < tabs_->count(); ++i)
    if (tabs_->widget(i)->objectName() == name) return qobject_cast<QPlainTextEdit*>(tabs_->widget(i));
  return nullptr;
}

void ProgramPane::set_source(Source source) {
  if (source_box_->currentIndex() != (source == Source::kPasses ? 1 : 0))
    source_box_->setCurrentIndex(source == Source::kPasses ? 1 : 0);  // comes back here
  if (source == source_) return;
  source_ = source;
  rebuild_source();
  view_ = static_cast<int>(views().size()) - 1;
  picked_line_ = -1;
  sync_scrubbers();
  render();
}

void ProgramPane::set_diff_mode(DiffMode mode) {
  if (mode_box_->currentIndex() != (mode == DiffMode::kSideBySide ? 1 : 0))
    mode_box_->setCurrentIndex(mode == DiffMode::kSideBySide ? 1 : 0);
  if (mode == mode_) return;
  mode_ = mode;
  picked_line_ = -1;
  render();
}

void ProgramPane::set_hide_unchanged(bool hide) {
  if (hide_->isChecked() != hide) hide_->setChecked(hide);
  syncing_ = true;
  model_->set_hide_unchanged(hide);
  syncing_ = false;
  // A hidden view stays shown until the user scrubs: the list points at the nearest row before it.
  sync_scrubbers();
}

void ProgramPane::show_view(int view) {
  const int n = static_cast<int>(views().size());
  if (n == 0) return;
  view = std::clamp(view, 0, n - 1);
  if (view == view_ && !diff_.empty()) return;
  view_ = view;
  picked_line_ = -1;
  sync_scrubbers();
  render();
}

void ProgramPane::sync_scrubbers() {
  syncing_ = true;
  slider_->setRange(0, std::max(0, model_->rowCount() - 1));
  int row = model_->row_of_view(view_);
  if (row >= 0) {
    slider_->setValue(row);
    list_->selectionModel()->setCurrentIndex(model_->index(row), QItemSelectionModel::ClearAndSelect);
  }
  syncing_ = false;
}

void ProgramPane::render() {
  syncing_ = true;
  const auto& vs = views();
  diff_.clear();
  std::vector<DiffLine> left, right;
  QString status;
  if (!lowering_) {
    status = tr("No kernel selected");
  } else if (vs.empty()) {
    status = lowering_->error.empty() ? tr("Nothing to show") : QString::fromUtf8("✗ ") + q(lowering_->error);
  } else {
    const lower::ViewRecord& v = vs[static_cast<size_t>(view_)];
    const std::string before = view_ > 0 ? vs[static_cast<size_t>(view_ - 1)].record.text() : std::string();
    if (v.record.failed()) {
      // A failing step has no program: show the last good one, unchanged, under the error.
      diff_ = same_lines(before);
      status = QString::fromUtf8("✗ ") + q(v.record.error);
    } else {
      diff_ = view_ == 0 ? same_lines(v.record.text()) : inline_diff(before, v.record.text(), v.diff);
      int added = 0, removed = 0;
      for (const DiffLine& d : diff_) {
        added += d.kind == DiffLine::Kind::kAdded;
        removed += d.kind == DiffLine::Kind::kRemoved;
      }
      status = tr("%1 of %2: %3   ·   %4 ms   ·   +%5 −%6 lines")
                   .arg(view_ + 1)
                   .arg(vs.size())
                   .arg(q(v.record.name))
                   .arg(v.record.wall_ms, 0, 'f', 2)
                   .arg(added)
                   .arg(removed);
      if (!v.record.changed && view_ > 0) status += tr("   ·   changed nothing");
      if (source_ == Source::kSteps && !lowering_->error.empty())
        status += QString::fromUtf8("\n✗ ") + q(lowering_->error);
    }
  }
  status_->setText(status);
  status_->setStyleSheet(status.contains(QString::fromUtf8("✗")) ? "color: #b41414" : QString());
  stack_->setCurrentIndex(mode_ == DiffMode::kInline ? 0 : 1);
  if (mode_ == DiffMode::kInline) {
    show_lines(inline_, diff_, /*prefix=*/true, picked_line_);
  } else {
    SideBySide sbs = side_by_side(diff_);
    show_lines(left_, sbs.left, false, -1);
    show_lines(right_, sbs.right, false, picked_line_);
  }
  // Scroll to the first change, so scrubbing shows what each step did.
  QPlainTextEdit* shown = mode_ == DiffMode::kInline ? inline_ : right_;
  for (size_t i = 0; i < diff_.size(); ++i)
    if (diff_[i].kind != DiffLine::Kind::kSame && picked_line_ < 0) {
      int block = static_cast<int>(i);
      if (mode_ == DiffMode::kSideBySide) {
        SideBySide sbs = side_by_side(diff_);
        for (size_t k = 0; k < sbs.right.size(); ++k)
          if (sbs.right[k].kind != DiffLine::Kind::kSame) {
            block = static_cast<int>(k);
            break;
          }
      }
      QTextCursor c(shown->document()->findBlockByNumber(block));
      shown->setTextCursor(c);
      shown->centerCursor();
      break;
    }
  syncing_ = false;
}

QStringList ProgramPane::added_lines() const {
  QStringList out;
  for (const DiffLine& d : diff_)
    if (d.kind == DiffLine::Kind::kAdded) out << q(d.text);
  return out;
}

QStringList ProgramPane::removed_lines() const {
  QStringList out;
  for (const DiffLine& d : diff_)
    if (d.kind == DiffLine::Kind::kRemoved) out << q(d.text);
  return out;
}

std::string ProgramPane::current_program() const {
  const auto& vs = views();
  if (vs.empty()) return std::string();
  const StepRecord& r = vs[static_cast<size_t>(view_)].record;
  return r.failed() ? std::string() : r.text();  // a failed step made no program (its record keeps the last one)
}

void ProgramPane::highlight_step(int step) {
  if (!lowering_) return;
  if (source_ != Source::kSteps) set_source(Source::kSteps);
  show_view(step + 1);  // its added lines are the marked ones
}

void ProgramPane::pick_line(int line) {
  if (!lowering_ || line < 0) return;
  std::vector<DiffLine> lines = mode_ == DiffMode::kInline ? diff_ : side_by_side(diff_).right;
  if (static_cast<size_t>(line) >= lines.size() || lines[static_cast<size_t>(line)].kind == DiffLine::Kind::kRemoved)
    return;
  const std::string var = loop_var_of_line(lines[static_cast<size_t>(line)].text);
  if (var.empty()) return;
  // In the passes source the loops are those of the whole schedule: look them up in its last step.
  const auto& steps = lowering_->steps;
  int at = source_ == Source::kSteps ? view_ : static_cast<int>(steps.size()) - 1;
  while (at > 0 && steps[static_cast<size_t>(at)].record.failed()) --at;
  int view = view_that_introduced_loop(steps, at, var);
  if (view < 0) return;
  picked_step_ = view - 1;
  picked_line_ = line;
  render();
  if (on_step_picked) on_step_picked(picked_step_);
}

}  // namespace tessel::views
