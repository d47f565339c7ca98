#pragma once
// `mpirun -np N tessel tune MODEL ...`: rank 0 searches and owns the log; ranks 1..N-1 are workers
// that compile and measure candidates, each in its own sandboxed measuring process
// (core/tune/process_measurer.h), so a cluster's scheduler runs a tune as any MPI job.
//
//   rank 0: search ─▶ batch ─▶ MpiMeasurer ── request (measure protocol line) ──▶ rank k: worker
//                                  ▲    ◀── heartbeat every second while it measures ──┘  │
//                                  │    ◀── reply (measure protocol line) ────────────────┤
//        log ◀── append each trial ┘                                 tessel-measure ◀────┘
//
// A worker that dies. Without ULFM, plain MPI has no way to tell rank 0 that a peer died, and
// OpenMPI's mpirun by default ends the whole job when any rank dies (signal or non-zero exit). With
// `mpirun --enable-recovery` (MCA orte_enable_recovery=1) the other ranks go on; found by
// experiment with OpenMPI 4.1:
//   - rank 0 keeps sending to and receiving from the live workers; nothing arrives from the dead one,
//     and no error is raised for it;
//   - MPI_Finalize then never returns (its fence waits for the dead rank), so once a worker has
//     died every rank ends without it (the log is flushed line by line; mpirun still exits 0).
//     A worker may also die between trials, unnoticed; so at the end rank 0 asks every worker
//     whether it is still there, and finalizes only when all of them answer within the time-out.
// So rank 0 never blocks on one worker: it sends with MPI_Isend and polls MPI_Iprobe for any
// message, and a busy worker that has sent nothing (no heartbeat, no reply) for the worker time-out
// is taken for dead: it gets no more trials, and its trial goes back to the queue for another
// worker (a candidate cannot kill a worker: it runs in the worker's measuring process, and a hang
// there ends in that process's time-out while the worker keeps sending heartbeats). A reply that comes late from a
// worker taken for dead is dropped (requests carry sequence numbers), and the worker, only slow after all, gets trials
// again. With no worker left, rank 0 measures the rest itself.
// Without --enable-recovery, rank 0 says at start that a dying worker will end the job (every trial
// measured until then is in the log).
//
// A worker reads the model from the path rank 0 was given (absolute), so on several machines the
// model must be on a shared file system; each worker times on its own machine, so run one worker
// per machine (`--map-by node`) for timings that do not disturb each other.
#include <filesystem>
#include <memory>
#include <string>

#include "core/measure/protocol.h"
#include "core/tune/search.h"

namespace tessel::cli {

class MpiTuneSession {
 public:
  // A session when this process was started by an MPI launcher (mpirun, srun) with more than one
  // rank; nullptr otherwise. Throws Error when launched so but Tessel was built without MPI (N
  // copies would each tune alone and write the same log).
  static std::unique_ptr<MpiTuneSession> start_if_launched(double worker_timeout_s);
  virtual ~MpiTuneSession() = default;

  virtual int rank() const = 0;
  virtual int workers() const = 0;  // ranks 1..N-1

  // Ranks 1..N-1: measures the requests rank 0 sends with `measure_program`, until it says stop.
  // Returns the process's exit status.
  virtual int serve(const std::filesystem::path& measure_program) = 0;

  // Rank 0: a Measurer that spreads each batch over the workers (one candidate each at a time) and
  // measures with `local` itself once no worker is left.
  virtual std::unique_ptr<tune::Measurer> measurer(measure::ModelRef model, std::string kernel, double min_time_ms,
                                                   measure::CacheCondition cache, tune::Measurer& local) = 0;

  // Rank 0: tells the workers to stop and ends MPI; returns `status` for main to exit with. When a
  // worker died, MPI cannot be finalized: the process exits here with `status`.
  virtual int finish(int status) = 0;
};

}  // namespace tessel::cli
