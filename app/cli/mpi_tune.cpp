// Built only when CMake finds MPI (app/cli/CMakeLists.txt); mpi_tune_absent.cpp otherwise.
#include "app/cli/mpi_tune.h"

#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <future>
#include <thread>
#include <vector>

#include "core/tune/process_measurer.h"
#include "core/support/error.h"

namespace tessel::cli {

namespace {

using Clock = std::chrono::steady_clock;

// Message tags. Payloads are bytes: measure-protocol lines, or the worker's "pid@host".
enum Tag : int {
  kHello = 1,      // worker → 0, once: "pid@host"
  kRequest = 2,    // 0 → worker: a measure request line (its id is rank 0's sequence number)
  kHeartbeat = 3,  // worker → 0, every second while measuring
  kReply = 4,      // worker → 0: the reply line
  kStop = 5,       // 0 → worker: "ready?" (answered with kGoodbye), then "finalize" or "exit" (a
                   // worker died: MPI cannot be finalized)
  kGoodbye = 6,    // worker → 0: the answer to "ready?"
};

constexpr auto kHeartbeatPeriod = std::chrono::seconds(1);
// A worker that hears nothing from rank 0 this long takes it for dead (else it would wait forever).
constexpr auto kWorkerIdleLimit = std::chrono::minutes(30);

bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"})
    if (std::getenv(name)) return true;
  return false;
}

bool recovery_enabled() {
  const char* v = std::getenv("OMPI_MCA_orte_enable_recovery");
  return v && (std::string(v) == "1" || std::string(v) == "true");
}

void send_bytes(const std::string& bytes, int to, Tag tag) {
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD);
}

