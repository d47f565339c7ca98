#pragma once
// A model file by its extension: `.onnx` through the ONNX frontend, anything else as Tessel's graph
// text format (core/graph/text_format.h: the tests' fixtures and the lessons' small models).
// Errors name the file.
#include <string>

#include "core/frontend/onnx_import.h"
#include "core/graph/graph.h"

namespace tessel {

Graph load_model_file(const std::string& path, const ImportOptions& options = {});

}  // namespace tessel
