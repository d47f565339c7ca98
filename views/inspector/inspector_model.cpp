#include "views/inspector/inspector_model.h"

#include <QFont>

#include "core/compile/kernel_compiler.h"
#include "core/graph/passes/fusion_explain.h"

namespace tessel::views {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

InspectorRow section(const QString& title) { return {true, title, {}, {}, {}}; }
InspectorRow row(const QString& property, const QString& value, const QString& def = {}, const QString& doc = {}) {
  return {false, property, value, def, doc};
}

QString value_text(const Graph& g, ValueId id) {
  const Value& v = g.value(id);
  QString text = q(type_str(v.type));
  if (!v.layout.empty()) text += " {" + q(v.layout) + "}";
  if (g.is_constant(id))
    text += QObject::tr(" (constant)");
  else if (g.is_input(id))
    text += QObject::tr(" (graph input)");
  return text;
}

// Thousands separated by thin spaces' plain cousin, so 1179648 reads "1 179 648" in any locale.
QString count_text(int64_t n) {
  QString digits = QString::number(n < 0 ? -n : n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ' ');
  return n < 0 ? "-" + digits : digits;
}

int64_t value_bytes(const Value& v) {
  return shape_numel(v.type.shape) * static_cast<int64_t>(dtype_size(v.type.dtype));
}

const Node* find_node(const Graph& g, const std::string& name, NodeId* id) {
  for (NodeId i = 0; i < static_cast<NodeId>(g.nodes.size()); ++i)
    if (g.nodes[static_cast<size_t>(i)].name == name) {
      *id = i;
      return &g.nodes[static_cast<size_t>(i)];
    }
  return nullptr;
}

}  // namespace

void InspectorModel::set_rows(QString title, std::vector<InspectorRow> rows) {
  beginResetModel();
  title_ = std::move(title);
  rows_ = std::move(rows);
  endResetModel();
}

void InspectorModel::clear() { set_rows({}, {}); }

