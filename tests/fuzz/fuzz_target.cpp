// Target specs (core/target/target.h): the short form ("ref -vector_bits=256") and JSON, as
// --target, sessions and measure requests give them. An accepted target must survive its short
// form and its JSON form unchanged. Besides the built-in `ref`, a kind like the ones plugins add
// (the c backend's free-text `cflags`, a checked string, a choice, a ranged integer) is registered.
#include <nlohmann/json.hpp>

#include "core/target/target.h"
#include "tests/fuzz/fuzz_common.h"

using namespace tessel;

namespace {

void register_plugin_like_kind() {
  TargetKind k;
  k.name = "fuzzkind";
  k.device = "cpu";
  k.doc = "what a plugin's kind looks like";
  k.options = {
      {.name = "flags",
       .type = TargetOptionSpec::Type::kString,
       .default_value = [] { return TargetOptionValue{"-O2 -g"}; }},
      {.name = "cc",
       .type = TargetOptionSpec::Type::kString,
       .default_value = [] { return TargetOptionValue{"cc"}; },
       .check = [](const TargetOptionValue& v) -> std::string {
         return std::get<std::string>(v).find('/') == std::string::npos ? "" : "no '/' allowed";
       }},
      {.name = "mode",
       .type = TargetOptionSpec::Type::kString,
       .default_value = [] { return TargetOptionValue{"fast"}; },
       .choices = {"fast", "exact"}},
      {.name = "lanes", .default_value = [] { return TargetOptionValue{int64_t{8}}; }, .min = 1, .max = 64},
      {.name = "fma", .type = TargetOptionSpec::Type::kBool, .default_value = [] { return TargetOptionValue{true}; }},
  };
  TargetKindRegistry::global().add(std::move(k));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  register_plugin_like_kind();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text = fuzz::as_text(data, size);
  fuzz::expect_refusal_only([&] {
    Target t = Target::parse(text);
    std::string spec = t.str();
    fuzz::must_accept("the printed target is refused", spec, [&] {
      fuzz::fuzz_check(Target::parse(spec) == t, "parse(str()) differs", spec);
      fuzz::fuzz_check(Target::from_json(t.to_json()) == t, "from_json(to_json()) differs", spec);
    });
  });
  return 0;
}
