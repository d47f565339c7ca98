// Running programs without a shell (core/support/subprocess.h), untrusted code in a forked child
// (core/support/isolated_call.h), the rule for a program a user names, and target options that
// check their values (TargetOptionSpec::check) and keep spaces inside double quotes.
#include <unistd.h>

#include <QTemporaryDir>
#include <QtTest>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "core/support/error.h"
#include "core/support/isolated_call.h"
#include "core/support/subprocess.h"
#include "core/target/target.h"

using namespace tessel;

namespace {

QString error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return "no error";
}

}  // namespace

class TestSubprocess : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private Q_SLOTS:
  void output_and_exit_status_are_captured() {
    ProgramRun r = run_program({"printf", "out"});
    QVERIFY2(r.ok(), r.failure().c_str());
    QCOMPARE(QString::fromStdString(r.out), QString("out"));
    r = run_program({"ls", "/no/such/folder"});
    QVERIFY(r.started && !r.ok() && r.exit_code > 0 && r.signal == 0);
    QVERIFY2(!r.err.empty() && r.first_message_line().find("/no/such/folder") != std::string::npos, r.err.c_str());
    QCOMPARE(QString::fromStdString(r.failure()), QString("exit %1").arg(r.exit_code));
  }

  // The point of it all: an argument is bytes, never a command line.
  void shell_characters_are_plain_bytes() {
    const std::string file = dir_.filePath("pwned").toStdString();
    for (const std::string& arg : {"a; touch " + file, "$(touch " + file + ")", "`touch " + file + "`",
                                   "a && touch " + file, "a | touch " + file}) {
      ProgramRun r = run_program({"printf", "%s", arg});
      QVERIFY2(r.ok(), r.failure().c_str());
      QCOMPARE(QString::fromStdString(r.out), QString::fromStdString(arg));
    }
    QVERIFY(!QFile::exists(QString::fromStdString(file)));
    // A program name with a shell command in it is looked up as one (missing) file.
    ProgramRun r = run_program({"true; touch " + file});
    QVERIFY(!r.started);
    QVERIFY2(r.failure().find("cannot start") != std::string::npos, r.failure().c_str());
    QVERIFY(!QFile::exists(QString::fromStdString(file)));
  }

  void working_folder_and_timeout() {
    ProgramRun r = run_program({"pwd"}, {.working_dir = dir_.path().toStdString(), .timeout = {}});
    QCOMPARE(QString::fromStdString(r.out).trimmed(), QFileInfo(dir_.path()).canonicalFilePath());
    QElapsedTimer t;
    t.start();
    r = run_program({"sleep", "30"}, {.working_dir = {}, .timeout = std::chrono::milliseconds(200)});
    QVERIFY(r.timed_out && !r.ok());
    QVERIFY2(t.elapsed() < 10000, "the timeout did not stop the program");
    QVERIFY2(r.failure().find("timed out after 200 ms") != std::string::npos, r.failure().c_str());
  }

  void a_program_named_by_a_user_is_checked() {
    QCOMPARE(QString::fromStdString(program_problem("cc")), QString());
    QCOMPARE(QString::fromStdString(program_problem(find_program("cc")->string())), QString());
    QCOMPARE(QString::fromStdString(program_problem("cc; touch x")),
             QString("'cc; touch x' contains ';': a program is a name on PATH or an absolute path, made of letters, "
                     "digits and . _ + - /"));
    QVERIFY(program_problem("cc -O2").find("contains ' '") != std::string::npos);
    QVERIFY(program_problem("$(touch)").find("contains '$'") != std::string::npos);
    QVERIFY(program_problem("`touch`").find("contains '`'") != std::string::npos);
    QVERIFY(program_problem("-fplugin").find("starts with '-'") != std::string::npos);
    QVERIFY(program_problem("bin/cc").find("relative path") != std::string::npos);
    QVERIFY(program_problem("/etc/passwd").find("not an executable file") != std::string::npos);
    QVERIFY(program_problem("no-such-compiler-here").find("no program 'no-such-compiler-here' on PATH") !=
            std::string::npos);
  }

  void command_lines_for_people_quote_what_needs_it() {
    QCOMPARE(QString::fromStdString(command_line_text({"cc", "-O2", "-o", "k.so", "it's here", "a;b"})),
             QString(R"(cc -O2 -o k.so 'it'\''s here' 'a;b')"));
  }

  void target_options_check_their_values_and_keep_quoted_spaces() {
    TargetKind k;
    k.name = "subprocess_fixture";
    k.device = "cpu";
    k.options.push_back({.name = "flags",
                         .type = TargetOptionSpec::Type::kString,
                         .doc = "words without ';'",
                         .default_value = [] { return TargetOptionValue{std::string("-a -b")}; },
                         .min = 0,
                         .max = 0,
                         .choices = {},
                         .check =
                             [](const TargetOptionValue& v) {
                               return std::get<std::string>(v).find(';') == std::string::npos ? "" : "no ';' please";
                             }});
    TargetKindRegistry::global().add(k);

    Target t = Target::parse(R"(subprocess_fixture -flags="-O3 -g")");
    QCOMPARE(QString::fromStdString(t.get_string("flags")), QString("-O3 -g"));
    QCOMPARE(QString::fromStdString(t.str()), QString(R"(subprocess_fixture -flags="-O3 -g")"));
    QVERIFY(Target::parse(t.str()) == t);
    QVERIFY(Target::parse(Target::of_kind("subprocess_fixture").str()) == Target::of_kind("subprocess_fixture"));

    QCOMPARE(error_of([] { Target::parse(R"(subprocess_fixture -flags="-O3; rm")"); }),
             QString("target 'subprocess_fixture': option 'flags': no ';' please"));
    QCOMPARE(error_of([] { Target::parse(R"({"kind": "subprocess_fixture", "flags": "x; y"})"); }),
             QString("target 'subprocess_fixture': option 'flags': no ';' please"));
    QCOMPARE(error_of([] { Target::parse("subprocess_fixture -flags=\"-O3"); }),
             QString("target spec: a '\"' is not closed"));
  }

  // The child's result comes back whole, even when it is far larger than a pipe's buffer.
  void isolated_call_returns_the_childs_result() {
    const std::string big(5 << 20, 'x');
    IsolatedCall call = call_isolated([&] { return big + "end"; });
    QVERIFY2(call.ok(), call.how.c_str());
    QCOMPARE(call.result.size(), big.size() + 3);
    QVERIFY(call.result.ends_with("xend"));
    call = call_isolated([] { return std::string(); });
    QVERIFY(call.ok() && call.result.empty());
  }

  void isolated_call_reports_exceptions_and_crashes() {
    IsolatedCall call = call_isolated([]() -> std::string { throw Error("bad input"); });
    QVERIFY(call.outcome == IsolatedCall::Outcome::threw);
    QCOMPARE(QString::fromStdString(call.result), QString("bad input"));

    call = call_isolated([]() -> std::string {
      // An address the compiler cannot see coming, as a wild pointer in a library would be.
      volatile int* wild = reinterpret_cast<int*>(static_cast<uintptr_t>(std::atoi("16")));
      return std::to_string(*wild);
    });
    QVERIFY(call.outcome == IsolatedCall::Outcome::crashed);
    QCOMPARE(QString::fromStdString(call.how), QString("crashed with signal %1").arg(SIGSEGV));

    call = call_isolated(
        []() -> std::string {
          std::fputs("the library's own reason\n", stderr);
          std::fflush(stderr);
          std::abort();
        },
        {.capture_stderr = true});
    QVERIFY(call.outcome == IsolatedCall::Outcome::crashed);
    QCOMPARE(QString::fromStdString(call.how), QString("crashed with signal %1").arg(SIGABRT));
    QCOMPARE(QString::fromStdString(call.last_err_line()), QString("the library's own reason"));
  }

  void isolated_call_stops_at_its_time_limit() {
    const auto start = std::chrono::steady_clock::now();
    const IsolatedCall call = call_isolated(
        []() -> std::string {
          for (;;) ::pause();
        },
        {.time_limit = std::chrono::milliseconds(300)});
    QVERIFY(call.outcome == IsolatedCall::Outcome::timed_out);
    QCOMPARE(QString::fromStdString(call.how), QString("timed out after 0.3 s"));
    QVERIFY(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  }
};

QTEST_APPLESS_MAIN(TestSubprocess)
#include "test_subprocess.moc"
