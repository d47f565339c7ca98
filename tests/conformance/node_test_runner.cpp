#include "tests/conformance/node_test_runner.h"

#include <QEventLoop>
#include <QProcess>
#include <QTemporaryDir>
#include <QTimer>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "tests/conformance/onnx_tensor_compare.h"

namespace tessel::testing {
namespace {

std::string last_nonempty_line(const QByteArray& text) {
  const QList<QByteArray> lines = text.split('\n');
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    const QByteArray line = it->trimmed();
    if (!line.isEmpty()) return line.toStdString();
  }
  return {};
}

// One test in flight: its process, its scratch folder and its kill timer.
struct Job {
  size_t index = 0;
  std::unique_ptr<QTemporaryDir> out_dir;
  std::unique_ptr<QProcess> process;
  std::unique_ptr<QTimer> deadline;
  bool timed_out = false;
};

// Turns a finished process into a result: a non-zero exit or crash fails with the tool's last
// error line; a clean exit is judged by comparing the files it wrote.
NodeTestResult judge(const NodeTest& test, Job& job, const RunOptions& options) {
  NodeTestResult result;
  result.name = test.name;
  const QByteArray err = job.process->readAllStandardError();
  const QByteArray out = job.process->readAllStandardOutput();
  std::string said = last_nonempty_line(err);
  if (said.empty()) said = last_nonempty_line(out);

  if (job.timed_out) {
    result.message = "timed out after " + std::to_string(options.timeout_ms / 1000) + " s";
  } else if (job.process->error() == QProcess::FailedToStart) {
    result.message = "cannot start " + options.tessel_binary + ": " + job.process->errorString().toStdString();
  } else if (job.process->exitStatus() == QProcess::CrashExit) {
    result.message = "crashed" + (said.empty() ? std::string() : ": " + said);
  } else if (job.process->exitCode() != 0) {
    result.message = "exit " + std::to_string(job.process->exitCode()) + ": " + (said.empty() ? "(no message)" : said);
  } else {
    result.message = compare_output_files(test.folder + "/test_data_set_0", job.out_dir->path().toStdString(),
                                          test.expected_outputs);
  }
  // Paths inside the test's folder are shown relative to it: the messages stay one short line.
  const std::string prefix = test.folder + "/";
  for (size_t at; (at = result.message.find(prefix)) != std::string::npos;) result.message.erase(at, prefix.size());
  result.passed = result.message.empty();
  return result;
}

}  // namespace

std::string compare_output_files(const std::string& expected_dir, const std::string& actual_dir, int count) {
  std::vector<OutputKind> kinds;
  const std::string model = expected_dir + "/../model.onnx";  // the test folder's layout
  try {
    if (std::filesystem::exists(model)) kinds = model_output_kinds(model);
  } catch (const std::exception& e) {
    return e.what();
  }
  for (int k = 0; k < count; ++k) {
    const std::string file = "output_" + std::to_string(k) + ".pb";
    if (!std::filesystem::exists(actual_dir + "/" + file)) return file + " was not written";
    try {
      const OutputKind kind = static_cast<size_t>(k) < kinds.size() ? kinds[k] : OutputKind::kTensor;
      const DecodedValue expected = read_value_file(expected_dir + "/" + file, kind);
      const DecodedValue actual = read_value_file(actual_dir + "/" + file, kind);
      if (auto difference = compare_values(actual, expected))
        return "output_" + std::to_string(k) + ": " + *difference;
    } catch (const std::exception& e) {
      return e.what();
    }
  }
  return {};
}

std::vector<NodeTestResult> run_node_tests(const std::vector<NodeTest>& tests, const RunOptions& options) {
  std::vector<NodeTestResult> results(tests.size());
  std::vector<std::unique_ptr<Job>> jobs(tests.size());
  size_t next = 0, finished = 0;
  QEventLoop loop;

  std::function<void()> launch_next = [&]() {
    if (next >= tests.size()) return;
    const size_t index = next++;
    const NodeTest& test = tests[index];
    auto job = std::make_unique<Job>();
    job->index = index;
    job->out_dir = std::make_unique<QTemporaryDir>();
    job->process = std::make_unique<QProcess>();
    job->deadline = std::make_unique<QTimer>();
    Job* raw = job.get();
    jobs[index] = std::move(job);

    auto done = [&, raw]() {
      raw->deadline->stop();
      results[raw->index] = judge(tests[raw->index], *raw, options);
      // Release the scratch folder now, but let Qt finish with the process object first.
      raw->out_dir.reset();
      QTimer::singleShot(0, [&, raw]() {
        jobs[raw->index].reset();
        if (++finished == tests.size())
          loop.quit();
        else
          launch_next();
      });
    };
    QObject::connect(raw->process.get(), &QProcess::finished, done);
    QObject::connect(raw->process.get(), &QProcess::errorOccurred, [raw, done](QProcess::ProcessError e) {
      if (e == QProcess::FailedToStart) done();
    });
    raw->deadline->setSingleShot(true);
    QObject::connect(raw->deadline.get(), &QTimer::timeout, [raw]() {
      raw->timed_out = true;
      raw->process->kill();
    });

    const QStringList arguments = {"run",       QString::fromStdString(test.folder + "/model.onnx"),
                                   "--inputs",  QString::fromStdString(test.folder + "/test_data_set_0"),
                                   "--out-dir", raw->out_dir->path(),
                                   "--target",  QString::fromStdString(options.target)};
    raw->deadline->start(options.timeout_ms);
    raw->process->start(QString::fromStdString(options.tessel_binary), arguments);
  };

  if (tests.empty()) return results;
  for (int k = 0; k < std::max(1, options.parallel_processes); ++k) launch_next();
  loop.exec();
  return results;
}

std::map<std::string, std::pair<int, int>> pass_counts_by_op(const std::vector<NodeTest>& tests,
                                                             const std::vector<NodeTestResult>& results) {
  std::map<std::string, std::pair<int, int>> counts;
  for (size_t i = 0; i < tests.size() && i < results.size(); ++i) {
    for (const std::string& op : tests[i].ops) {
      auto& [passed, run] = counts[op];
      passed += results[i].passed ? 1 : 0;
      ++run;
    }
  }
  return counts;
}

std::string tessel_binary_path(const std::string& built_default) {
  if (const char* path = std::getenv("TESSEL_BINARY"); path && *path) return path;
  return built_default;
}

}  // namespace tessel::testing
