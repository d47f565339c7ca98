#pragma once
// The message of the tessel::Error that `f` throws, or "" when it throws none: for tests that
// check what a refusal says (another exception type fails the test by escaping).
#include <functional>
#include <string>

#include "core/support/error.h"

namespace tessel::testing {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

}  // namespace tessel::testing
