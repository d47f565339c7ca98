// Session files and the studio's recovery file (views/session/session_document.h): the text of a
// .tessel file, or of the recovery file a killed studio leaves, read by the Qt-free half of the
// session code (compiled into this target: the studio's views are not built here). Each input is
// tried as both. A session or recovery record that is accepted must save to JSON that reads back
// to the same value.
#include "tests/fuzz/fuzz_common.h"
#include "views/session/session_document.h"

using namespace tessel;

namespace {

const std::string kSessionFolder = "/home/user/sessions";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = fuzz::as_text(data, size);
  fuzz::expect_refusal_only([&] {
    views::SessionDocument doc = views::parse_session_text(text, kSessionFolder, "fuzz.tessel");
    const std::string saved = views::session_to_json(doc, kSessionFolder).dump();
    fuzz::must_accept("a saved session is refused", saved, [&] {
      fuzz::fuzz_check(views::parse_session_text(saved, kSessionFolder, "saved.tessel") == doc,
                       "session save/load round trip differs", saved);
    });
  });
  fuzz::expect_refusal_only([&] {
    views::RecoveryRecord record = views::parse_recovery_text(text, "recovery.json");
    const std::string saved = views::recovery_to_json(record).dump();
    fuzz::must_accept("a saved recovery record is refused", saved, [&] {
      fuzz::fuzz_check(views::parse_recovery_text(saved, "saved.json") == record,
                       "recovery save/load round trip differs", saved);
    });
  });
  return 0;
}