// The message `status` announces (after a probe), received.
std::string receive_bytes(const MPI_Status& status) {
  int size = 0;
  MPI_Get_count(&status, MPI_CHAR, &size);
  std::string bytes(static_cast<size_t>(size), '\0');
  MPI_Recv(bytes.data(), size, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return bytes;
}

std::string trim_newline(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

// A worker's reply as a Measurement; a reply that cannot be read is that trial's error.
tune::Measurement measurement_of(const std::string& line) {
  tune::Measurement m;
  try {
    const measure::Reply reply = measure::decode_reply_line(trim_newline(line));
    if (const measure::Failed* f = reply.failed()) {
      m.error = f->error;
    } else if (const auto* k = std::get_if<measure::KernelMeasured>(&reply.body)) {
      m.ms_min = k->ms_min, m.ms_median = k->ms_median;
    } else {
      m.error = "the worker sent a reply that is not a measurement";
    }
  } catch (const Error& e) {
    m.error = std::string("the worker's reply cannot be read: ") + e.what();
  }
  return m;
}

struct Worker {
  int rank = 0;
  std::string where;  // "rank 2 (pid 1234 on node7)"
  bool dead = false;
  // The trial it measures now: its index in the batch and its sequence number; -1: idle.
  int trial = -1;
  int64_t sequence = 0;
  Clock::time_point last_heard;
  std::string request;  // kept alive while MPI_Isend sends it
  MPI_Request send = MPI_REQUEST_NULL;
};

class OpenMpiSession : public MpiTuneSession {
 public:
  OpenMpiSession(int rank, int size, double worker_timeout_s)
      : rank_(rank), size_(size), worker_timeout_(std::chrono::duration<double>(worker_timeout_s)) {
    if (rank_ == 0) greet_workers();
  }

  ~OpenMpiSession() override {
    if (!finished_) stop_workers();  // rank 0 failed (an Error on its way to main): release them
  }

  int rank() const override { return rank_; }
  int workers() const override { return size_ - 1; }

  int serve(const std::filesystem::path& program) override;
  std::unique_ptr<tune::Measurer> measurer(measure::ModelRef model, std::string kernel, double min_time_ms,
                                           measure::CacheCondition cache, tune::Measurer& local) override;

  int finish(int status) override {
    const bool finalize = stop_workers();
    if (finalize) return status;
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(status);
  }

  std::vector<Worker>& worker_table() { return workers_; }
  std::chrono::duration<double> worker_timeout() const { return worker_timeout_; }
  int64_t next_sequence() { return ++sequence_; }

 private:
  // Each worker says who it is, so a dead one can be named by pid and host.
  void greet_workers() {
    for (int r = 1; r < size_; ++r) {
      MPI_Status status;
      MPI_Probe(r, kHello, MPI_COMM_WORLD, &status);
      const std::string hello = receive_bytes(status);
      const size_t at = hello.find('@');
      Worker w;
      w.rank = r;
      w.where = "rank " + std::to_string(r) + " (pid " + hello.substr(0, at) + " on " +
                (at == std::string::npos ? "?" : hello.substr(at + 1)) + ")";
      std::fprintf(stderr, "tessel tune: worker %s\n", w.where.c_str());
      workers_.push_back(w);
    }
    if (std::getenv("OMPI_COMM_WORLD_SIZE") && !recovery_enabled())
      std::fprintf(stderr,
                   "tessel tune: mpirun was started without --enable-recovery: a worker that dies ends the whole "
                   "job (every trial measured until then is in the log)\n");
    std::fflush(stderr);
  }

  // Returns whether MPI was finalized (false: a worker died, so it cannot be).
  bool stop_workers() {
    finished_ = true;
    if (rank_ != 0) return true;
    // A worker can also die between trials, unnoticed: MPI_Finalize would then wait for it forever.
    // So each one is asked whether it is still there first (Isend: a send to a dead rank is never
    // waited on), and one that does not answer within the worker time-out counts as dead.
    const std::string ask = "ready?";
    std::vector<MPI_Request> asked(workers_.size(), MPI_REQUEST_NULL);
    std::vector<bool> answered(workers_.size(), false);
    for (size_t i = 0; i < workers_.size(); ++i)
      MPI_Isend(ask.data(), static_cast<int>(ask.size()), MPI_CHAR, workers_[i].rank, kStop, MPI_COMM_WORLD, &asked[i]);
    const Clock::time_point deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(worker_timeout_);
    size_t count = 0;
    while (count < workers_.size() && Clock::now() < deadline) {
      int waiting = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &waiting, &status);
      if (!waiting) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        continue;
      }
      (void)receive_bytes(status);  // late heartbeats and replies are dropped
      if (status.MPI_TAG != kGoodbye) continue;
      for (size_t i = 0; i < workers_.size(); ++i)
        if (workers_[i].rank == status.MPI_SOURCE && !answered[i]) answered[i] = true, ++count;
    }
    const bool all_there = count == workers_.size();
    for (size_t i = 0; i < workers_.size(); ++i)
      if (!answered[i])
        std::fprintf(stderr, "tessel tune: worker %s did not answer at the end; MPI is not finalized\n",
                     workers_[i].where.c_str());
    const std::string how = all_there ? "finalize" : "exit";
    for (size_t i = 0; i < workers_.size(); ++i)
      if (answered[i]) send_bytes(how, workers_[i].rank, kStop);
    if (!all_there) return false;
    MPI_Finalize();
    return true;
  }

  int rank_, size_;
  std::chrono::duration<double> worker_timeout_;
  std::vector<Worker> workers_;
  int64_t sequence_ = 0;
  bool finished_ = false;
};

// Rank 0's side: one candidate per idle worker, results matched by sequence number.
class MpiMeasurer : public tune::Measurer {
 public:
  MpiMeasurer(OpenMpiSession& session, measure::ModelRef model, std::string kernel, double min_time_ms,
              measure::CacheCondition cache, tune::Measurer& local)
      : session_(session),
        model_(std::move(model)),
        kernel_(std::move(kernel)),
        min_time_ms_(min_time_ms),
        cache_(cache),
        local_(local) {}

