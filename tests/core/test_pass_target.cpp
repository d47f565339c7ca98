// Target: kinds with typed options, built from JSON or the short form; clear errors listing what
// is valid. Passes read only these options.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "core/target/cpu_caches.h"
#include "core/target/target.h"

using namespace tessel;

namespace {
QString error_of(const std::string& spec) {
  try {
    Target::parse(spec);
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}
}  // namespace

class TestPassTarget : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void json_and_short_forms_agree() {
    Target a = Target::parse(R"({"kind": "ref", "vector_bits": 256, "num_threads": 2})");
    Target b = Target::parse("ref -vector_bits=256 -num_threads=2");
    QVERIFY(a == b);
    QCOMPARE(a.get_int("vector_bits"), int64_t{256});
    QCOMPARE(target_vector_floats(a), int64_t{8});
    QCOMPARE(QString::fromStdString(a.str()), QString("ref -num_threads=2 -vector_bits=256"));
    QVERIFY(Target::parse(a.to_json().dump()) == a);
  }

  // The host's caches as sysfs (or sysconf) reports them; kinds without the options get a
  // 32 KiB / 1 MiB core.
  void cache_sizes_come_from_the_host() {
    QVERIFY(host_cache_bytes(1) >= 4096 && host_cache_bytes(1) <= (int64_t{1} << 24));
    QVERIFY(host_cache_bytes(2) >= host_cache_bytes(1));
    QCOMPARE(target_cache_bytes(Target::parse("ref"), 2), int64_t{1024 * 1024});
    QCOMPARE(target_cache_bytes(Target::parse("ref"), 1), int64_t{32 * 1024});
  }

  void defaults_come_from_the_kind() {
    Target t = Target::parse("ref");
    QCOMPARE(t.get_int("num_threads"), int64_t{1});
    QCOMPARE(t.get_int("vector_bits"), host_vector_bits());
    QVERIFY(host_vector_bits() == 512 || host_vector_bits() == 256);
  }

  void unknown_option_lists_the_valid_ones() {
    QString e = error_of("ref -vectorbits=256");
    QVERIFY2(e.contains("no option 'vectorbits'") && e.contains("vector_bits (int)") && e.contains("num_threads"),
             qPrintable(e));
    e = error_of(R"({"kind": "ref", "mcpu": "znver4"})");
    QVERIFY2(e.contains("no option 'mcpu'"), qPrintable(e));
  }

  void bad_values_name_the_option_and_range() {
    QString e = error_of("ref -vector_bits=abc");
    QVERIFY2(e.contains("'vector_bits' expects an integer, got 'abc'"), qPrintable(e));
    e = error_of("ref -num_threads=0");
    QVERIFY2(e.contains("num_threads") && e.contains("outside [1, 1024]"), qPrintable(e));
    e = error_of(R"({"kind": "ref", "vector_bits": "wide"})");
    QVERIFY2(e.contains("vector_bits") && e.contains("expects int"), qPrintable(e));
    e = error_of(R"({"kind": "ref", "vector_bits": 1.5})");
    QVERIFY2(e.contains("vector_bits") && e.contains("expects int"), qPrintable(e));
    e = error_of("ref vector_bits=3");
    QVERIFY2(e.contains("expected -option=value"), qPrintable(e));
  }

  void unknown_kind_lists_registered_kinds() {
    QString e = error_of("cuda");
    QVERIFY2(e.contains("unknown target kind 'cuda'") && e.contains("ref"), qPrintable(e));
    QVERIFY(error_of("{not json").contains("not valid JSON"));
    QVERIFY(error_of(R"({"vector_bits": 3})").contains("\"kind\""));
    QVERIFY(error_of("   ").contains("empty target spec"));
    // Found by tests/fuzz (target): whitespace the first check did not know (\f, \v) left no word.
    QVERIFY(error_of("\f\v").contains("empty target spec"));
  }

  void kinds_register_once_with_typed_options() {
    TargetKind k;
    k.name = "test_accel";
    k.device = "accel";
    k.options.push_back({.name = "fast",
                         .type = TargetOptionSpec::Type::kBool,
                         .doc = "go fast",
                         .default_value = [] { return TargetOptionValue{false}; },
                         .choices = {}});
    k.options.push_back({.name = "mode",
                         .type = TargetOptionSpec::Type::kString,
                         .doc = "mode",
                         .default_value = [] { return TargetOptionValue{std::string("a")}; },
                         .choices = {"a", "b"}});
    TargetKindRegistry::global().add(k);
    QVERIFY_THROWS_EXCEPTION(Error, TargetKindRegistry::global().add(k));
    Target t = Target::parse("test_accel -fast -mode=b");
    QVERIFY(t.get_bool("fast"));
    QCOMPARE(QString::fromStdString(t.get_string("mode")), QString("b"));
    QCOMPARE(target_vector_floats(t), int64_t{1});  // no vector_bits option: scalar
    QVERIFY(error_of("test_accel -mode=c").contains("not one of a, b"));
    QVERIFY_THROWS_EXCEPTION(Error, t.get_int("fast"));
  }
};

QTEST_APPLESS_MAIN(TestPassTarget)
#include "test_pass_target.moc"
