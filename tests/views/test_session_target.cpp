// A session file is data, never code: a .tessel whose target would make a shell run a command is
// refused as it is read, with an error naming the file, the field and the refused option; the
// command never runs.
#include <QtTest>

#include "core/plugin/plugin_manager.h"
#include "core/target/target.h"
#include "studio_fixtures.h"
#include "views/session/compile_model.h"
#include "views/session/session_document.h"

using namespace tessel;
using namespace tessel::views;

namespace {
// `s` with %1 replaced by the path the attack would create.
QString with_victim(QString s, const QString& victim) { return s.replace("%1", victim); }
}  // namespace

class SessionTargetTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"}); }

  void a_session_cannot_smuggle_a_command_in_its_target() {
    QTemporaryDir dir;
    const QString victim = dir.filePath("pwned");
    const std::pair<QString, QString> attacks[] = {
        {R"(c -cflags=\"-O2; touch %1\")", "option 'cflags': word '-O2;' contains ';'"},
        {R"x(c -cflags=\"$(touch %1)\")x", "option 'cflags': word '$(touch' contains '$'"},
        {R"(c -cc=\"cc; touch %1\")", "option 'cc': 'cc; touch %1' contains ';'"},
    };
    for (const auto& [target, expected] : attacks) {
      const QString path = dir.filePath("s.tessel");
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
      f.write(QString(R"({"format": "tessel-session", "version": 1, "model": {"path": "%1"}, "target": "%2"})")
                  .arg(test::sample_model("mlp"), with_victim(target, victim))
                  .toUtf8());
      f.close();
      // Refused as the file is read, naming the file and the field; nothing compiled, nothing run.
      QString message;
      try {
        load_session(path.toStdString());
      } catch (const Error& e) {
        message = QString::fromStdString(e.what());
      }
      QVERIFY2(message.startsWith(path + ": field 'target': "), qPrintable(message));
      QVERIFY2(message.contains(with_victim(expected, victim)), qPrintable(message));
      QVERIFY(!QFile::exists(victim));
    }
  }
};

QTEST_MAIN(SessionTargetTest)
#include "test_session_target.moc"
