// tessel-measure, the studio's measuring process, driven line by line as the studio drives it:
// requests that break the protocol, and requests whose target would run a command, each get an
// error reply naming the problem — and the process keeps serving the requests after them.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "core/measure/protocol.h"

using namespace tessel;

namespace {
// `s` with %1 replaced by the path the attack would create.
QString with_victim(QString s, const QString& victim) { return s.replace("%1", victim); }
}  // namespace

class TestMeasureProcess : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QProcess process_;

  QString victim() const { return dir_.filePath("pwned"); }

  // One line out, one reply line back.
  measure::Reply ask_line(const QByteArray& line) {
    process_.write(line + "\n");
    while (!process_.canReadLine() && process_.waitForReadyRead(60000)) {
    }
    const QByteArray reply = process_.readLine().trimmed();
    return measure::decode_reply_line(std::string_view(reply.constData(), static_cast<size_t>(reply.size())));
  }
  measure::Reply ask(const measure::Request& r) {
    std::string line = measure::encode_line(r);
    line.pop_back();
    return ask_line(QByteArray::fromStdString(line));
  }
  QString error_of(const measure::Reply& r) {
    return r.failed() ? QString::fromStdString(r.failed()->error) : QString("no error");
  }
  void check_alive() {
    const measure::Reply r = ask(measure::Request{.id = 99, .inject = {}, .body = measure::CeilingsRequest{"c"}});
    QVERIFY2(!r.failed() && r.id == 99, qPrintable(error_of(r)));
    QCOMPARE(process_.state(), QProcess::Running);
  }

 private Q_SLOTS:
  void initTestCase() {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("TESSEL_CACHE_DIR", dir_.filePath("cache"));  // the ceilings lookup reads no real cache
    process_.setProcessEnvironment(env);
    process_.setWorkingDirectory(dir_.path());
    process_.start(TESSEL_MEASURE_EXE, {});
    QVERIFY(process_.waitForStarted());
    check_alive();
  }

  void malformed_requests_get_an_error_naming_the_field() {
    const std::pair<const char*, const char*> cases[] = {
        {"this is not json", "request is not JSON: this is not json"},
        {R"(["measure"])", R"(request is not a JSON object: ["measure"])"},
        {R"({"id": 3, "op": "measure", "kernel": "k"})", "request has no field 'model'"},
        {R"({"id": 4, "op": "measure", "model": 5, "kernel": "k"})", "request field 'model': expected a string, got 5"},
        {R"({"id": 5, "op": "profile", "model": "m.onnx", "seed": "one"})",
         R"(request field 'seed': expected an unsigned integer, got "one")"},
        {R"({"id": 6, "op": "teleport"})",
         R"(request field 'op': expected one of "measure", "profile", "ceilings", "calibrate", got "teleport")"},
        {R"({"id": 7, "op": "ceilings", "target": "warp-drive"})", "unknown target kind 'warp-drive'"},
    };
    for (const auto& [line, expected] : cases) {
      const measure::Reply r = ask_line(line);
      QVERIFY2(error_of(r).contains(expected), qPrintable(error_of(r)));
      check_alive();
    }
    // An error reply carries the id of the request it answers, when the request had a readable one.
    QCOMPARE(ask_line(R"({"id": 12, "op": "measure", "model": 5})").id, int64_t{12});
  }

  void a_target_that_would_run_a_command_is_refused() {
    const std::pair<QString, QString> attacks[] = {
        {R"(c -cflags="-O2; touch %1")", "option 'cflags': word '-O2;' contains ';'"},
        {R"x(c -cflags="$(touch %1)")x", "option 'cflags': word '$(touch' contains '$'"},
        {R"(c -cflags="`touch %1`")", "option 'cflags': word '`touch' contains '`'"},
        {R"(c -cc="cc; touch %1")", "option 'cc': 'cc; touch %1' contains ';'"},
    };
    int64_t id = 100;
    for (const auto& [spec, expected] : attacks) {
      measure::MeasureKernelRequest m;
      m.model = {TESSEL_SOURCE_DIR "/resources/models/mlp.onnx", with_victim(spec, victim()).toStdString(), {}, {}};
      m.kernel = "fused_dense_1";
      measure::ProfileModelRequest p;
      p.model = m.model;
      for (const measure::Request& r : {measure::Request{++id, "", m}, measure::Request{++id, "", p},
                                        measure::Request{++id, "", measure::CalibrateRequest{m.model.target, true}}}) {
        const measure::Reply reply = ask(r);
        QCOMPARE(reply.id, r.id);
        QVERIFY2(error_of(reply).contains(with_victim(expected, victim())), qPrintable(error_of(reply)));
      }
    }
    QVERIFY(!QFile::exists(victim()));
    check_alive();
  }

  void cleanupTestCase() {
    process_.closeWriteChannel();
    QVERIFY(process_.waitForFinished(10000));
    QCOMPARE(process_.exitStatus(), QProcess::NormalExit);
    QCOMPARE(process_.exitCode(), 0);
  }
};

QTEST_APPLESS_MAIN(TestMeasureProcess)
#include "test_measure_process.moc"
