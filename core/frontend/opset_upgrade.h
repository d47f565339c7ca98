#pragma once
// Rewrites nodes written for older default-domain opsets into the forms the op table implements
// (the newest form up to opset 17). See the note at the top of opset_upgrade.cpp for every rule.
#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <string_view>

namespace tessel {

constexpr int64_t kMinOnnxOpset = 1;
constexpr int64_t kMaxOnnxOpset = 17;

// `opset` is the model's default-domain opset (kMinOnnxOpset..kMaxOnnxOpset). Nodes must be named
// already. A node whose old form Tessel cannot express is left as it was; the result maps its name
// to the reason ("opset 6 form: spatial=0 is not supported"), and the importer makes it opaque.
std::map<std::string, std::string> upgrade_opset(onnx::ModelProto& model, int64_t opset);

// The op type a node of `op_type` has after upgrade_opset (Upsample → Resize), for the loader's
// look at which nodes will have no Tessel op before anything is rewritten.
std::string_view upgraded_op_type(std::string_view op_type);

}  // namespace tessel
