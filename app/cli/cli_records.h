#pragma once
// `--records LOG` of run, build and profile: each kernel takes the fastest correct schedule that
// `tessel tune` logged for its tensor expression on this target (core/tune/records.h).
#include "app/cli/cli_args.h"
#include "core/compile/compiled_model.h"
#include "core/target/target.h"

namespace tessel::cli {

// Reads the log named by --records, if given, and points options.tuned_schedule at its best records
// for `target`. A damaged line is skipped with a warning naming file and line; a log that is not a
// regular file is an Error.
void use_tuning_records(const Args& args, const Target& target, compile::CompileOptions& options);

// "tessel: 3 of 7 kernels use tuned schedules from LOG" on stderr, when --records was given.
void report_tuned_kernels(const Args& args, const compile::CompiledModel& model);

}  // namespace tessel::cli
