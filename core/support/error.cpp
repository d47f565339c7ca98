#include "core/support/error.h"

namespace tessel {

void rethrow_with_context(const Error& e, const std::string& context) {
  throw Error(context + ": " + e.what());
}

}  // namespace tessel