  std::vector<tune::Measurement> measure(const std::vector<std::string>& schedules) override {
    std::vector<tune::Measurement> out(schedules.size());
    std::deque<int> queue;
    for (size_t i = 0; i < schedules.size(); ++i) queue.push_back(static_cast<int>(i));
    size_t answered = 0;
    while (answered < schedules.size()) {
      if (!any_alive()) return measure_locally(schedules, queue, std::move(out));
      for (Worker& w : session_.worker_table())
        if (!w.dead && w.trial < 0 && !queue.empty()) {
          assign(w, queue.front(), schedules[static_cast<size_t>(queue.front())]);
          queue.pop_front();
        }
      const bool heard = receive_one(out, answered);
      requeue_from_dead(queue);
      if (!heard) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return out;
  }

 private:
  bool any_alive() const {
    for (const Worker& w : session_.worker_table())
      if (!w.dead) return true;
    return false;
  }

  void assign(Worker& w, int trial, const std::string& schedule) {
    measure::MeasureKernelRequest m;
    m.model = model_;
    m.kernel = kernel_;
    m.schedule = schedule;
    m.min_time_ms = min_time_ms_;
    m.artifacts = false;
    m.cache = cache_;
    w.sequence = session_.next_sequence();
    w.trial = trial;
    w.last_heard = Clock::now();
    // The previous request's send completed when its reply came (the worker received it first).
    if (w.send != MPI_REQUEST_NULL) MPI_Wait(&w.send, MPI_STATUS_IGNORE);
    w.request = measure::encode_line(measure::Request{w.sequence, "", m});
    MPI_Isend(w.request.data(), static_cast<int>(w.request.size()), MPI_CHAR, w.rank, kRequest, MPI_COMM_WORLD,
              &w.send);
  }

  // One message from any worker, if one is waiting; returns whether there was one.
  bool receive_one(std::vector<tune::Measurement>& out, size_t& answered) {
    int waiting = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &waiting, &status);
    if (!waiting) return false;
    const std::string bytes = receive_bytes(status);
    Worker* w = worker_of(status.MPI_SOURCE);
    if (!w) return true;
    w->last_heard = Clock::now();
    if (w->dead) {  // only slow (a loaded machine, a network stall): it is given trials again
      w->dead = false;
      std::fprintf(stderr, "\ntessel tune: worker %s answered again; it gets trials again\n", w->where.c_str());
      std::fflush(stderr);
      return true;
    }
    if (w->trial < 0) return true;  // late news of a trial given to another worker
    if (status.MPI_TAG != kReply) return true;
    tune::Measurement m = measurement_of(bytes);
    int64_t id = 0;
    try {
      id = measure::decode_reply_line(trim_newline(bytes)).id;
    } catch (const Error&) {
      id = w->sequence;  // unreadable: measurement_of already says so
    }
    if (id != w->sequence) return true;  // an answer to a request this worker was not asked for now
    out[static_cast<size_t>(w->trial)] = std::move(m);
    w->trial = -1;
    ++answered;
    return true;
  }

  Worker* worker_of(int rank) {
    for (Worker& w : session_.worker_table())
      if (w.rank == rank) return &w;
    return nullptr;
  }

  // Busy workers silent for longer than the time-out are taken for dead, and their trials go back to
  // the front of the queue: a candidate cannot kill a worker (it runs in the worker's measuring
  // process, which the worker outlives), so the trial is measured again elsewhere, and a search
  // never loses its default schedule's time to a dead machine.
  void requeue_from_dead(std::deque<int>& queue) {
    const Clock::time_point now = Clock::now();
    for (Worker& w : session_.worker_table()) {
      if (w.dead || w.trial < 0 || now - w.last_heard < session_.worker_timeout()) continue;
      w.dead = true;
      std::fprintf(
          stderr,
          "\ntessel tune: worker %s stopped answering (died or unreachable): the trial it was measuring goes to "
          "another, and it gets no more unless it answers again\n",
          w.where.c_str());
      std::fflush(stderr);
      queue.push_front(w.trial);
      w.trial = -1;
    }
  }

