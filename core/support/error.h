#pragma once
// One error type for everything the user can cause: a corrupt model, an unknown op, a bad attribute,
// an invalid schedule step. The message is a single readable line; callers add context (file, node)
// with `with_context`, innermost last, so the final text reads "model.onnx: node 'conv1' (Conv): ...".
#include <stdexcept>
#include <string>
#include <string_view>

namespace tessel {

class Error : public std::runtime_error {
 public:
  explicit Error(std::string message) : std::runtime_error(std::move(message)) {}
};

// Rethrows `e` with `context + ": "` in front of its message.
[[noreturn]] void rethrow_with_context(const Error& e, const std::string& context);

// `text` with every control byte (below 0x20, and 0x7f) written as \xNN, so a message that echoes
// part of a binary file cannot drive the terminal it is printed on. Other bytes are kept.
std::string printable(std::string_view text);

}  // namespace tessel
