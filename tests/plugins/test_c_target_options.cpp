// The c target's `cc` and `cflags` come from places a user does not fully control (a session file,
// a command line pasted from elsewhere, a request to the measuring process). A value that would
// make a shell run a command is refused with a message naming the option and the bad word, and the
// command never runs — through Target::parse and `tessel run --target` (tessel-measure requests:
// test_measure_process).
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/target/target.h"

using namespace tessel;

namespace {

// `s` with %1 replaced by the path the attack would create.
QString with_victim(QString s, const QString& victim) { return s.replace("%1", victim); }

struct Attack {
  QString spec;  // %1: the file the command would create
  QString expected;
};

// Each attack tries to create the file %1.
const Attack kAttacks[] = {
    {R"(c -cflags="-O2; touch %1")", "option 'cflags': word '-O2;' contains ';'"},
    {R"x(c -cflags="-O2 $(touch %1)")x", "option 'cflags': word '$(touch' contains '$'"},
    {R"(c -cflags="-O2 `touch %1`")", "option 'cflags': word '`touch' contains '`'"},
    {R"(c -cflags=-O2;touch${IFS}%1)", "option 'cflags': word '-O2;touch${IFS}%1' contains ';'"},
    {R"(c -cc="cc; touch %1")", "option 'cc': 'cc; touch %1' contains ';'"},
    {R"(c -cc=cc;touch)", "option 'cc': 'cc;touch' contains ';'"},
    {R"({"kind": "c", "cflags": "-O2 && touch %1"})", "option 'cflags': word '&&' contains '&'"},
    {R"x({"kind": "c", "cc": "$(touch %1)"})x", "option 'cc': '$(touch %1)' contains '$'"},
};

QString error_of(const QString& spec) {
  try {
    Target::parse(spec.toStdString());
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return "accepted";
}

}  // namespace

class TestCTargetOptions : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString victim() const { return dir_.filePath("pwned"); }

 private Q_SLOTS:
  void initTestCase() {
    PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"});
    QVERIFY(CodeGenRegistry::global().has("c"));
  }

  void ordinary_flags_are_accepted() {
    for (const char* spec : {"c", R"(c -cflags="-O3 -march=native -ffast-math -fno-tree-vectorize -Wall -std=c11")",
                             R"(c -cflags=-Os -cc=gcc)",
                             R"({"kind": "c", "cflags": "-O2 -g -mavx2 -mno-fma -w -pthread"})", R"(c -cflags="")"}) {
      QCOMPARE(error_of(spec), QString("accepted"));
      const Target t = Target::parse(spec);
      QVERIFY2(Target::parse(t.str()) == t, t.str().c_str());  // the short form round-trips
    }
  }

  void commands_in_options_are_refused() {
    for (const Attack& a : kAttacks) {
      const QString error = error_of(with_victim(a.spec, victim()));
      QVERIFY2(error.startsWith("target 'c': ") && error.contains(with_victim(a.expected, victim())),
               qPrintable(error));
    }
    QVERIFY(!QFile::exists(victim()));
  }

  // Flags that are not shell tricks but would load, choose or write files are refused too.
  void flags_that_reach_outside_the_build_are_refused() {
    const std::pair<const char*, const char*> cases[] = {
        {"-o", "flag '-o' is not accepted"},
        {"-O2 -B", "flag '-B' is not accepted"},
        {"-fplugin=evil", "flag '-fplugin=evil' is not accepted: it loads"},
        {"-fuse-ld=lld", "flag '-fuse-ld=lld' is not accepted"},
        {"-fprofile-generate", "flag '-fprofile-generate' is not accepted"},
        {"-Wl,-rpath", "flag '-Wl,-rpath' is not accepted: -W options with ','"},
        {"-I/etc", "word '-I/etc' contains '/'"},
        {"@args.txt", "word '@args.txt' contains '@'"},
        {"-specs=x", "flag '-specs=x' is not accepted"},
        {"-DSECRET=1", "flag '-DSECRET=1' is not accepted"},
        {"-lm", "flag '-lm' is not accepted"},
        {"-save-temps", "flag '-save-temps' is not accepted"},
        {"O2", "word 'O2' is not a flag"},
    };
    for (const auto& [flags, expected] : cases) {
      const QString error = error_of(QString(R"({"kind": "c", "cflags": "%1"})").arg(flags));
      QVERIFY2(error.startsWith("target 'c': option 'cflags': ") && error.contains(expected), qPrintable(error));
    }
    QVERIFY(error_of(R"(c -cc=/etc/passwd)").contains("option 'cc': '/etc/passwd' is not an executable file"));
    QVERIFY(error_of(R"(c -cc=no-such-cc-anywhere)").contains("no program 'no-such-cc-anywhere' on PATH"));
  }

  void the_cli_refuses_them_before_running_anything() {
    QDir().mkpath(dir_.filePath("inputs"));
    for (const Attack& a : kAttacks) {
      QProcess p;
      p.setWorkingDirectory(dir_.path());
      p.start(TESSEL_BINARY_DIR "/app/cli/tessel",
              {"run", TESSEL_SOURCE_DIR "/resources/models/mlp.onnx", "--inputs", dir_.filePath("inputs"), "--out-dir",
               dir_.filePath("out"), "--target", with_victim(a.spec, victim())});
      QVERIFY(p.waitForFinished(60000));
      const QString err = QString::fromUtf8(p.readAllStandardError());
      QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() != 0, qPrintable(err));
      QVERIFY2(err.startsWith("tessel: ") && err.contains(with_victim(a.expected, victim())), qPrintable(err));
      QVERIFY(!QFile::exists(victim()));
      QVERIFY(!QFileInfo::exists(dir_.filePath("out")));
    }
  }
};

QTEST_APPLESS_MAIN(TestCTargetOptions)
#include "test_c_target_options.moc"
