// Session files and the studio's recovery file (views/session/session_document.h): JSON that
// session_from_json checks field by field, the schedules included. Its source file needs Qt Core
// only (paths, hashing), so it is compiled into this target rather than linking the studio's
// views. Input that is not JSON stops at the JSON parser, as it does in load_session. The recovery
// file wraps a session without a folder: {"session": {...}, "session_path": "..."}. A session that
// loads must save to JSON that loads to the same session.
#include <nlohmann/json.hpp>

#include "tests/fuzz/fuzz_common.h"
#include "views/session/session_document.h"

using namespace tessel;

namespace {

void load(const nlohmann::json& j, const std::string& folder) {
  fuzz::expect_refusal_only([&] {
    views::SessionDocument doc = views::session_from_json(j, folder, "fuzz.tessel");
    nlohmann::json saved = views::session_to_json(doc, folder);
    fuzz::must_accept("a saved session is refused", saved.dump(), [&] {
      fuzz::fuzz_check(views::session_from_json(saved, folder, "saved.tessel") == doc, "save/load round trip differs",
                       j.dump() + "\n---\n" + saved.dump());
    });
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  load(j, "/home/user/sessions");
  if (j.is_object() && j.contains("session")) load(j["session"], "");
  return 0;
}
