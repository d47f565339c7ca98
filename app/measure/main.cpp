// tessel-measure: the studio's measuring process. Reads one request per line on stdin and writes
// one reply per line on stdout, until stdin closes. The messages and their fields are defined once,
// in core/measure/protocol.h (the studio encodes and decodes with the same code):
//
//   {"id": 7, "op": "measure", "model": "/m/resnet_block.onnx", "target": "llvm", "pass_options": {},
//    "kernel": "fused_conv2d_nchwc_relu_1", "schedule": "split(...)\n...", "seed": 1}
//     → {"id": 7, "ok": true, "reply": "measure", "verdict": "correct", "max_abs_error": 1e-6, ...}
//   a request that breaks the protocol, or fails → {"id": 7, "ok": false, "error": "request field 'seed': ..."}
//
// A bad request costs its own error reply, never the process. Compiled models are cached per model
// path, so an edit costs one kernel's codegen. A hand schedule may generate a kernel that crashes or
// never ends: this process dies or hangs, and the studio (views/edit/measure_client.h) reports it
// and starts a new one. Tests make that happen on purpose with "inject": "crash" | "hang", honoured
// only when TESSEL_MEASURE_ALLOW_INJECT=1.
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "app/measure/measure_kernel.h"
#include "app/measure/model_cache.h"
#include "core/analysis/profile.h"
#include "core/compile/kernel_compiler.h"
#include "core/measure/protocol.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"

namespace tessel::measure {

namespace {

// The request's target, or the default one; it must generate code (this process compiles and times).
Target target_of(const std::string& requested) {
  const Target target = requested.empty() ? compile::default_target() : Target::parse(requested);
  return compile::require_code_generator(target, "measuring");
}

class Server {
 public:
  Reply handle(const Request& request) {
    inject(request.inject);
    return Reply{request.id, std::visit([this](const auto& body) { return answer(body); }, request.body)};
  }

 private:
  using Answer = decltype(Reply::body);

  // Test-only faults: the client must survive both.
  static void inject(const std::string& what) {
    if (what.empty()) return;
    const char* allow = std::getenv("TESSEL_MEASURE_ALLOW_INJECT");
    if (!allow || std::string(allow) != "1")
      throw Error("\"inject\" is honoured only with TESSEL_MEASURE_ALLOW_INJECT=1");
    if (what == "crash") std::raise(SIGSEGV);
    if (what == "hang")
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    throw Error("unknown inject '" + what + "' (crash, hang)");
  }

  const std::optional<analysis::MachineCeilings>& cached_ceilings(const Target& t) {
    auto it = ceilings_.find(t.str());
    if (it == ceilings_.end()) it = ceilings_.emplace(t.str(), analysis::load_cached_ceilings(t)).first;
    return it->second;
  }

  Answer answer(const MeasureKernelRequest& request) {
    const Target target = target_of(request.model.target);
    auto pipeline = models_.pipeline(request.model, target);
    return measure_kernel(*pipeline, target, request, cached_ceilings(target));
  }

  Answer answer(const ProfileModelRequest& request) {
    const Target target = target_of(request.model.target);
    compile::CompileOptions options;
    options.pipeline = pipeline_options_from_json(request.model.pass_options);
    for (const auto& [kernel, text] : request.schedules) {
      try {
        options.schedules[kernel] = schedule::parse_schedule(text);
      } catch (const Error& e) {
        rethrow_with_context(e, "kernel '" + kernel + "': schedule");
      }
    }
    auto model = compile::CompiledModel::compile(models_.imported(request.model), target, options);
    const auto& ceilings = cached_ceilings(target);
    analysis::Profile p = analysis::profile_model(*model, analysis::random_inputs(model->graph(), request.seed),
                                                  request.warmup, request.repeats, ceilings);
    return ModelProfiled{std::move(p), ceilings};
  }

  Answer answer(const CeilingsRequest& request) { return CeilingsKnown{cached_ceilings(target_of(request.target))}; }

  Answer answer(const CalibrateRequest& request) {
    const Target target = target_of(request.target);
    analysis::CalibrateOptions options;
    options.quick = request.quick;
    analysis::MachineCeilings c = analysis::calibrate(target, options);
    analysis::save_cached_ceilings(c);
    ceilings_[target.str()] = c;
    return CeilingsKnown{c};
  }

  ModelCache models_;
  std::map<std::string, std::optional<analysis::MachineCeilings>> ceilings_;
};

}  // namespace

int serve() {
#ifdef __linux__
  // A kernel stuck in an endless loop must not outlive the studio that started it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) return 0;  // the parent died before the line above
#endif
  // Replies go to a private copy of stdout; fd 1 becomes stderr, so anything a plugin or library
  // prints cannot corrupt the reply stream.
  const int reply_fd = dup(STDOUT_FILENO);
  if (reply_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return std::perror("tessel-measure: dup"), 1;
  FILE* replies = fdopen(reply_fd, "w");
  if (!replies) return std::perror("tessel-measure: fdopen"), 1;

  for (const PluginStatus& p : PluginManager::global().load_all())
    if (!p.loaded)
      std::fprintf(stderr, "tessel-measure: plugin %s skipped: %s\n", p.description_path.c_str(), p.error.c_str());

  Server server;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Reply reply;
    try {
      const Request request = decode_request_line(line);
      reply.id = request.id;
      reply = server.handle(request);
    } catch (const ProtocolError& e) {
      reply = Reply{e.request_id(), Failed{e.what()}};
    } catch (const std::exception& e) {
      reply.body = Failed{e.what()};  // keeps the id of the request that failed
    }
    const std::string text = encode_line(reply);
    std::fwrite(text.data(), 1, text.size(), replies);
    std::fflush(replies);
  }
  return 0;
}

}  // namespace tessel::measure

int main() { return tessel::measure::serve(); }