void InspectorModel::show_node(const StudioSnapshotPtr& snap, int pass, const QString& name) {
  GraphPtr graph = snap ? snap->graph_at(pass) : nullptr;
  NodeId id = -1;
  const Node* node = graph ? find_node(*graph, name.toStdString(), &id) : nullptr;
  if (!node) {
    // Graph inputs and outputs are selectable too; show their type.
    if (graph)
      for (const Value& v : graph->values)
        if (v.name == name.toStdString()) {
          ValueId vid = static_cast<ValueId>(&v - graph->values.data());
          set_rows(tr("Value %1").arg(name),
                   {section(tr("Value")), row(tr("name"), name), row(tr("type"), value_text(*graph, vid))});
          return;
        }
    clear();
    return;
  }
  const Graph& g = *graph;
  const OpDef& op = *node->op;
  std::vector<InspectorRow> rows;
  rows.push_back(section(tr("Node")));
  rows.push_back(row(tr("name"), name));
  rows.push_back(row(tr("op"), q(op.name), {}, q(op.doc)));
  rows.push_back(
      row(tr("pattern"), q(std::string(pattern_name(op.pattern))), {}, tr("how the fusion pass treats this op")));

  rows.push_back(section(tr("Inputs")));
  for (size_t i = 0; i < node->inputs.size(); ++i) {
    ValueId v = node->inputs[i];
    if (v == kNoValue) {
      rows.push_back(row(tr("input %1").arg(i), tr("(omitted)")));
      continue;
    }
    rows.push_back(row(tr("input %1").arg(i), value_text(g, v), {}, q(g.value(v).name)));
  }
  rows.push_back(section(tr("Outputs")));
  for (size_t i = 0; i < node->outputs.size(); ++i)
    rows.push_back(row(tr("output %1").arg(i), value_text(g, node->outputs[i]), {}, q(g.value(node->outputs[i]).name)));

  rows.push_back(section(tr("Attributes")));
  std::vector<std::pair<std::string, std::string>> values =
      node->attrs ? node->attrs->fields() : std::vector<std::pair<std::string, std::string>>{};
  std::vector<FieldDoc> docs = op.attr_doc ? op.attr_doc() : std::vector<FieldDoc>{};
  if (docs.empty()) rows.push_back(row(tr("(none)"), {}));
  for (const FieldDoc& d : docs) {
    QString value;
    for (const auto& [field, text] : values)
      if (field == d.name) value = q(text);
    QString doc = q(d.doc);
    if (!d.range.empty()) doc += " [" + q(d.range) + "]";
    rows.push_back(row(q(d.name), value, d.required ? tr("(required)") : q(d.default_value), doc));
  }

  // A node with bodies (If, Loop, Scan): each body's inputs and outputs, as the graph pane shows
  // them when the body is opened. Captured inputs are values the body reads from this graph.
  for (const auto& [field, body] : node_subgraphs(*node)) {
    rows.push_back(section(tr("Body %1 (%2)").arg(q(field), q(body->name))));
    const size_t formal = body->inputs.size() - static_cast<size_t>(body->captured_inputs);
    for (size_t i = 0; i < body->inputs.size(); ++i) {
      const Value& v = body->value(body->inputs[i]);
      const QString type = v.type_known() ? q(type_str(v.type)) : tr("(typed when run)");
      rows.push_back(row(i < formal ? tr("input %1").arg(i) : tr("reads"), type, {}, q(v.name)));
    }
    for (size_t i = 0; i < body->outputs.size(); ++i) {
      const Value& v = body->value(body->outputs[i]);
      rows.push_back(
          row(tr("output %1").arg(i), v.type_known() ? q(type_str(v.type)) : tr("(typed when run)"), {}, q(v.name)));
    }
    rows.push_back(row(tr("nodes"), QString::number(body->nodes.size()), {},
                       tr("double-click the node in the graph pane to open the body")));
  }

  rows.push_back(section(tr("Cost")));
  int64_t flops = 0;
  try {
    flops = node_flops(g, *node);
  } catch (const std::exception&) {
    flops = -1;
  }
  int64_t bytes = 0;
  for (ValueId v : node->inputs)
    if (v != kNoValue) bytes += value_bytes(g.value(v));
  for (ValueId v : node->outputs) bytes += value_bytes(g.value(v));
  rows.push_back(row(tr("FLOPs"), flops < 0 ? tr("unknown") : count_text(flops)));
  rows.push_back(row(tr("bytes"), count_text(bytes), {}, tr("inputs + outputs, each read or written once")));
  if (flops > 0 && bytes > 0)
    rows.push_back(row(tr("intensity"),
                       QString::number(static_cast<double>(flops) / static_cast<double>(bytes), 'f', 2) + " FLOP/B"));

  if (snap->fusion && graph == snap->optimized && id >= 0 &&
      static_cast<size_t>(id) < snap->fusion->group_of_node.size() &&
      snap->fusion->group_of_node[static_cast<size_t>(id)] >= 0) {
    const FusionGroup& group = snap->fusion->group_of(id);
    rows.push_back(section(tr("Fusion")));
    rows.push_back(row(tr("kernel"), q(group.kernel_name)));
    rows.push_back(
        row(tr("anchor"), group.anchor == id ? tr("this node") : q(g.nodes[static_cast<size_t>(group.anchor)].name)));
    // Each edge of the node: fused, or the rule that kept it apart, in words (what
    // `tessel passes --why NODE` prints). The property column stays short ("edge in 0"); the
    // value and the node at the far end lead the description, which the pane lets wrap.
    int in = 0, out = 0;
    for (const EdgeExplanation& e : explain_node_fusion(g, *snap->fusion, id).edges) {
      const QString edge = e.incoming ? tr("edge in %1").arg(in++) : tr("edge out %1").arg(out++);
      const QString far = e.other < 0 ? QString()
                                      : (e.incoming ? tr(" from '%1'") : tr(" to '%1'"))
                                            .arg(q(g.nodes[static_cast<size_t>(e.other)].name));
      const QString verdict = e.other < 0 ? tr("-")
                              : e.fused   ? tr("fused")
                              : e.rule    ? tr("not fused: %1").arg(q(std::string(fusion_block_name(*e.rule))))
                                          : tr("not fused");
      rows.push_back(row(edge, verdict, {}, q(g.value(e.value).name) + far + ": " + q(e.sentence)));
    }
  }
  set_rows(tr("%1 · %2").arg(q(op.name), name), std::move(rows));
}

