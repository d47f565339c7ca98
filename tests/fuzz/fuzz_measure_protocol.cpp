// The measuring process's line protocol (core/measure/protocol.h): tessel-measure decodes the
// studio's request lines, the studio decodes the replies. Every line is tried as both; a decoded
// message must encode to a line that decodes to the same message.
#include "core/measure/protocol.h"
#include "tests/fuzz/fuzz_common.h"

using namespace tessel;

namespace {

std::string without_newline(std::string line) {
  fuzz::fuzz_check(!line.empty() && line.back() == '\n', "an encoded line does not end in a newline", line);
  line.pop_back();
  fuzz::fuzz_check(line.find('\n') == std::string::npos, "an encoded line holds a newline", line);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string line = fuzz::as_text(data, size);
  fuzz::expect_refusal_only([&] {
    measure::Request r = measure::decode_request_line(line);
    (void)measure::op_name(r);
    std::string encoded = without_newline(measure::encode_line(r));
    fuzz::must_accept("an encoded request is refused", encoded, [&] {
      fuzz::fuzz_check(measure::decode_request_line(encoded) == r, "request round trip differs", encoded);
    });
  });
  fuzz::expect_refusal_only([&] {
    measure::Reply r = measure::decode_reply_line(line);
    std::string encoded = without_newline(measure::encode_line(r));
    fuzz::must_accept("an encoded reply is refused", encoded, [&] {
      std::string again = without_newline(measure::encode_line(measure::decode_reply_line(encoded)));
      fuzz::fuzz_check(again == encoded, "reply round trip differs", encoded + "\n---\n" + again);
    });
  });
  return 0;
}
