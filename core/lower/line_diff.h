#pragma once
// A line diff of two program texts (longest common subsequence), for "what did this step change".
// Output: changed lines prefixed "- " / "+ ", with `context` unchanged lines ("  ") around each
// change and "@@" between distant hunks. Empty when the texts are equal.
#include <string>

namespace tessel::lower {

std::string line_diff(const std::string& before, const std::string& after, int context = 2);

}  // namespace tessel::lower
