#pragma once
// The one op table: every op Tessel knows, listed in core/graph/ops/*.def.
#include <span>
#include <string_view>

#include "core/graph/op.h"

namespace tessel {

std::span<const OpDef> all_ops();
// nullptr when unknown.
const OpDef* find_op(std::string_view name);
// Throws Error listing close names when unknown.
const OpDef& get_op(std::string_view name);

}  // namespace tessel
