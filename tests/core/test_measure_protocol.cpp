// The measuring process's protocol (core/measure/protocol.h), without a process: every message kind
// survives encode → line → decode unchanged, and a message that breaks the protocol is refused with
// an error naming the field (never a bare JSON library exception).
#include <QtTest>

#include "core/measure/protocol.h"

using namespace tessel;
using namespace tessel::measure;
using json = nlohmann::json;

namespace {

analysis::MachineCeilings sample_ceilings() {
  analysis::MachineCeilings c;
  c.machine = "Test CPU @ 3 GHz";
  c.target = "llvm -num_threads=2";
  c.threads = 2;
  c.compute = {{"fma_512", 800}, {"fma_256", 400}};
  c.bandwidth = {{"dram", 40}};
  return c;
}

analysis::Profile sample_profile() {
  analysis::Profile p;
  p.target = "llvm -num_threads=2";
  p.total_ms = 1.5;
  p.threads = 2;
  analysis::KernelProfile a;
  a.name = "fused_conv2d_relu_1";
  a.ms_min = 0.5, a.ms_median = 0.6, a.flops = 1000000, a.bytes = 4096, a.gflops = 2, a.gbps = 8, a.intensity = 0.25;
  a.bound = "memory (dram)", a.attainable_gflops = 10;
  analysis::KernelProfile b;
  b.name = "softmax_2", b.compiled = false, b.ms_min = 0.1, b.ms_median = 0.2;
  p.kernels = {a, b};
  p.last_run.kernel_ms = {0.5, 0.1};
  p.last_run.kernel_spans_ms = {{0, 0.5}, {0.5, 0.6}};
  p.last_run.thread_spans = {{0, 1, 0.1, 0.4}};
  p.last_run.total_ms = 0.6;
  return p;
}

// The error text of decoding `line` as a request; fails the test when it decodes.
QString request_error(const std::string& line, int64_t* id = nullptr) {
  try {
    decode_request_line(line);
  } catch (const ProtocolError& e) {
    if (id) *id = e.request_id();
    return QString::fromStdString(e.what());
  }
  return "decoded";
}

QString reply_error(const json& j) {
  try {
    reply_from_json(j);
  } catch (const ProtocolError& e) {
    return QString::fromStdString(e.what());
  }
  return "decoded";
}

// Encoded, written as a line, read back and decoded: the same message.
Request request_round_trip(const Request& r) {
  const std::string line = encode_line(r);
  if (line.empty() || line.back() != '\n' || line.find('\n') != line.size() - 1) return {};
  return decode_request_line(std::string_view(line).substr(0, line.size() - 1));
}

json reply_round_trip(const Reply& r) {
  const std::string line = encode_line(r);
  return to_json(decode_reply_line(std::string_view(line).substr(0, line.size() - 1)));
}

}  // namespace

