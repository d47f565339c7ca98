// tessel-measure: the studio's measuring process. Reads one JSON request per line on stdin and
// writes one JSON reply per line on stdout, until stdin closes.
//
//   {"id": 7, "op": "measure", "model": "/m/resnet_block.onnx", "target": "llvm", "pass_options": {},
//    "kernel": "fused_conv2d_nchwc_relu_1", "schedule": "split(...)\n...", "seed": 1}
//     → {"id": 7, "ok": true, "verdict": "correct", "max_abs_error": 1e-6, "ms_min": 0.3, ...,
//        "artifacts": [["asm", "..."], ["llvm_ir", "..."]]}
//   {"id": 8, "op": "profile", "model": ..., "target": ..., "schedules": {"K": "text"}, "warmup": 2, "repeats": 10}
//     → {"id": 8, "ok": true, "profile": <tessel profile --json>, "last_run": {...}, "ceilings": {...}|null}
//   {"id": 9, "op": "ceilings", "target": ...}   → the cached ceilings (null when never calibrated)
//   {"id": 10, "op": "calibrate", "target": ..., "quick": false} → measures, caches, returns them
//   any failure → {"id": N, "ok": false, "error": "kernel 'K': schedule: step 2 ...: ..."}
//
// Compiled models are cached per model path, so an edit costs one kernel's codegen. A hand schedule
// may generate a kernel that crashes or never ends: this process dies or hangs, and the studio
// (views/edit/measure_client.h) reports it and starts a new one. Tests make that happen on purpose
// with "inject": "crash" | "hang", honoured only when TESSEL_MEASURE_ALLOW_INJECT=1.
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
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"

namespace tessel::measure {

namespace {

using json = nlohmann::json;

Target target_of(const json& request) {
  std::string spec = request.value("target", "");
  if (spec.empty()) spec = CodeGenRegistry::global().has("llvm") ? "llvm" : "c";
  Target t = Target::parse(spec);
  if (!CodeGenRegistry::global().has(t.kind()))
    throw Error("target '" + spec + "' has no code generator (loaded: " + [] {
      std::string s;
      for (const std::string& k : CodeGenRegistry::global().kinds()) s += (s.empty() ? "" : ", ") + k;
      return s.empty() ? std::string("none") : s;
    }() + ")");
  return t;
}

std::string required_string(const json& request, const char* key) {
  if (!request.contains(key) || !request[key].is_string()) throw Error(std::string("request without \"") + key + "\"");
  return request[key].get<std::string>();
}

class Server {
 public:
  json handle(const json& request) {
    inject(request);
    const std::string op = request.value("op", "measure");
    if (op == "measure") return measure(request);
    if (op == "profile") return profile(request);
    if (op == "ceilings") return ceilings_reply(cached_ceilings(target_of(request)));
    if (op == "calibrate") return calibrate(request);
    throw Error("unknown op '" + op + "' (measure, profile, ceilings, calibrate)");
  }

 private:
  // Test-only faults: the client must survive both.
  static void inject(const json& request) {
    if (!request.contains("inject")) return;
    const char* allow = std::getenv("TESSEL_MEASURE_ALLOW_INJECT");
    if (!allow || std::string(allow) != "1")
      throw Error("\"inject\" is honoured only with TESSEL_MEASURE_ALLOW_INJECT=1");
    const std::string what = request["inject"].get<std::string>();
    if (what == "crash") std::raise(SIGSEGV);
    if (what == "hang")
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    throw Error("unknown inject '" + what + "' (crash, hang)");
  }

  const std::optional<compile::MachineCeilings>& cached_ceilings(const Target& t) {
    auto it = ceilings_.find(t.str());
    if (it == ceilings_.end()) it = ceilings_.emplace(t.str(), compile::load_cached_ceilings(t)).first;
    return it->second;
  }

  static json ceilings_reply(const std::optional<compile::MachineCeilings>& c) {
    return {{"ceilings", c ? compile::ceilings_json(*c) : json(nullptr)}};
  }

  json measure(const json& request) {
    const Target target = target_of(request);
    auto pipeline =
        models_.pipeline(required_string(request, "model"), target, request.value("pass_options", json::object()));
    KernelRequest k;
    k.kernel = required_string(request, "kernel");
    k.schedule_text = request.value("schedule", "");
    k.seed = request.value("seed", uint64_t{1});
    k.min_time_ms = request.value("min_time_ms", 60.0);
    KernelResult r = measure_kernel(*pipeline, target, k, cached_ceilings(target));
    json artifacts = json::array();
    for (const auto& [name, text] : r.artifacts) artifacts.push_back({name, text});
    return {{"kernel", r.kernel},
            {"target", target.str()},
            {"verdict", r.correct ? "correct" : "wrong"},
            {"max_abs_error", r.max_abs_error},
            {"tolerance", r.tolerance},
            {"ms_min", r.ms_min},
            {"ms_median", r.ms_median},
            {"repeats", r.repeats},
            {"flops", r.flops},
            {"bytes", r.bytes},
            {"gflops", r.gflops},
            {"gbps", r.gbps},
            {"intensity", r.intensity},
            {"attainable_gflops", r.attainable_gflops},
            {"bound", r.bound},
            {"compile_ms", r.compile_ms},
            {"artifacts", artifacts}};
  }

  json profile(const json& request) {
    const Target target = target_of(request);
    const std::string path = required_string(request, "model");
    compile::CompileOptions options;
    options.pipeline = pipeline_options_from_json(request.value("pass_options", json::object()));
    if (request.contains("schedules"))
      for (auto it = request["schedules"].begin(); it != request["schedules"].end(); ++it) {
        try {
          options.schedules[it.key()] = schedule::parse_schedule(it.value().get<std::string>());
        } catch (const Error& e) {
          rethrow_with_context(e, "kernel '" + it.key() + "': schedule");
        }
      }
    auto model = compile::CompiledModel::compile(models_.imported(path), target, options);
    const auto& ceilings = cached_ceilings(target);
    compile::Profile p =
        compile::profile_model(*model, compile::random_inputs(model->graph(), request.value("seed", uint64_t{1})),
                               request.value("warmup", 2), request.value("repeats", 10), ceilings);
    json reply = ceilings_reply(ceilings);
    reply["profile"] = compile::profile_json(p);
    reply["threads"] = p.threads;
    reply["last_run"] = compile::run_times_json(p.last_run);
    return reply;
  }

  json calibrate(const json& request) {
    const Target target = target_of(request);
    compile::CalibrateOptions options;
    options.quick = request.value("quick", false);
    compile::MachineCeilings c = compile::calibrate(target, options);
    compile::save_cached_ceilings(c);
    ceilings_[target.str()] = c;
    return ceilings_reply(c);
  }

  ModelCache models_;
  std::map<std::string, std::optional<compile::MachineCeilings>> ceilings_;
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
    json reply;
    json request = json::parse(line, nullptr, false);
    if (request.is_discarded() || !request.is_object()) {
      reply = {{"ok", false}, {"error", "request is not a JSON object: " + line.substr(0, 80)}};
    } else {
      try {
        reply = server.handle(request);
        reply["ok"] = true;
      } catch (const std::exception& e) {
        reply = {{"ok", false}, {"error", e.what()}};
      }
      if (request.contains("id")) reply["id"] = request["id"];
    }
    const std::string text = reply.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    std::fwrite(text.data(), 1, text.size(), replies);
    std::fflush(replies);
  }
  return 0;
}

}  // namespace tessel::measure

int main() { return tessel::measure::serve(); }
