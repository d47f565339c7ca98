// The studio's item models, each under QAbstractItemModelTester, fed a real snapshot of the
// resnet_block sample (conv → bn → relu → conv → bn → add → relu → maxpool → gap → flatten → gemm).
#include <QAbstractItemModelTester>
#include <QRegularExpression>
#include <QtTest>

#include "studio_fixtures.h"
#include "views/diagnostics/diagnostics_model.h"
#include "views/inspector/inspector_model.h"
#include "views/passes/pass_list_model.h"

using namespace tessel;
using namespace tessel::views;

class ViewModelsTest : public QObject {
  Q_OBJECT

 private:
  StudioSnapshotPtr snap_;

 private Q_SLOTS:
  void initTestCase() {
    snap_ = test::compile_now(test::sample_model());
    QVERIFY(snap_);
    QVERIFY2(!snap_->has_errors(), snap_->diagnostics.empty() ? "" : snap_->diagnostics[0].message.c_str());
    QVERIFY(!snap_->passes.empty());
  }

  void pass_list_has_imported_row_then_every_pass() {
    PassListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    model.set_snapshot(snap_);
    QCOMPARE(model.rowCount(), static_cast<int>(snap_->passes.size()) + 1);
    QCOMPARE(model.data(model.index(0, PassListModel::kName), Qt::DisplayRole).toString(), QString("(imported)"));
    // The sample has 11 ONNX nodes (scripts/gen_models.py counts them independently).
    QCOMPARE(model.data(model.index(0, PassListModel::kNodes), Qt::DisplayRole).toInt(), 11);
    for (int r = 1; r < model.rowCount(); ++r) {
      const StepRecord& rec = *snap_->passes[static_cast<size_t>(r - 1)];
      QCOMPARE(model.data(model.index(r, PassListModel::kName), Qt::DisplayRole).toString(),
               QString::fromStdString(rec.name));
      QCOMPARE(model.data(model.index(r, 0), PassListModel::kPassIndexRole).toInt(), r - 1);
    }
  }

  // "Changed" is the graph or its grouping into kernels: fuse_ops changes no node but stays.
  void hide_unchanged_keeps_only_passes_that_changed_the_graph_or_its_kernels() {
    PassListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.set_snapshot(snap_);
    model.set_hide_unchanged(true);
    int changed = 0;
    for (int p = 0; p <= snap_->last_pass(); ++p) changed += snap_->pass_changed(p);
    QVERIFY(changed >= 2);  // batch-norm folding, and fuse_ops grouping
    QVERIFY(changed < static_cast<int>(snap_->passes.size()));
    QCOMPARE(model.rowCount(), changed + 1);
    for (int r = 1; r < model.rowCount(); ++r) QVERIFY(snap_->pass_changed(model.pass_of_row(r)));
    QVERIFY(model.row_of_pass(snap_->grouping_pass) > 0);
    QCOMPARE(model.row_of_pass(-1), 0);
    model.set_hide_unchanged(false);
    QCOMPARE(model.rowCount(), static_cast<int>(snap_->passes.size()) + 1);
    model.set_snapshot(nullptr);
    QCOMPARE(model.rowCount(), 0);
  }

  void inspector_lists_every_conv_attribute_with_value_default_and_doc() {
    InspectorModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.show_node(snap_, -1, "/layer1/conv1/Conv");
    QCOMPARE(model.value_of("op"), QString("Conv"));
    QCOMPARE(model.value_of("name"), QString("/layer1/conv1/Conv"));
    // From the model file: a 3×3 convolution with padding 1, 16 → 16 channels on 16×16.
    QCOMPARE(model.value_of("kernel_shape", "Attributes"), QString("[3,3]"));
    QCOMPARE(model.value_of("pads", "Attributes"), QString("[1,1,1,1]"));
    QCOMPARE(model.value_of("input 0", "Inputs"), QString("f32[1,16,16,16] (graph input)"));
    QCOMPARE(model.value_of("input 1", "Inputs"), QString("f32[16,16,3,3] (constant)"));
    QCOMPARE(model.value_of("output 0", "Outputs"), QString("f32[1,16,16,16]"));
    // Every attribute of the op is listed (set or not), each with a description; group defaults to 1.
    const InspectorRow* group = model.find("group", "Attributes");
    QVERIFY(group);
    QCOMPARE(group->default_value, QString("1"));
    QCOMPARE(group->value, QString("1"));
    int attribute_rows = 0;
    bool in_attributes = false;
    for (const InspectorRow& r : model.rows()) {
      if (r.section) {
        in_attributes = r.property == "Attributes";
        continue;
      }
      if (!in_attributes) continue;
      ++attribute_rows;
      QVERIFY2(!r.description.isEmpty(), qPrintable(r.property));
    }
    QVERIFY(attribute_rows >= 6);  // auto_pad, dilations, group, kernel_shape, pads, strides
    // 2 FLOPs per multiply-accumulate: 16 out-channels × 16×16 pixels × 16 in-channels × 3×3.
    QCOMPARE(model.value_of("FLOPs", "Cost"), QString("1 179 648"));
    // input + weight + output, float32, no bias in the imported graph: (4096 + 2304 + 4096) × 4.
    QCOMPARE(model.value_of("bytes", "Cost"), QString("41 984"));
  }

