#pragma once
// Shared by the studio tests: where the sample models are, compiling one synchronously, and a few
// checks on rendered images.
#include <QImage>
#include <QString>
#include <QStringList>
#include <nlohmann/json.hpp>

#include "views/common/snapshot.h"

namespace tessel::views::test {

// resources/models/<name>.onnx, written by scripts/gen_models.py.
QString sample_model(const QString& name = "resnet_block");
// import + graph pipeline on this thread (what the SessionController runs on its worker).
StudioSnapshotPtr compile_now(const QString& path, const std::string& target = "ref",
                              const nlohmann::json& pass_options = nlohmann::json::object());
// Pass options that keep every conv direct (winograd_convs left out), for the tests that study
// resnet_block's conv kernel by its name or hand-schedule its conv stages.
nlohmann::json direct_convs();
// The pass named `name` in the snapshot's records, -1 when absent.
int pass_index(const StudioSnapshot& snap, const std::string& name);
// Distinct colours in the image (counted up to `limit`); a blank render has one or two.
int distinct_colors(const QImage& image, int limit = 64);
// Environment for a child tessel-studio: offscreen, with its own settings and data folders.
QStringList child_environment(const QString& home);

}  // namespace tessel::views::test