  std::vector<tune::Measurement> measure_locally(const std::vector<std::string>& schedules,
                                                 const std::deque<int>& queue, std::vector<tune::Measurement> out) {
    if (!warned_) std::fprintf(stderr, "\ntessel tune: no worker left; rank 0 measures the rest itself\n");
    warned_ = true;
    std::vector<std::string> rest;
    for (int i : queue) rest.push_back(schedules[static_cast<size_t>(i)]);
    std::vector<tune::Measurement> m = local_.measure(rest);
    for (size_t k = 0; k < queue.size() && k < m.size(); ++k) out[static_cast<size_t>(queue[k])] = m[k];
    return out;
  }

  OpenMpiSession& session_;
  measure::ModelRef model_;
  std::string kernel_;
  double min_time_ms_;
  measure::CacheCondition cache_;
  tune::Measurer& local_;
  bool warned_ = false;
};

std::unique_ptr<tune::Measurer> OpenMpiSession::measurer(measure::ModelRef model, std::string kernel,
                                                         double min_time_ms, measure::CacheCondition cache,
                                                         tune::Measurer& local) {
  return std::make_unique<MpiMeasurer>(*this, std::move(model), std::move(kernel), min_time_ms, cache, local);
}

// A worker: one request at a time, measured in its own measuring process on another thread while
// this one sends heartbeats (only this thread calls MPI).
int OpenMpiSession::serve(const std::filesystem::path& program) {
  char host[256] = "?";
  ::gethostname(host, sizeof host - 1);
  send_bytes(std::to_string(::getpid()) + "@" + host, 0, kHello);
  Clock::time_point last_from_rank0 = Clock::now();
  for (;;) {
    int waiting = 0;
    MPI_Status status;
    MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &waiting, &status);
    if (!waiting) {
      if (Clock::now() - last_from_rank0 > kWorkerIdleLimit) {
        std::fprintf(stderr, "tessel tune: worker rank %d: nothing from rank 0 for 30 minutes; stopping\n", rank_);
        std::fflush(stderr);
        std::_Exit(1);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    const std::string bytes = receive_bytes(status);
    last_from_rank0 = Clock::now();
    if (status.MPI_TAG == kStop && bytes == "ready?") {
      send_bytes("", 0, kGoodbye);
      continue;
    }
    if (status.MPI_TAG == kStop) {
      finished_ = true;
      if (bytes != "finalize") std::_Exit(0);
      MPI_Finalize();
      return 0;
    }
    if (status.MPI_TAG != kRequest) continue;
    measure::Reply reply;
    try {
      const measure::Request request = measure::decode_request_line(trim_newline(bytes));
      reply.id = request.id;
      const auto* m = std::get_if<measure::MeasureKernelRequest>(&request.body);
      if (!m) throw Error("a tune worker measures kernels only, not '" + std::string(measure::op_name(request)) + "'");
      auto measured = std::async(std::launch::async, [&] {
        tune::ProcessMeasurer local(program, m->model, m->kernel, m->min_time_ms, m->cache);
        return local.measure({m->schedule}).at(0);
      });
      while (measured.wait_for(kHeartbeatPeriod) != std::future_status::ready) send_bytes("", 0, kHeartbeat);
      const tune::Measurement result = measured.get();
      if (result.error.empty()) {
        measure::KernelMeasured k;
        k.kernel = m->kernel;
        k.target = m->model.target;
        k.correct = true;
        k.ms_min = result.ms_min, k.ms_median = result.ms_median;
        reply.body = k;
      } else {
        reply.body = measure::Failed{result.error};
      }
    } catch (const std::exception& e) {
      reply.body = measure::Failed{e.what()};
    }
    send_bytes(measure::encode_line(reply), 0, kReply);
  }
}

}  // namespace

std::unique_ptr<MpiTuneSession> MpiTuneSession::start_if_launched(double worker_timeout_s) {
  if (!launched_by_mpi()) return nullptr;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // A send to a dead rank must not abort rank 0 (it returns, and the worker time-out decides).
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (size < 2) {
    MPI_Finalize();
    return nullptr;  // one rank: an ordinary tune
  }
  return std::make_unique<OpenMpiSession>(rank, size, worker_timeout_s);
}

}  // namespace tessel::cli