  void inspector_shows_a_fusion_group() {
    QVERIFY(snap_->fusion);
    const Graph& g = *snap_->optimized;
    const FusionGroup* with_add = nullptr;
    for (const FusionGroup& group : snap_->fusion->groups)
      for (NodeId n : group.nodes)
        if (g.nodes[static_cast<size_t>(n)].op->name == "Add") with_add = &group;
    QVERIFY(with_add);
    InspectorModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.show_kernel(snap_, QString::fromStdString(with_add->kernel_name));
    QCOMPARE(model.value_of("kernel"), QString::fromStdString(with_add->kernel_name));
    QStringList ops;
    bool in_ops = false;
    for (const InspectorRow& r : model.rows()) {
      if (r.section)
        in_ops = r.property == "Ops";
      else if (in_ops)
        ops << r.value;
    }
    // The residual add fuses behind the second conv (out-element-wise fusable anchor): the layout
    // pass may have turned Conv into its channel-blocked form, and winograd_convs that into three
    // kernels, the last of which (the output transform) takes the add.
    QVERIFY2(ops.filter(QRegularExpression("^([Cc]onv|winograd_output_transform)")).size() == 1 && ops.contains("Add"),
             qPrintable(ops.join(",")));
    QCOMPARE(model.value_of("pattern"), QString("out-elemwise-fusable"));
    model.show_kernel(snap_, "no_such_kernel");
    QCOMPARE(model.rowCount(), 0);
  }

  // Selecting a node of the optimized graph lists each of its edges under Fusion: fused, or the
  // rule that kept it apart, with the sentence (what `tessel passes --why` prints) beside it.
  void inspector_says_why_each_edge_of_a_node_fused_or_not() {
    const Graph& g = *snap_->optimized;
    QVERIFY(snap_->graph_at(snap_->last_pass()) == snap_->optimized);
    const UnfusedEdge& apart = snap_->fusion->unfused_edges.at(0);
    const QString consumer = QString::fromStdString(g.nodes[static_cast<size_t>(apart.consumer)].name);
    InspectorModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.show_node(snap_, snap_->last_pass(), consumer);
    QCOMPARE(model.value_of("kernel", "Fusion"),
             QString::fromStdString(snap_->fusion->group_of(apart.consumer).kernel_name));
    // The edge's row: short property ("edge in K"), the verdict, and a description that starts
    // with the value and the producer it comes from.
    const QString from = QString::fromStdString(g.value(apart.value).name) + " from '" +
                         QString::fromStdString(g.nodes[static_cast<size_t>(apart.producer)].name) + "'";
    const InspectorRow* row = nullptr;
    for (const InspectorRow& r : model.rows())
      if (r.property.startsWith("edge in ") && r.description.startsWith(from)) row = &r;
    QVERIFY2(row, qPrintable(from));
    QCOMPARE(row->value, "not fused: " + QString::fromStdString(std::string(fusion_block_name(apart.rule))));
    QVERIFY2(row->description.contains(QString::fromStdString(std::string(fusion_block_reason(apart.rule)))),
             qPrintable(row->description));
    bool some_fused = false;
    for (const InspectorRow& r : model.rows()) some_fused = some_fused || r.value == "fused";
    const FusionGroup& group = snap_->fusion->group_of(apart.consumer);
    QVERIFY2(some_fused || group.nodes.size() == 1, "a node of a multi-node kernel has a fused edge");
  }

  void diagnostics_carry_import_errors() {
    QTemporaryDir dir;
    QString bad = dir.filePath("broken.onnx");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("this is not a protobuf");
    f.close();
    StudioSnapshotPtr broken = test::compile_now(bad);
    QVERIFY(broken->has_errors());
    QVERIFY(!broken->imported);
    DiagnosticsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.set_snapshot_diagnostics(broken->diagnostics);
    QVERIFY(model.rowCount() >= 1);
    QCOMPARE(model.data(model.index(0, DiagnosticsModel::kSeverity), Qt::DisplayRole).toString(), QString("error"));
    QCOMPARE(model.data(model.index(0, DiagnosticsModel::kStage), Qt::DisplayRole).toString(), QString("import"));
    QVERIFY(model.data(model.index(0, DiagnosticsModel::kMessage), Qt::DisplayRole).toString().contains("broken.onnx"));
    model.add({Diagnostic::Severity::kWarning, "session", "kept"});
    model.set_snapshot_diagnostics({});
    QCOMPARE(model.rowCount(), 1);  // studio messages survive a new snapshot
    QCOMPARE(model.error_count(), 0);
  }
};

QTEST_MAIN(ViewModelsTest)
#include "test_view_models.moc"
