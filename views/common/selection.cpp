#include "views/common/selection.h"

namespace tessel::views {

void Selection::set_node(const QString& name) {
  if (name == node_) return;
  node_ = name;
  Q_EMIT node_changed(node_);
}

void Selection::set_kernel(const QString& name) {
  if (name == kernel_) return;
  kernel_ = name;
  Q_EMIT kernel_changed(kernel_);
}

void Selection::set_pass(int index) {
  if (index == pass_) return;
  pass_ = index;
  Q_EMIT pass_changed(pass_);
}

void Selection::clear() {
  set_node({});
  set_kernel({});
}

}  // namespace tessel::views
