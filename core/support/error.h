#pragma once
// One error type for everything the user can cause: a corrupt model, an unknown op, a bad attribute,
// an invalid schedule step. The message is a single readable line; callers add context (file, node)
// with `with_context`, innermost last, so the final text reads "model.onnx: node 'conv1' (Conv): ...".
#include <stdexcept>
#include <string>

namespace tessel {

class Error : public std::runtime_error {
 public:
  explicit Error(std::string message) : std::runtime_error(std::move(message)) {}
};

// Rethrows `e` with `context + ": "` in front of its message.
[[noreturn]] void rethrow_with_context(const Error& e, const std::string& context);

}  // namespace tessel
