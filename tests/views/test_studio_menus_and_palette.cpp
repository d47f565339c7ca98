// Issue 18, seen under Xvfb with xdotool: "the graph view goes blank while any menu or popup is
// open", and "typing quickly in the palette once left the Passes menu open over the Welcome page".
// Through the real main window, offscreen:
//  - the graph stays drawn on screen while a menu, a popup, a tooltip or the command palette is
//    open, and while the window is inactive; the minimap shows the graph, not an empty box;
//  - keys typed for the palette (including the ones the main window still received before the
//    palette had the keyboard, and Alt with menu mnemonics) never open a menu or fire a shortcut of
//    the window; they are the palette's text; closing the palette gives the focus back.
#include <QComboBox>
#include <QGraphicsView>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QScreen>
#include <QStackedWidget>
#include <QToolTip>
#include <QtTest>

#include "app/studio/command_palette.h"
#include "app/studio/main_window.h"
#include "studio_fixtures.h"
#include "studio_window_fixtures.h"

using namespace tessel;
using namespace tessel::views;
using tessel::studio::MainWindow;

namespace {

// What the screen shows of `widget`: its window's backing store as last flushed to the platform,
// read back (a widget left unpainted, or painted blank, shows here), not a fresh render.
QImage on_screen(QWidget* widget) {
  for (int i = 0; i < 3; ++i) QCoreApplication::processEvents();  // the pending paints
  const QPoint at = widget->mapTo(widget->window(), QPoint(0, 0));
  return widget->screen()
      ->grabWindow(widget->window()->winId(), at.x(), at.y(), widget->width(), widget->height())
      .toImage()
      .convertToFormat(QImage::Format_RGB32);
}

// The share of the pixels that differ from the image's most common colour (its background).
double drawn_share(const QImage& image) {
  QHash<QRgb, int> counts;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) ++counts[image.pixel(x, y)];
  int background = 0;
  for (int n : counts) background = std::max(background, n);
  const int total = image.width() * image.height();
  return total ? 1.0 - static_cast<double>(background) / total : 0.0;
}

// The share of pixels two images of one size have in common.
double same_share(const QImage& a, const QImage& b) {
  if (a.size() != b.size() || a.isNull()) return 0;
  int same = 0;
  for (int y = 0; y < a.height(); ++y)
    for (int x = 0; x < a.width(); ++x) same += a.pixel(x, y) == b.pixel(x, y);
  return static_cast<double>(same) / (a.width() * a.height());
}

QList<QMenu*> visible_menus() {
  QList<QMenu*> out;
  for (QWidget* w : QApplication::topLevelWidgets())
    if (auto* menu = qobject_cast<QMenu*>(w); menu && menu->isVisible()) out << menu;
  return out;
}

// Keys as the platform delivers them to `window`: through the shortcut map first, then to the
// window's focus widget.
void type_into(QWindow* window, const QString& text) {
  for (QChar c : text) QTest::keyClick(window, c.toLatin1());
}

}  // namespace

class StudioMenusAndPaletteTest : public QObject {
  Q_OBJECT

  QTemporaryDir home_;

  std::unique_ptr<MainWindow> active_window() {
    auto w = test::show_window(test::window_options(home_.path()));
    w->activateWindow();
    if (!QTest::qWaitForWindowActive(w.get())) return nullptr;
    return w;
  }

 private Q_SLOTS:
  void initTestCase() { test::isolate_studio("studio_menus_and_palette_test", home_.path()); }

