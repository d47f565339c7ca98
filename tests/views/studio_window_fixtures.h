#pragma once
// Shared by the tests that drive the studio's real main window (they link the studio app; the
// pane-only tests use studio_fixtures.h alone): one isolated environment, one way to make the
// window, one way to open a model and wait until the graph is drawn.
//
//   void initTestCase() { test::isolate_studio("studio_story_test", home_.path()); }
//   auto w = test::show_window(test::window_options(home_.path()));
//   QVERIFY(test::open_and_wait(*w, test::sample_model()));
#include <QString>
#include <memory>

#include "app/studio/main_window.h"

namespace tessel::views::test {

// Settings and autosave in Qt's test folders (cleared), named after the test; machine ceilings
// cached in `home`/cache (none until a test calibrates); kernels measured by this build's
// tessel-measure where the test is built with one.
void isolate_studio(const QString& application, const QString& home);
// The bundled samples and lessons, autosave to `home`/recovery.tessel, no recovery offer.
studio::MainWindowOptions window_options(const QString& home);
// The window at 1280x820, shown.
std::unique_ptr<studio::MainWindow> show_window(const studio::MainWindowOptions& options);
// Opens `model` and waits for its compile and its graph's layout; false when either times out.
bool open_and_wait(studio::MainWindow& w, const QString& model, int timeout_ms = 60000);

}  // namespace tessel::views::test
