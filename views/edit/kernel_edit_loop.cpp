#include "views/edit/kernel_edit_loop.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QPointer>
#include <QThreadPool>
#include <atomic>
#include <set>

#include "core/compile/kernel_compiler.h"
#include "views/edit/kernel_lowering.h"
#include "views/edit/measure_client.h"

namespace tessel::views {

struct KernelEditLoop::KernelState {
  // The newest generation; the worker reads it to skip lowering that is already stale.
  std::shared_ptr<std::atomic<int64_t>> generation = std::make_shared<std::atomic<int64_t>>(0);
  KernelLoweringPtr lowering;
  KernelMeasurementPtr measurement;
  QElapsedTimer since_edit;
  EditTiming timing;
};

struct KernelEditLoop::State {
  explicit State(QString program) : client(std::move(program)) {}
  MeasureClient client;
  QThreadPool pool;  // own pool: the destructor waits for lowering still running
  std::map<QString, KernelState> kernels;
  int pending_lowerings = 0;
};

namespace {
std::string measure_key(const QString& kernel) { return "measure:" + kernel.toStdString(); }
}  // namespace

KernelEditLoop::KernelEditLoop(QString measure_program, QObject* parent)
    : QObject(parent), state_(std::make_unique<State>(std::move(measure_program))) {
  qRegisterMetaType<KernelLoweringPtr>();
  qRegisterMetaType<KernelMeasurementPtr>();
  qRegisterMetaType<ModelProfilePtr>();
  qRegisterMetaType<CeilingsResultPtr>();
  state_->pool.setMaxThreadCount(2);
}

KernelEditLoop::~KernelEditLoop() {
  for (auto& [name, k] : state_->kernels) k.generation->store(-1);  // every queued lowering is stale
  state_->pool.waitForDone();
}

KernelEditLoop::KernelState& KernelEditLoop::kernel_state(const QString& kernel) { return state_->kernels[kernel]; }

void KernelEditLoop::set_snapshot(StudioSnapshotPtr snapshot) {
  snapshot_ = std::move(snapshot);
  context_.model_path = snapshot_ ? snapshot_->model_path : "";
  std::set<std::string> names;
  if (snapshot_ && snapshot_->fusion)
    for (const FusionGroup& g : snapshot_->fusion->groups) names.insert(g.kernel_name);
  // A snapshot without fusion groups (a failed compile) says nothing about which kernels exist.
  if (snapshot_ && snapshot_->fusion)
    std::erase_if(hand_, [&](const auto& entry) { return !names.count(entry.first); });
  for (auto& [name, k] : state_->kernels) {
    state_->client.cancel(measure_key(name));
    k.generation->fetch_add(1);  // results on their way describe the old graph
    k.lowering.reset();
    k.measurement.reset();
  }
  if (!current_.isEmpty() && names.count(current_.toStdString())) start(current_);
}

void KernelEditLoop::set_target(const QString& target) {
  if (target.toStdString() == context_.target) return;
  context_.target = target.toStdString();
  for (auto& [name, k] : state_->kernels) k.measurement.reset();
  if (!current_.isEmpty() && snapshot_) start(current_);
}

void KernelEditLoop::set_pass_options(const nlohmann::json& options) { context_.pass_options = options; }

void KernelEditLoop::set_measure_timeout_ms(int ms) { timeout_ms_ = std::max(ms, 1); }

void KernelEditLoop::open_kernel(const QString& kernel) {
  current_ = kernel;
  if (kernel.isEmpty() || !snapshot_) return;
  KernelState& k = kernel_state(kernel);
  if (!k.lowering) start(kernel);
}

void KernelEditLoop::set_schedule(const QString& kernel, const schedule::Schedule& s) {
  hand_[kernel.toStdString()] = s;
  start(kernel);
}

void KernelEditLoop::reset_to_default(const QString& kernel) {
  hand_.erase(kernel.toStdString());
  start(kernel);
}

void KernelEditLoop::set_hand_schedules(std::map<std::string, schedule::Schedule> s) {
  hand_ = std::move(s);
  for (auto& [name, k] : state_->kernels) k.lowering.reset(), k.measurement.reset();
  if (!current_.isEmpty() && snapshot_) start(current_);
}

void KernelEditLoop::start(const QString& kernel) {
  KernelState& k = kernel_state(kernel);
  const int64_t generation = k.generation->fetch_add(1) + 1;
  state_->client.cancel(measure_key(kernel));  // its answer would describe the previous schedule
  k.since_edit.start();
  k.timing = {};
  auto hand_it = hand_.find(kernel.toStdString());
  std::optional<schedule::Schedule> hand;
  if (hand_it != hand_.end()) hand = hand_it->second;
  ++state_->pending_lowerings;
  QPointer<KernelEditLoop> self(this);
  state_->pool.start(
      [self, snapshot = snapshot_, kernel, hand, target = context_.target, generation, latest = k.generation] {
        // Several quick edits queue several jobs: only the newest is worth lowering.
        KernelLoweringPtr result;
        if (latest->load() == generation)
          result = lower_kernel(snapshot, kernel.toStdString(), hand, target, generation);
        QMetaObject::invokeMethod(
            self.data(),
            [self, kernel, result] {
              if (self) self->deliver_lowering(kernel, result);
            },
            Qt::QueuedConnection);
      });
}

void KernelEditLoop::deliver_lowering(const QString& kernel, KernelLoweringPtr result) {
  --state_->pending_lowerings;
  KernelState& k = kernel_state(kernel);
  if (!result || result->generation != k.generation->load()) return;  // a newer edit is on its way
  k.lowering = result;
  k.timing.edit_to_lowered_ms = static_cast<double>(k.since_edit.nsecsElapsed()) / 1e6;
  Q_EMIT lowered(result);
  start_measuring(kernel, *result);
}

void KernelEditLoop::start_measuring(const QString& kernel, const KernelLowering& lowering) {
  const int64_t generation = lowering.generation;
  auto publish = [this, kernel, generation](KernelMeasurement m) {
    KernelState& k = kernel_state(kernel);
    if (generation != k.generation->load()) return;
    k.timing.edit_to_measured_ms = static_cast<double>(k.since_edit.nsecsElapsed()) / 1e6;
    k.measurement = std::make_shared<const KernelMeasurement>(std::move(m));
    Q_EMIT measured(k.measurement);
  };
  if (!lowering.error.empty()) {
    KernelMeasurement m;
    m.kernel = lowering.kernel;
    m.generation = generation;
    m.verdict = KernelMeasurement::Verdict::kFailed;
    m.error = "not measured: " + lowering.error;
    publish(std::move(m));
    return;
  }
  measure::Request request = measure_request(context_, lowering.kernel, lowering.schedule);
  request.inject = inject_;
  Q_EMIT measuring(kernel);
  QPointer<KernelEditLoop> self(this);
  state_->client.submit(
      measure_key(kernel), std::move(request), timeout_ms_, "kernel '" + lowering.kernel + "'",
      [self, publish, kernel = lowering.kernel, generation](const measure::Reply* reply, const std::string& failure) {
        if (self) publish(measurement_from_reply(kernel, generation, reply, failure));
      });
}

void KernelEditLoop::profile_model() {
  QPointer<KernelEditLoop> self(this);
  state_->client.submit(
      "profile", profile_request(context_, hand_), std::max(timeout_ms_, 120000), "the model profile",
      [self](const measure::Reply* reply, const std::string& failure) {
        if (self) Q_EMIT self->profiled(std::make_shared<const ModelProfile>(profile_from_reply(reply, failure)));
      });
}

void KernelEditLoop::request_ceilings() {
  QPointer<KernelEditLoop> self(this);
  state_->client.submit(
      "ceilings", ceilings_request(context_), timeout_ms_, "the ceilings lookup",
      [self](const measure::Reply* reply, const std::string& failure) {
        if (self)
          Q_EMIT self->ceilings_ready(std::make_shared<const CeilingsResult>(ceilings_from_reply(reply, failure)));
      });
}

void KernelEditLoop::calibrate(bool quick) {
  QPointer<KernelEditLoop> self(this);
  calibrating_ = true;
  state_->client.submit(
      "calibrate", calibrate_request(context_, quick), std::max(timeout_ms_, 300000), "calibration",
      [self](const measure::Reply* reply, const std::string& failure) {
        if (!self) return;
        self->calibrating_ = false;
        Q_EMIT self->ceilings_ready(std::make_shared<const CeilingsResult>(ceilings_from_reply(reply, failure)));
      });
}

void KernelEditLoop::cancel_calibration() {
  if (!calibrating_) return;
  calibrating_ = false;
  state_->client.cancel("calibrate");
}

KernelLoweringPtr KernelEditLoop::lowering(const QString& kernel) const {
  auto it = state_->kernels.find(kernel);
  return it == state_->kernels.end() ? nullptr : it->second.lowering;
}

KernelMeasurementPtr KernelEditLoop::measurement(const QString& kernel) const {
  auto it = state_->kernels.find(kernel);
  return it == state_->kernels.end() ? nullptr : it->second.measurement;
}

KernelEditLoop::EditTiming KernelEditLoop::timing(const QString& kernel) const {
  auto it = state_->kernels.find(kernel);
  return it == state_->kernels.end() ? EditTiming{} : it->second.timing;
}

int KernelEditLoop::measuring_process_restarts() const { return state_->client.restarts(); }

bool KernelEditLoop::wait_until_idle(int timeout_ms) {
  QElapsedTimer timer;
  timer.start();
  auto busy = [this] { return state_->pending_lowerings > 0 || !state_->client.idle(); };
  while (busy() && timer.elapsed() < timeout_ms) QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
  QCoreApplication::processEvents();
  return !busy();
}

}  // namespace tessel::views
