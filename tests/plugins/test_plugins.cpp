// Plugin loading: the working fixture registers and runs; every broken one is reported in one
// line and skipped, leaving nothing half-registered.
#include <QtTest>
#include <filesystem>
#include <fstream>

#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/runtime/cpu_device_api.h"
#include "core/target/target.h"

using namespace tessel;

namespace {
const PluginStatus& status_of(const std::vector<PluginStatus>& all, const std::string& description_stem) {
  for (const auto& s : all)
    if (s.description_path.find(description_stem) != std::string::npos) return s;
  throw std::runtime_error("no status for " + description_stem);
}
}  // namespace

class TestPlugins : public QObject {
  Q_OBJECT
  std::vector<PluginStatus> all_;

 private Q_SLOTS:
  void initTestCase() { all_ = PluginManager::global().load_all({FIXTURE_PLUGIN_DIR}); }

  void good_plugin_registers_and_runs() {
    const auto& s = status_of(all_, "a_good");
    QVERIFY2(s.loaded, s.error.c_str());
    QCOMPARE(QString::fromStdString(s.version), QString("1.0.0"));
    Target t = Target::parse("fixture -level=5");
    QCOMPARE(t.get_int("level"), int64_t{5});
    loopir::Func f{"k", {loopir::make_buffer("out", DataType::kFloat32, {2, 3})}, nullptr};
    auto module = build_module({f}, t);
    QCOMPARE(module->target_kind(), std::string("fixture"));
    Tensor out(DataType::kFloat32, {2, 3});
    module->call_host("k", {&out});
    QCOMPARE(out.values<float>()[5], 42.0f);
    QCOMPARE(QString::fromStdString(CodeGenRegistry::global().provider("fixture")), QString("good"));
  }
  void module_checks_arguments() {
    loopir::Func f{"k", {loopir::make_buffer("out", DataType::kFloat32, {2, 3})}, nullptr};
    auto module = build_module({f}, Target::parse("fixture"));
    Tensor wrong(DataType::kFloat32, {3, 2});
    try {
      module->call_host("k", {&wrong});
      QFAIL("expected an error");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("expects f32[2,3], got f32[3,2]"), e.what());
    }
    QVERIFY_THROWS_EXCEPTION(Error, module->call_host("nope", {&wrong}));
  }
  void bad_json_is_reported() {
    const auto& s = status_of(all_, "b_bad_json");
    QVERIFY(!s.loaded);
    QVERIFY2(QString::fromStdString(s.error).startsWith("bad JSON"), s.error.c_str());
  }
  void missing_library_is_reported() {
    const auto& s = status_of(all_, "c_missing_library");
    QVERIFY(!s.loaded);
    QVERIFY2(QString::fromStdString(s.error).contains("not found"), s.error.c_str());
  }
  void missing_entry_point_is_reported() {
    const auto& s = status_of(all_, "d_no_entry");
    QVERIFY(!s.loaded);
    QVERIFY2(QString::fromStdString(s.error).contains("no entry point tessel_plugin_register"), s.error.c_str());
  }
  void failing_registration_leaves_nothing() {
    const auto& s = status_of(all_, "e_failing");
    QVERIFY(!s.loaded);
    QVERIFY2(QString::fromStdString(s.error).contains("accelerator is not present"), s.error.c_str());
    QVERIFY(TargetKindRegistry::global().find("half_registered") == nullptr);
  }
  void incompatible_version_is_reported() {
    const auto& s = status_of(all_, "f_incompatible");
    QVERIFY(!s.loaded);
    QVERIFY2(QString::fromStdString(s.error).contains("incompatible: needs core 99.0"), s.error.c_str());
  }
  void description_must_match_registrations() {
    const auto& s = status_of(all_, "g_lying");
    QVERIFY(!s.loaded);
    QVERIFY2(QString::fromStdString(s.error).contains("something_else"), s.error.c_str());
  }
  void throwing_entry_point_is_contained() {
    const auto& s = status_of(all_, "h_throwing");
    QVERIFY(!s.loaded);
    QVERIFY2(QString::fromStdString(s.error).contains("fixture exploded"), s.error.c_str());
  }
  void duplicate_name_is_refused() {
    const auto& s = status_of(all_, "i_duplicate");
    QVERIFY(!s.loaded);
    QVERIFY2(QString::fromStdString(s.error).contains("already loaded"), s.error.c_str());
  }
  void loading_twice_loads_nothing_new() {
    size_t before = PluginManager::global().plugins().size();
    PluginManager::global().load_all({FIXTURE_PLUGIN_DIR});
    QCOMPARE(PluginManager::global().plugins().size(), before);
  }
  // Entries that are not plugin descriptions at all: each costs only itself, with a message, and
  // the scan goes on to the next (a good description placed after them still loads).
  void broken_folder_entries_cost_only_themselves() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::filesystem::path root = dir.path().toStdString();
    std::filesystem::create_directory(root / "a_folder.json");
    std::filesystem::create_symlink(root / "b_loop.json", root / "b_loop.json");
    auto write = [&](const std::string& name, const std::string& text) { std::ofstream(root / name) << text; };
    const std::string v = "\"core_version\": \"" + core_version() + "\"";
    write("c_long.json",
          "{\"name\": \"long\", \"version\": \"1.0\", " + v + ", \"library\": \"" + std::string(5000, 'x') + ".so\"}");
    write("d_provides.json",
          "{\"name\": \"provides\", \"version\": \"1.0\", " + v + ", \"library\": \"x.so\", \"provides\": [1, 2]}");
    write("e_name.json", "{\"name\": 7, \"version\": \"1.0\", " + v + ", \"library\": \"x.so\"}");
    PluginManager manager;
    std::vector<PluginStatus> all;
    try {
      all = manager.load_all({root.string()});
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
    QCOMPARE(all.size(), size_t{5});
    for (const PluginStatus& s : all) {
      QVERIFY2(!s.loaded, s.description_path.c_str());
      QVERIFY2(!s.error.empty(), s.description_path.c_str());
    }
    QVERIFY2(QString::fromStdString(status_of(all, "a_folder").error).contains("not a regular file"),
             status_of(all, "a_folder").error.c_str());
    QVERIFY2(QString::fromStdString(status_of(all, "d_provides").error).contains("\"provides\" must be"),
             status_of(all, "d_provides").error.c_str());
    QVERIFY2(QString::fromStdString(status_of(all, "e_name").error).contains("\"name\""),
             status_of(all, "e_name").error.c_str());
  }
  void unknown_codegen_lists_the_available() {
    try {
      CodeGenRegistry::global().get("nonexistent");
      QFAIL("expected an error");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("available: fixture"), e.what());
    }
  }
  void cpu_device_api_answers_honestly() {
    DeviceAPI& cpu = DeviceAPIRegistry::global().get(DeviceType::kCPU);
    QCOMPARE(std::get<int64_t>(cpu.attribute(0, DeviceAttr::kExist)), int64_t{1});
    QCOMPARE(std::get<int64_t>(cpu.attribute(1, DeviceAttr::kExist)), int64_t{0});
    QVERIFY(std::holds_alternative<std::monostate>(cpu.attribute(0, DeviceAttr::kWarpSize)));
    QVERIFY(std::holds_alternative<std::monostate>(cpu.attribute(0, DeviceAttr::kMaxSharedMemoryPerBlock)));
    QVERIFY(std::get<int64_t>(cpu.attribute(0, DeviceAttr::kTotalMemoryBytes)) > 0);
    QVERIFY(cpu.create_stream(0) == nullptr);  // a single queue
    QVERIFY_THROWS_EXCEPTION(Error, cpu.set_device(3));
  }
  void ndarray_round_trip() {
    Tensor t = Tensor::from_values<float>({2, 2}, std::vector<float>{1, 2, 3, 4});
    NDArray a = NDArray::from_host(t, Device{DeviceType::kCPU, 0});
    NDArray b = NDArray::empty(DataType::kFloat32, {2, 2}, Device{DeviceType::kCPU, 0});
    b.copy_from(a);
    Tensor back = b.to_host();
    QCOMPARE(back.values<float>()[3], 4.0f);
    QVERIFY_THROWS_EXCEPTION(Error, b.copy_from(Tensor(DataType::kInt32, {2, 2})));
    QVERIFY_THROWS_EXCEPTION(Error, NDArray::empty(DataType::kFloat32, {int64_t{1} << 40}, Device{}));
  }
  void device_type_table() {
    QCOMPARE(device_type_from_name("cpu"), DeviceType::kCPU);
    DeviceType ext = register_device_type("my_npu");
    QVERIFY(static_cast<int>(ext) >= static_cast<int>(DeviceType::kFirstExtension));
    QCOMPARE(register_device_type("my_npu"), ext);
    QCOMPARE(QString::fromStdString(std::string(device_type_name(ext))), QString("my_npu"));
    QVERIFY_THROWS_EXCEPTION(Error, device_type_from_name("tpu"));
  }
};

QTEST_APPLESS_MAIN(TestPlugins)
#include "test_plugins.moc"
