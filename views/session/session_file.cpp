#include <unistd.h>

#include <QCryptographicHash>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

#include "core/support/error.h"
#include "core/support/file_io.h"
#include "core/target/target.h"
#include "views/session/session_document.h"

namespace tessel::views {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

std::string file_sha256(const std::string& path) {
  // A FIFO or device named as a model would block or never end: only regular files are hashed.
  const int fd = open_regular_file(path, "model");
  QFile f;
  if (!f.open(fd, QIODevice::ReadOnly, QFileDevice::AutoCloseHandle)) {
    ::close(fd);
    throw Error(path + ": cannot read the file");
  }
  QCryptographicHash hash(QCryptographicHash::Sha256);
  hash.addData(&f);
  return hash.result().toHex().toStdString();
}

void save_session(const SessionDocument& doc, const std::string& path) {
  std::string dir = QFileInfo(q(path)).absolutePath().toStdString();
  std::string text = session_to_json(doc, dir).dump(2) + "\n";
  QSaveFile f(q(path));
  if (!f.open(QIODevice::WriteOnly) || f.write(text.data(), static_cast<qint64>(text.size())) < 0 || !f.commit())
    throw Error(path + ": cannot write the session (" + f.errorString().toStdString() + ")");
}

SessionDocument load_session(const std::string& path) {
  // Only a regular file of sane size: a FIFO or /dev/zero named as a session must not hang the studio.
  const std::string text = read_text_file(path, "session", kMaxSessionFileBytes);
  SessionDocument doc = parse_session_text(text, QFileInfo(q(path)).absolutePath().toStdString(), path);
  // The target is checked as the file is read, so a refused one (a compiler option that would
  // reach a shell, a kind no plugin here provides) is reported against this file and field, and
  // the session does not open, rather than compiling nothing under a message naming no file.
  try {
    Target::parse(doc.target);
  } catch (const Error& e) {
    throw Error(path + ": field 'target': " + e.what());
  }
  return doc;
}

}  // namespace tessel::views