  void the_graph_stays_drawn_while_menus_popups_and_the_palette_are_open() {
    auto w = active_window();
    QVERIFY(w);
    QVERIFY(test::open_and_wait(*w, test::sample_model()));
    QGraphicsView* view = w->panes().graph->view();
    view->setFocus(Qt::MouseFocusReason);  // as after a click on the graph: the pane is framed
    QWidget* port = view->viewport();
    const QImage drawn = on_screen(port);
    QVERIFY2(drawn_share(drawn) > 0.05, "the graph is not drawn to begin with");
    drawn.save(home_.filePath("graph_before.png"));

    // Whatever is open over it, the window keeps what it drew (popups are windows of their own).
    auto check = [&](const QString& what) {
      const QImage now = on_screen(port);
      const double same = same_share(drawn, now);
      if (same < 0.97) now.save(home_.filePath("graph_" + what + ".png"));
      QVERIFY2(same >= 0.97, qPrintable(QString("%1: %2% of the graph as before (saved in %3)")
                                            .arg(what)
                                            .arg(same * 100, 0, 'f', 1)
                                            .arg(home_.path())));
      QVERIFY2(drawn_share(now) > 0.05, qPrintable(what + ": the graph is blank"));
    };

    // Every menu of the menu bar, opened over the middle of the graph.
    const QPoint middle = port->mapToGlobal(port->rect().center());
    for (QAction* top : w->menuBar()->actions()) {
      QMenu* menu = top->menu();
      if (!menu || !top->isEnabled()) continue;
      menu->popup(middle);
      QTRY_COMPARE(QApplication::activePopupWidget(), static_cast<QWidget*>(menu));
      check("menu_" + top->text().remove('&'));
      menu->hide();
      QTRY_VERIFY(!QApplication::activePopupWidget());
    }
    // A menu opened from the keyboard (Alt+G: the Graph menu), as the user did.
    QTest::keyClick(w->windowHandle(), Qt::Key_G, Qt::AltModifier);
    QTRY_VERIFY(qobject_cast<QMenu*>(QApplication::activePopupWidget()));
    check("alt_g");
    QApplication::activePopupWidget()->close();
    QTRY_VERIFY(!QApplication::activePopupWidget());
    // The target picker's list, a tooltip over the graph.
    auto* targets = w->findChild<QComboBox*>("target_picker");
    QVERIFY(targets);
    targets->showPopup();
    QTRY_VERIFY(QApplication::activePopupWidget());
    check("target_popup");
    targets->hidePopup();
    QTRY_VERIFY(!QApplication::activePopupWidget());
    QToolTip::showText(middle, "a tooltip over the graph", port);
    QTRY_VERIFY(QToolTip::isVisible());
    check("tooltip");
    QToolTip::hideText();

    // The command palette is a window: while it is active the main window is not.
    studio::CommandPalette* palette = w->command_palette();
    palette->open_palette();
    QTRY_COMPARE(QApplication::activeWindow(), static_cast<QWidget*>(palette));
    check("palette");
    palette->hide();
    QTRY_VERIFY(w->isActiveWindow());
    check("palette_closed");

    // Another window of the desktop active: ours is inactive, its graph stays.
    QWidget other;
    other.resize(300, 200);
    other.show();
    other.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&other));
    QCOMPARE(QApplication::activeWindow(), &other);
    check("inactive");
    // A repaint while inactive (a pass step draws anew) draws the graph, not a blank.
    w->panes().graph->refresh_colors();
    QVERIFY(drawn_share(on_screen(port)) > 0.05);
  }

  // The minimap was fitted while hidden (a viewport not laid out yet) and showed the graph as a
  // dot in an empty box. The samples are too small for one: a chain of 40 ops is not.
  void the_minimap_shows_the_graph() {
    auto w = active_window();
    QVERIFY(w);
    const QString tall = home_.filePath("tall.tgraph");
    {
      QFile f(tall);
      QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Text));
      QTextStream out(&f);
      out << "graph tall(%x: f32[1,64]) {\n  %v0 = Tanh(%x)\n";
      for (int i = 1; i < 40; ++i)
        out << "  %v" << i << " = " << (i % 2 ? "Sigmoid" : "Tanh") << "(%v" << i - 1 << ")\n";
      out << "  return %v39\n}\n";
    }
    for (const QString& model : {tall, test::sample_model("mobilenet_block")}) {
      QVERIFY(test::open_and_wait(*w, model));
      QWidget* minimap = w->panes().graph->minimap();
      QCoreApplication::processEvents();
      if (model != tall && !minimap->isVisible()) continue;
      QVERIFY2(minimap->isVisible(), qPrintable(w->panes().graph->status_text()));
      auto* mini_view = qobject_cast<QGraphicsView*>(minimap);
      QVERIFY(mini_view);
      // The whole graph fills the minimap along one side, not a dot in the middle.
      const QRectF graph = mini_view->mapFromScene(w->panes().graph->scene()->itemsBoundingRect()).boundingRect();
      const QRect port = mini_view->viewport()->rect();
      QVERIFY2(graph.width() >= 0.8 * port.width() || graph.height() >= 0.8 * port.height(),
               qPrintable(QString("%1: the graph is %2x%3 in a %4x%5 minimap")
                              .arg(QFileInfo(model).fileName())
                              .arg(graph.width())
                              .arg(graph.height())
                              .arg(port.width())
                              .arg(port.height())));
      QVERIFY2(drawn_share(on_screen(mini_view->viewport())) > 0.02, qPrintable(model));
    }
  }

  void keys_typed_for_the_palette_never_reach_the_windows_menus_or_shortcuts() {
    auto w = active_window();
    QVERIFY(w);  // no model: the Welcome page
    QVERIFY(w->welcome()->isVisible());
    auto* samples = w->welcome()->findChild<QListWidget*>();
    QVERIFY(samples);
    samples->setFocus(Qt::OtherFocusReason);
    QTRY_COMPARE(QApplication::focusWidget(), static_cast<QWidget*>(samples));
    const int sample_row = samples->currentRow();
    QWidget* framed = w->focused_pane();
    studio::CommandPalette* palette = w->command_palette();

    // Ctrl+Shift+P, then typing at once. Under X the palette gets the keyboard some time after it
    // shows, so the first keys still arrive at the main window: a bare Alt there (menu bar in
    // keyboard mode), then "passes" opened the Passes menu. Sent here to the main window while the
    // palette is open, as X delivered them.
    QTest::keyClick(w->windowHandle(), Qt::Key_P, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(palette->isVisible());
    auto no_menu_open = [&](const QString& after) {
      QVERIFY2(!QApplication::activePopupWidget(), qPrintable(after + ": a popup is open"));
      QVERIFY2(visible_menus().isEmpty(), qPrintable(after + ": a menu is open"));
      QVERIFY2(w->welcome()->isVisible(), qPrintable(after + ": the Welcome page is gone"));
      QVERIFY2(samples->currentRow() == sample_row, qPrintable(after + ": the Welcome page's list moved"));
    };
    QTest::keyClick(w->windowHandle(), Qt::Key_Alt);
    no_menu_open("Alt to the window");
    type_into(w->windowHandle(), "pas");
    no_menu_open("'pas' to the window");
    QVERIFY(palette->isVisible());

    // The palette has the keyboard now: the rest stays in it.
    QVERIFY(QTest::qWaitForWindowActive(palette));
    type_into(palette->windowHandle(), "ses");
    no_menu_open("'ses' in the palette");
    // What the window received was typed into the palette, in order.
    QCOMPARE(palette->edit()->text(), QString("passes"));
    QVERIFY(!palette->matching(palette->edit()->text()).isEmpty());

    // Alt and the window's mnemonics and shortcuts, sent to either window, reach none of them
    // (with a letter, the line edit types it).
    for (QWindow* to : {w->windowHandle(), palette->windowHandle()}) {
      const QString where = to == palette->windowHandle() ? "the palette" : "the window";
      QTest::keyClick(to, Qt::Key_Alt);
      QTest::keyClick(to, Qt::Key_P, Qt::AltModifier);     // the Passes menu's mnemonic
      QTest::keyClick(to, Qt::Key_V, Qt::AltModifier);     // the View menu's
      QTest::keyClick(to, Qt::Key_2, Qt::AltModifier);     // View ▸ Passes
      QTest::keyClick(to, Qt::Key_Down, Qt::AltModifier);  // Passes ▸ Next Pass
      QTest::keyClick(to, Qt::Key_F5);                     // Compile ▸ Recompile
      no_menu_open("Alt, Alt+P, Alt+V, Alt+2, Alt+Down, F5 to " + where);
      QCOMPARE(w->focused_pane(), framed);
      QVERIFY(palette->isVisible());
      QVERIFY(palette->edit()->text().startsWith("passes"));
    }

    // Escape closes it; the keyboard is back on the Welcome page's list.
    QTest::keyClick(palette->windowHandle(), Qt::Key_Escape);
    QTRY_VERIFY(!palette->isVisible());
    QTRY_VERIFY(w->isActiveWindow());
    QTRY_COMPARE(QApplication::focusWidget(), static_cast<QWidget*>(samples));
    no_menu_open("Escape");
    // Keys after it closed are the window's again: Alt+P opens the Passes menu.
    QTest::keyClick(w->windowHandle(), Qt::Key_P, Qt::AltModifier);
    QTRY_VERIFY(qobject_cast<QMenu*>(QApplication::activePopupWidget()));
    QApplication::activePopupWidget()->close();
    QTRY_VERIFY(!QApplication::activePopupWidget());

    // A command run from the palette does what it does, and only that: View ▸ Passes frames the
    // Passes pane (the palette's focus restoring does not undo it).
    QTest::keyClick(w->windowHandle(), Qt::Key_P, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(palette->isVisible());
    type_into(w->windowHandle(), "view passes");  // before the palette has the keyboard
    QTest::keyClick(w->windowHandle(), Qt::Key_Return);
    QTRY_VERIFY(!palette->isVisible());
    QTRY_COMPARE(w->focused_pane(), w->pane_by_name("passes"));
    QVERIFY(w->welcome()->isVisible());
    no_menu_open("View ▸ Passes from the palette");

    // A click elsewhere closes the palette and goes through.
    palette->open_palette();
    QVERIFY(palette->isVisible());
    QTest::mouseClick(samples->viewport(), Qt::LeftButton, {}, QPoint(5, 5));
    QTRY_VERIFY(!palette->isVisible());
  }
};

QTEST_MAIN(StudioMenusAndPaletteTest)
#include "test_studio_menus_and_palette.moc"
