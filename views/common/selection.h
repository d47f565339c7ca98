#pragma once
// The shared selection: which node, fusion kernel and graph pass the user is looking at. One object
// per window; panes write to it and the mediator (app/studio) forwards its signals to the panes, so
// no pane ever talks to another. Setting the current value again emits nothing.
#include <QObject>
#include <QString>

namespace tessel::views {

class Selection : public QObject {
  Q_OBJECT

 public:
  using QObject::QObject;

  QString node() const { return node_; }      // node name; empty: none
  QString kernel() const { return kernel_; }  // fusion kernel name; empty: none
  int pass() const { return pass_; }          // index into StudioSnapshot::passes; -1: imported graph

  void set_node(const QString& name);
  void set_kernel(const QString& name);
  void set_pass(int index);
  void clear();  // a new snapshot: nothing selected, last pass shown

 Q_SIGNALS:
  void node_changed(const QString& name);
  void kernel_changed(const QString& name);
  void pass_changed(int index);

 private:
  QString node_, kernel_;
  int pass_ = -1;
};

}  // namespace tessel::views
