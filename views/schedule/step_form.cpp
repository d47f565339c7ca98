#include "views/schedule/step_form.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>

namespace tessel::views {

namespace {

using Arg = schedule::StepArgSpec;
using Role = schedule::StepArgSpec::Role;

// What each argument of the step kind refers to: the table's row (schedule::step_kinds()), the
// same one the parser and apply_step read. The palette offers only the table's kinds.
const std::vector<Arg>& args_of(const std::string& kind) {
  static const std::vector<Arg> none;
  const schedule::StepKindInfo* info = schedule::find_step_kind(kind);
  return info ? info->args : none;
}

QString q(const std::string& s) { return QString::fromStdString(s); }

std::string value_of(QWidget* w) {
  if (auto* c = qobject_cast<QComboBox*>(w)) return c->currentData().toString().toStdString();
  return {};
}

}  // namespace

StepForm::StepForm(QWidget* parent) : QWidget(parent) {
  kinds_ = new QComboBox(this);
  kinds_->setObjectName("step_palette");
  for (const schedule::StepKindInfo& k : schedule::step_kinds()) {
    kinds_->addItem(k.name, QString(k.name));
    kinds_->setItemData(kinds_->count() - 1, QString("%1\n%2").arg(k.signature, k.doc), Qt::ToolTipRole);
  }
  doc_ = new QLabel(this);
  doc_->setWordWrap(true);
  doc_->setStyleSheet("color: #555");
  form_ = new QFormLayout;
  form_->setContentsMargins(0, 0, 0, 0);
  add_ = new QPushButton(tr("Add step"), this);
  add_->setObjectName("add_step");
  replace_ = new QPushButton(tr("Replace selected"), this);
  replace_->setObjectName("replace_step");
  replace_->setEnabled(false);
  auto* buttons = new QHBoxLayout;
  buttons->addStretch(1);
  buttons->addWidget(add_);
  buttons->addWidget(replace_);
  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel(tr("Step"), this));
  top->addWidget(kinds_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(top);
  layout->addWidget(doc_);
  layout->addLayout(form_);
  layout->addLayout(buttons);

  connect(kinds_, &QComboBox::currentIndexChanged, this, [this] { rebuild(); });
  connect(add_, &QPushButton::clicked, this, [this] {
    if (on_add) on_add(current_step());
  });
  connect(replace_, &QPushButton::clicked, this, [this] {
    if (on_replace) on_replace(current_step());
  });
  rebuild();
}

QString StepForm::kind() const { return kinds_->currentData().toString(); }

void StepForm::set_kind(const QString& kind) {
  int i = kinds_->findData(kind);
  if (i >= 0 && i != kinds_->currentIndex()) kinds_->setCurrentIndex(i);  // rebuilds
}

void StepForm::set_replace_enabled(bool on) {
  replace_allowed_ = on;
  update_buttons();
}

void StepForm::set_choices(StepChoices choices) {
  // Keep what the user picked where it is still offered: remember values, rebuild, restore.
  schedule::ScheduleStep before = current_step();
  choices_ = std::move(choices);
  rebuild();
  if (before.kind == kind().toStdString()) load(before);
}

void StepForm::rebuild() {
  const std::string k = kind().toStdString();
  const schedule::StepKindInfo* info = schedule::find_step_kind(k);
  doc_->setText(info ? QString("%1 — %2").arg(info->signature, info->doc) : QString());
  while (form_->rowCount() > 0) form_->removeRow(0);  // deletes the row's widgets
  widgets_.clear();
  hints_.clear();
  const std::vector<Arg>& args = args_of(k);
  for (size_t i = 0; i < args.size(); ++i) {
    const Arg& a = args[i];
    QWidget* w = nullptr;
    QLabel* hint = new QLabel(this);
    hint->setStyleSheet("color: #777");
    if (a.role == Role::kInt) {
      auto* spin = new QSpinBox(this);
      spin->setRange(static_cast<int>(a.min), 1 << 24);
      spin->setValue(static_cast<int>(a.def));
      w = spin;
    } else if (a.role == Role::kReaders || a.role == Role::kAxisList) {
      auto* list = new QListWidget(this);
      list->setMaximumHeight(110);
      if (a.role == Role::kAxisList) list->setDragDropMode(QAbstractItemView::InternalMove);
      w = list;
    } else {
      auto* combo = new QComboBox(this);
      connect(combo, &QComboBox::currentIndexChanged, this, [this, i] { refresh_dependents(i); });
      w = combo;
    }
    w->setObjectName(QString("arg%1").arg(i));
    auto* row = new QHBoxLayout;
    row->addWidget(w, 1);
    row->addWidget(hint);
    form_->addRow(tr(a.label), row);
    widgets_.push_back(w);
    hints_.push_back(hint);
  }
  for (size_t i = 0; i < args.size(); ++i) refill(i);
  update_buttons();
}

void StepForm::update_buttons() {
  // A step needs every named argument: with no loop, stage or tensor to offer, nothing to add.
  bool complete = true;
  for (QWidget* w : widgets_)
    if (auto* combo = qobject_cast<QComboBox*>(w)) complete &= combo->currentIndex() >= 0;
  add_->setEnabled(complete);
  replace_->setEnabled(complete && replace_allowed_);
}

void StepForm::refill(size_t i) {
  const std::vector<Arg>& args = args_of(kind().toStdString());
  if (i >= args.size() || i >= widgets_.size()) return;
  const Arg& a = args[i];
  QWidget* w = widgets_[i];
  std::string ref_value = a.ref >= 0 ? value_of(widgets_[static_cast<size_t>(a.ref)]) : std::string();
  if (auto* spin = qobject_cast<QSpinBox*>(w)) {
    const AxisChoice* axis = a.ref >= 0 ? choices_.find_axis(ref_value) : nullptr;
    if (axis && axis->extent > 0) {
      spin->setMaximum(static_cast<int>(std::max<int64_t>(axis->extent, a.min)));
      hints_[i]->setText(tr("of %1").arg(axis->extent));
    } else {
      hints_[i]->clear();
    }
    return;
  }
  if (auto* list = qobject_cast<QListWidget*>(w)) {
    list->clear();
    std::vector<std::string> items;
    if (a.role == Role::kReaders) items = choices_.readers_of(ref_value);
    if (a.role == Role::kAxisList)
      if (const StageChoice* st = choices_.find(ref_value))
        for (const AxisChoice& ax : st->leaf) items.push_back(ax.full());
    for (const std::string& s : items) {
      auto* item = new QListWidgetItem(q(s), list);
      if (const AxisChoice* ax = choices_.find_axis(s)) item->setText(q(ax->label()));
      item->setData(Qt::UserRole, q(s));
      item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
      item->setCheckState(Qt::Checked);
    }
    return;
  }
  auto* combo = qobject_cast<QComboBox*>(w);
  if (!combo) return;
  QSignalBlocker block(combo);
  QString keep = combo->currentData().toString();
  combo->clear();
  auto add_axis = [&](const AxisChoice& ax) { combo->addItem(q(ax.label()), q(ax.full())); };
  switch (a.role) {
    case Role::kAxis:
      for (const AxisChoice& ax : choices_.all_leaf_axes()) add_axis(ax);
      break;
    case Role::kReduceAxis:
      for (const AxisChoice& ax : choices_.all_leaf_axes())
        if (ax.is_reduce) add_axis(ax);
      break;
    case Role::kRootAxis:
      for (const StageChoice& st : choices_.stages)
        for (const AxisChoice& ax : st.roots) add_axis(ax);
      break;
    case Role::kSameStageAxis: {
      const AxisChoice* ref = choices_.find_axis(ref_value);
      if (const StageChoice* st = ref ? choices_.find(ref->stage) : nullptr) {
        bool after_ref = false;
        int next = -1;  // default: the loop right after the reference one (what fuse needs)
        for (const AxisChoice& ax : st->leaf) {
          if (ax.full() == ref_value) {
            after_ref = true;
            continue;
          }
          add_axis(ax);
          if (after_ref && next < 0) next = combo->count() - 1;
        }
        if (keep.isEmpty() && next >= 0 && next < combo->count()) keep = combo->itemData(next).toString();
      }
      break;
    }
    case Role::kConsumerAxis: {
      const StageChoice* st = choices_.find(ref_value);
      for (const std::string& reader : st ? st->consumers : std::vector<std::string>{})
        if (const StageChoice* r = choices_.find(reader))
          for (const AxisChoice& ax : r->leaf) add_axis(ax);
      break;
    }
    case Role::kStage:
    case Role::kInnerStage:
      for (const StageChoice& st : choices_.stages)
        if (a.role == Role::kStage || !st.is_output) combo->addItem(q(st.name + "  (" + st.attach + ")"), q(st.name));
      break;
    case Role::kTensor:
      for (const std::string& t : choices_.tensors) combo->addItem(q(t), q(t));
      break;
    case Role::kScope:
      for (const std::string& s : choices_.scopes) combo->addItem(q(s), q(s));
      break;
    case Role::kTag:
      for (const std::string& s : choices_.thread_tags) combo->addItem(q(s), q(s));
      break;
    case Role::kIntrinsic:
      for (const std::string& s : choices_.intrinsics) combo->addItem(q(s), q(s));
      break;
    case Role::kSplitMode:
      combo->addItem(tr("factor (inner extent)"), QString("factor"));
      combo->addItem(tr("nparts (outer parts)"), QString("nparts"));
      break;
    default:
      break;
  }
  int at = combo->findData(keep);
  combo->setCurrentIndex(at >= 0 ? at : (combo->count() ? 0 : -1));
  hints_[i]->setText(combo->count() == 0 ? tr("none available") : QString());
}

void StepForm::refresh_dependents(size_t changed) {
  const std::vector<Arg>& args = args_of(kind().toStdString());
  for (size_t j = 0; j < args.size(); ++j)
    if (args[j].ref == static_cast<int>(changed)) {
      if (auto* combo = qobject_cast<QComboBox*>(widgets_[j])) combo->setCurrentIndex(-1);  // re-pick the default
      refill(j);
      refresh_dependents(j);
    }
  update_buttons();
}

schedule::ScheduleStep StepForm::current_step() const {
  schedule::ScheduleStep s;
  s.kind = kind().toStdString();
  const std::vector<Arg>& args = args_of(s.kind);
  bool nparts = false;
  for (size_t i = 0; i < args.size() && i < widgets_.size(); ++i) {
    const Arg& a = args[i];
    QWidget* w = widgets_[i];
    if (a.role == Role::kSplitMode) {
      nparts = value_of(w) == "nparts";
    } else if (auto* spin = qobject_cast<QSpinBox*>(w)) {
      s.args.push_back(*a.key ? schedule::keyed(a.key, spin->value()) : schedule::arg(int64_t{spin->value()}));
    } else if (auto* list = qobject_cast<QListWidget*>(w)) {
      for (int r = 0; r < list->count(); ++r)
        if (list->item(r)->checkState() == Qt::Checked)
          s.args.push_back(schedule::arg(list->item(r)->data(Qt::UserRole).toString().toStdString()));
    } else if (a.role != Role::kStage || s.kind != "reorder") {  // reorder's stage only filters the list
      s.args.push_back(schedule::arg(value_of(w)));
    }
  }
  if (nparts && s.args.size() >= 2) s.args[1].key = "nparts";
  return s;
}

void StepForm::load(const schedule::ScheduleStep& step) {
  set_kind(q(step.kind));
  const std::vector<Arg>& args = args_of(step.kind);
  size_t next = 0;  // the step's next unused argument
  auto name_at = [&](size_t k) {
    return k < step.args.size() && !step.args[k].is_int() ? q(std::get<std::string>(step.args[k].value)) : QString();
  };
  for (size_t i = 0; i < args.size() && i < widgets_.size(); ++i) {
    const Arg& a = args[i];
    QWidget* w = widgets_[i];
    if (a.role == Role::kSplitMode) {
      bool by_nparts = step.args.size() >= 2 && step.args[1].key == "nparts";
      static_cast<QComboBox*>(w)->setCurrentIndex(by_nparts ? 1 : 0);
    } else if (auto* spin = qobject_cast<QSpinBox*>(w)) {
      for (size_t k = next; k < step.args.size(); ++k)
        if (step.args[k].is_int()) {
          spin->setValue(static_cast<int>(std::get<int64_t>(step.args[k].value)));
          next = k + 1;
          break;
        }
    } else if (auto* list = qobject_cast<QListWidget*>(w)) {
      QStringList wanted;
      for (size_t k = next; k < step.args.size(); ++k) wanted << name_at(k);
      // Listed names first, in the step's order, checked; the rest after them, unchecked.
      for (int r = 0; r < list->count(); ++r) list->item(r)->setCheckState(Qt::Unchecked);
      int pos = 0;
      for (const QString& name : wanted)
        for (int r = pos; r < list->count(); ++r)
          if (list->item(r)->data(Qt::UserRole).toString() == name) {
            QListWidgetItem* item = list->takeItem(r);
            list->insertItem(pos++, item);
            item->setCheckState(Qt::Checked);
            break;
          }
      next = step.args.size();
    } else if (auto* combo = qobject_cast<QComboBox*>(w)) {
      QString name = name_at(next);
      if (a.role == Role::kStage && step.kind == "reorder") {
        // The stage of the listed loops: "C.i.outer" -> "C".
        name = name.section('.', 0, 0);
      } else {
        ++next;
      }
      int at = combo->findData(name);
      if (at >= 0) combo->setCurrentIndex(at);  // refills the arguments that depend on it
    }
  }
}

}  // namespace tessel::views