void InspectorModel::show_kernel(const StudioSnapshotPtr& snap, const QString& kernel) {
  if (!snap || !snap->fusion || !snap->optimized || !compile::has_kernel(*snap->fusion, kernel.toStdString()))
    return clear();
  const Graph& g = *snap->optimized;
  const FusionGroup& group = compile::find_kernel(*snap->fusion, kernel.toStdString());
  std::vector<InspectorRow> rows;
  rows.push_back(section(tr("Fusion group")));
  rows.push_back(row(tr("kernel"), kernel));
  rows.push_back(
      row(tr("pattern"), q(std::string(pattern_name(group.pattern))), {}, tr("the most complex member's kind")));
  if (group.anchor >= 0) rows.push_back(row(tr("anchor"), q(g.nodes[static_cast<size_t>(group.anchor)].name)));
  rows.push_back(row(tr("inputs"), QString::number(group.inputs.size())));
  rows.push_back(row(tr("outputs"), QString::number(group.outputs.size())));
  rows.push_back(section(tr("Ops")));
  for (NodeId n : group.nodes) {
    const Node& node = g.nodes[static_cast<size_t>(n)];
    rows.push_back(row(q(node.name), q(node.op->name), {}, q(node.attrs ? node.attrs->print_non_default() : "")));
  }
  rows.push_back(section(tr("Cost")));
  QString flops;
  try {
    flops = count_text(compile::kernel_flops(g, group));
  } catch (const std::exception& e) {  // an op whose cost function cannot price these attributes
    flops = tr("unknown (%1)").arg(q(e.what()));
  }
  rows.push_back(row(tr("FLOPs"), flops));
  rows.push_back(row(tr("bytes"), count_text(compile::kernel_bytes(g, group)), {},
                     tr("group inputs + outputs; intermediates stay in registers")));
  set_rows(tr("kernel %1").arg(kernel), std::move(rows));
}

const InspectorRow* InspectorModel::find(const QString& property, const QString& in_section) const {
  bool in = in_section.isEmpty();
  for (const InspectorRow& r : rows_) {
    if (r.section) {
      in = in_section.isEmpty() || r.property == in_section;
      continue;
    }
    if (in && r.property == property) return &r;
  }
  return nullptr;
}

QString InspectorModel::value_of(const QString& property, const QString& in_section) const {
  const InspectorRow* r = find(property, in_section);
  return r ? r->value : QString();
}

int InspectorModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int InspectorModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant InspectorModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= static_cast<int>(rows_.size())) return {};
  const InspectorRow& r = rows_[static_cast<size_t>(index.row())];
  if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
    switch (index.column()) {
      case kProperty:
        return r.property;
      case kValue:
        return r.value;
      case kDefault:
        return r.default_value;
      case kDescription:
        return r.description;
    }
  }
  if (role == Qt::FontRole && r.section) {
    QFont f;
    f.setBold(true);
    return f;
  }
  return {};
}

QVariant InspectorModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kProperty:
      return tr("Property");
    case kValue:
      return tr("Value");
    case kDefault:
      return tr("Default");
    case kDescription:
      return tr("Description");
  }
  return {};
}

}  // namespace tessel::views