class TestMeasureProtocol : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void every_request_kind_round_trips() {
    const ModelRef model{"/models/resnet_block.onnx",
                         "llvm -num_threads=2",
                         {{"fuse", false}, {"opt_level", 2}},
                         {{"input", {1, 3, 224, 224}}, {"mask", {1, 128}}}};
    std::vector<Request> requests;
    requests.push_back(
        {7, "", MeasureKernelRequest{model, "fused_conv2d_relu_1", "split(C.x, 8)\nvectorize(C.x.i)", 42, 5}});
    requests.push_back({8, "crash", MeasureKernelRequest{model, "k", "", 1, 60}});
    requests.push_back({12, "", MeasureKernelRequest{model, "k", "", 1, 60, false, CacheCondition::kCold}});
    requests.push_back({9, "", ProfileModelRequest{model, {{"k1", "split(C.x, 4)"}, {"k2", ""}}, 3, 0, 25}});
    requests.push_back({10, "", CeilingsRequest{"c -cflags=\"-O3 -march=native\""}});
    requests.push_back({11, "hang", CalibrateRequest{"llvm", true}});
    for (const Request& r : requests) {
      const Request back = request_round_trip(r);
      QVERIFY2(back == r, to_json(r).dump().c_str());
      QCOMPARE(QString::fromStdString(to_json(r)["op"]), QString(op_name(r).data()));
    }
    // Fields left out take their documented defaults.
    Request minimal = decode_request_line(R"({"op": "measure", "model": "m.onnx", "kernel": "k"})");
    const auto& m = std::get<MeasureKernelRequest>(minimal.body);
    QCOMPARE(minimal.id, int64_t{0});
    QCOMPARE(m.seed, uint64_t{1});
    QCOMPARE(m.min_time_ms, 60.0);
    QVERIFY(m.model.target.empty() && m.schedule.empty() && m.model.pass_options == json::object());
    QVERIFY(m.model.input_shapes.empty());
    QVERIFY(m.cache == CacheCondition::kWarm);
    // Warm is written as no field at all (a line an older tessel-measure reads the same); cold is.
    QVERIFY(!to_json(Request{1, "", MeasureKernelRequest{model, "k", "", 1, 60}}).contains("cache"));
    QCOMPARE(QString::fromStdString(to_json(
                 Request{1, "", MeasureKernelRequest{model, "k", "", 1, 60, true, CacheCondition::kCold}})["cache"]),
             QString("cold"));
  }

  void every_reply_kind_round_trips() {
    KernelMeasured measured;
    measured.kernel = "fused_conv2d_relu_1", measured.target = "llvm -num_threads=1", measured.correct = true;
    measured.max_abs_error = 1e-6, measured.tolerance = 1e-4, measured.ms_min = 0.3, measured.ms_median = 0.35;
    measured.repeats = 200, measured.flops = 123456789012, measured.bytes = 1 << 20, measured.gflops = 41.1;
    measured.gbps = 3.5, measured.intensity = 11.7, measured.attainable_gflops = 90,
    measured.bound = "compute (fma_512)";
    measured.compile_ms = 12.5, measured.artifacts = {{"asm", "vfmadd231ps ..."}, {"llvm_ir", "define void @k()"}};
    KernelMeasured wrong = measured;
    wrong.correct = false, wrong.artifacts.clear();

    std::vector<Reply> replies;
    replies.push_back({1, measured});
    replies.push_back({2, wrong});
    replies.push_back({3, ModelProfiled{sample_profile(), sample_ceilings()}});
    replies.push_back({4, ModelProfiled{sample_profile(), std::nullopt}});
    replies.push_back({5, CeilingsKnown{sample_ceilings()}});
    replies.push_back({6, CeilingsKnown{std::nullopt}});
    replies.push_back({7, Failed{"kernel 'k': schedule: step 2 split(C.x, 0): factor must be >= 1"}});
    for (const Reply& r : replies)
      QCOMPARE(QString::fromStdString(reply_round_trip(r).dump()), QString::fromStdString(to_json(r).dump()));

    // Spot checks that the values, not only the text, came through.
    const Reply back = decode_reply_line(encode_line(replies[2]));
    const auto& profiled = std::get<ModelProfiled>(back.body);
    QCOMPARE(back.id, int64_t{3});
    QCOMPARE(profiled.profile.threads, 2);
    QCOMPARE(profiled.profile.kernels.size(), size_t{2});
    QCOMPARE(QString::fromStdString(profiled.profile.kernels[0].bound), QString("memory (dram)"));
    QVERIFY(!profiled.profile.kernels[1].compiled);
    QCOMPARE(profiled.profile.last_run.thread_spans.size(), size_t{1});
    QVERIFY(profiled.ceilings && profiled.ceilings->peak_gflops() == 800);
    const Reply failed = decode_reply_line(encode_line(replies.back()));
    QVERIFY(failed.failed() && failed.failed()->error.find("factor must be") != std::string::npos);
  }

  void a_malformed_request_names_its_field() {
    struct Case {
      const char* line;
      const char* error;
    };
    const Case cases[] = {
        {"this is not json", "request is not JSON: this is not json"},
        {"[1, 2, 3]", "request is not a JSON object: [1,2,3]"},
        {R"({"id": 1})", "request has no field 'op'"},
        {R"({"id": 1, "op": 7})", "request field 'op': expected a string, got 7"},
        {R"({"id": 1, "op": "frobnicate"})",
         R"(request field 'op': expected one of "measure", "profile", "ceilings", "calibrate", got "frobnicate")"},
        {R"({"id": 1, "op": "measure", "kernel": "k"})", "request has no field 'model'"},
        {R"({"id": 1, "op": "measure", "model": 5, "kernel": "k"})", "request field 'model': expected a string, got 5"},
        {R"({"id": 1, "op": "measure", "model": "m", "kernel": "k", "seed": "one"})",
         R"(request field 'seed': expected an unsigned integer, got "one")"},
        {R"({"id": 1, "op": "measure", "model": "m", "kernel": "k", "seed": -3})",
         "request field 'seed': expected an unsigned integer, got -3"},
        {R"({"id": 1, "op": "measure", "model": "m", "kernel": "k", "pass_options": [1]})",
         "request field 'pass_options': expected an object, got [1]"},
        {R"({"id": 1, "op": "measure", "model": "m", "kernel": "k", "input_shapes": {"x": [1, -3]}})",
         "request field 'input_shapes.x[1]': expected an integer in [0, 2147483647], got -3"},
        {R"({"id": 1, "op": "measure", "model": "m", "kernel": "k", "input_shapes": {"x": "1x3"}})",
         R"(request field 'input_shapes.x': expected an array, got "1x3")"},
        {R"({"id": 1, "op": "measure", "model": "m", "kernel": "k", "cache": "lukewarm"})",
         R"(request field 'cache': expected "warm" or "cold", got "lukewarm")"},
        {R"({"id": 1, "op": "profile", "model": "m", "schedules": {"k1": 4}})",
         "request field 'schedules.k1': expected a string, got 4"},
        {R"({"id": 1, "op": "profile", "model": "m", "repeats": 0})",
         "request field 'repeats': expected an integer in [1, 100000], got 0"},
        {R"({"id": 1, "op": "calibrate", "quick": "yes"})",
         R"(request field 'quick': expected true or false, got "yes")"},
        {R"({"id": "7", "op": "ceilings"})", R"(request field 'id': expected an integer, got "7")"},
    };
    for (const Case& c : cases) QCOMPARE(request_error(c.line), QString(c.error));

    // The request's id travels with the error, so the error reply reaches the caller that asked.
    int64_t id = -1;
    request_error(R"({"id": 42, "op": "measure", "model": "m", "kernel": 3})", &id);
    QCOMPARE(id, int64_t{42});
  }

  void a_malformed_reply_names_its_field() {
    json ok = to_json(Reply{3, ModelProfiled{sample_profile(), sample_ceilings()}});
    QCOMPARE(reply_error(json{{"id", 1}}), QString("reply has no field 'ok'"));
    QCOMPARE(reply_error(json{{"id", 1}, {"ok", false}}), QString("reply has no field 'error'"));
    QCOMPARE(reply_error(json{{"id", 1}, {"ok", true}, {"reply", "gossip"}}),
             QString(R"(reply field 'reply': expected one of "measure", "profile", "ceilings", got "gossip")"));
    json bad = ok;
    bad["profile"]["kernels"][1]["ms_min"] = nullptr;
    QCOMPARE(reply_error(bad), QString("reply field 'profile.kernels[1].ms_min': expected a number, got null"));
    bad = ok;
    bad["last_run"]["spans"][0] = json::array({1});
    QCOMPARE(reply_error(bad), QString("reply field 'last_run.spans[0]': expected a [begin, end] pair, got [1]"));
    bad = ok;
    bad["last_run"]["device_lanes"] = json::array({json::array({0, json{{"lanes", 3}}})});
    QVERIFY2(reply_error(bad).startsWith("reply field 'last_run': expected a run's times"),
             qPrintable(reply_error(bad)));
    bad = ok;
    bad["ceilings"]["compute_gflops"]["fma_512"] = "fast";
    QCOMPARE(reply_error(bad),
             QString(R"(reply field 'ceilings.compute_gflops.fma_512': expected a number, got "fast")"));
    json measured = to_json(Reply{2, KernelMeasured{}});
    measured["verdict"] = "maybe";
    QCOMPARE(reply_error(measured), QString(R"(reply field 'verdict': expected "correct" or "wrong", got "maybe")"));
    measured["verdict"] = "correct";
    measured["artifacts"] = json::array({json::array({"asm"})});
    QCOMPARE(reply_error(measured),
             QString(R"(reply field 'artifacts[0]': expected a [name, text] pair, got ["asm"])"));
  }

  void text_that_is_not_utf8_does_not_break_the_line() {
    Reply r{5, Failed{std::string("bad byte \xff in a compiler message")}};
    const std::string line = encode_line(r);
    QCOMPARE(std::count(line.begin(), line.end(), '\n'), 1);
    QVERIFY(decode_reply_line(line).failed());
  }
};

QTEST_APPLESS_MAIN(TestMeasureProtocol)
#include "test_measure_protocol.moc"
