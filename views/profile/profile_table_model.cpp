#include "views/profile/profile_table_model.h"

#include <QBrush>
#include <QColor>
#include <cstdio>

#include "views/common/kernel_time.h"

namespace tessel::views {

void ProfileTableModel::set_profile(ModelProfilePtr profile) {
  beginResetModel();
  profile_ = std::move(profile);
  sum_ms_ = 0;
  if (profile_)
    for (const auto& k : profile_->profile.kernels) sum_ms_ += k.ms_median;
  endResetModel();
}

int ProfileTableModel::row_of(const QString& kernel) const {
  if (!profile_) return -1;
  const auto& ks = profile_->profile.kernels;
  for (size_t r = 0; r < ks.size(); ++r)
    if (ks[r].name == kernel.toStdString()) return static_cast<int>(r);
  return -1;
}

QString ProfileTableModel::kernel_at(int row) const {
  if (!profile_ || row < 0 || row >= rowCount()) return {};
  return QString::fromStdString(profile_->profile.kernels[static_cast<size_t>(row)].name);
}

int ProfileTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !profile_ ? 0 : static_cast<int>(profile_->profile.kernels.size());
}

int ProfileTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant ProfileTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const analysis::KernelProfile& k = profile_->profile.kernels[static_cast<size_t>(index.row())];
  const KernelTime t = kernel_time(k, profile_->profile);
  const double percent = sum_ms_ > 0 ? 100 * k.ms_median / sum_ms_ : 0;
  if (role == Qt::UserRole) {  // the sort key
    switch (index.column()) {
      case kKernel:
        return QString::fromStdString(k.name);
      case kTime:
        return k.ms_median;
      case kPercent:
        return percent;
      case kGflops:
        return t.gflops();
      case kGbps:
        return t.gbps();
      case kAttainable:
        return k.attainable_gflops;
      case kBound:
        return QString::fromStdString(k.bound);
      case kSchedule:
        return QString::fromStdString(k.schedule);
    }
  }
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case kKernel:
        return QString::fromStdString(k.name) + (k.compiled ? "" : " [reference]");
      case kTime:
        return QString::fromStdString(t.time_text());
      case kPercent:
        return QString::number(percent, 'f', 1);
      case kGflops:
        return QString::fromStdString(format_gflops_number(t.gflops()));
      case kGbps:
        return QString::number(t.gbps(), 'f', 1);
      case kAttainable:
        return k.attainable_gflops > 0 ? QString::number(k.attainable_gflops, 'f', 1) : QString("—");
      case kBound:
        return k.bound.empty() ? QString("—") : QString::fromStdString(k.bound);
      case kSchedule:
        return k.schedule.empty() ? QString("—") : QString::fromStdString(k.schedule);
    }
  }
  if (role == Qt::TextAlignmentRole && index.column() != kKernel && index.column() != kBound &&
      index.column() != kSchedule)
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole)
    return QString("%1\n%2\n%3 (fastest run %4)\n%5 FLOPs, %6 bytes, %7 FLOP/byte")
        .arg(QString::fromStdString(k.name))
        .arg(QString::fromStdString(t.text()))
        .arg(QString::fromStdString(t.definition()))
        .arg(QString::fromStdString(format_ms(k.ms_min)))
        .arg(k.flops)
        .arg(k.bytes)
        .arg(k.intensity, 0, 'f', 2);
  if (role == Qt::ForegroundRole && !k.compiled) return QBrush(QColor(150, 90, 0));
  return {};
}

QVariant ProfileTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kKernel:
      return QStringLiteral("Kernel");
    case kTime:
      return QStringLiteral("Time (median ± spread)");
    case kPercent:
      return QStringLiteral("% of total");
    case kGflops:
      return QStringLiteral("GFLOP/s");
    case kGbps:
      return QStringLiteral("GB/s");
    case kAttainable:
      return QStringLiteral("Attainable");
    case kBound:
      return QStringLiteral("Bound");
    case kSchedule:
      return QStringLiteral("Schedule, where it ran");
  }
  return {};
}

std::string profile_csv(const analysis::Profile& p) {
  double sum = 0;
  for (const auto& k : p.kernels) sum += k.ms_median;
  // GFLOP/s and GB/s at the median time, as the table shows them (views/common/kernel_time.h).
  std::string out =
      "kernel,ms_median,ms_q1,ms_q3,ms_min,percent,gflops,gbps,intensity,attainable_gflops,bound,compiled\n";
  for (const auto& k : p.kernels) {
    const KernelTime t = kernel_time(k, p);
    char line[512];
    // Kernel names are identifiers and bounds contain no commas or quotes, but quote both anyway.
    std::snprintf(line, sizeof line, "\"%s\",%.6f,%.6f,%.6f,%.6f,%.2f,%.4f,%.4f,%.4f,%.4f,\"%s\",%s\n", k.name.c_str(),
                  k.ms_median, k.ms_q1, k.ms_q3, k.ms_min, sum > 0 ? 100 * k.ms_median / sum : 0, t.gflops(), t.gbps(),
                  k.intensity, k.attainable_gflops, k.bound.c_str(), k.compiled ? "true" : "false");
    out += line;
  }
  return out;
}

}  // namespace tessel::views
