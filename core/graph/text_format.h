#pragma once
// The graph's text form: what golden tests are written in and what `tessel passes` prints.
//
//   graph block(%x: f32[1,3,8,8]) {
//     %w = constant f32[4,3,3,3] random(7)
//     %b = constant f32[4] [0.1, 0.2, 0.3, 0.4]
//     %conv = Conv(%x, %w, %b) {pads=[1,1,1,1]} : f32[1,4,8,8]
//     %y = Relu(%conv) : f32[1,4,8,8] @relu_1
//     return %y
//   }
//
// A node line names its outputs, the op, its inputs (`_` for an omitted optional input), the
// non-default attributes and the output types; `@name` gives the node's name when it differs from
// its first output's. A layout, once assigned, follows the type: `f32[1,1,8,8,16]{NCHW16c}`.
// Constants print their values up to 16 elements and `elided(<hash>)` beyond; the parser also
// accepts `random(seed)` (uniform in [-1, 1), deterministic) and `zeros`. Names with characters
// outside [A-Za-z0-9_./-] are quoted: %"my name".
#include <string>
#include <string_view>

#include "core/graph/graph.h"

namespace tessel {

std::string print_graph(const Graph& g);
// Parses and type-checks (infer_types); the types written in the text must match the inferred
// ones. Errors name the line: "line 4: unknown op 'Cnv' (did you mean: Conv?)".
Graph parse_graph(std::string_view text);

}  // namespace tessel
