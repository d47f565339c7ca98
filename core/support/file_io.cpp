#include "core/support/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "core/support/error.h"

namespace tessel {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string article(std::string_view what) {
  const bool vowel = !what.empty() && std::strchr("aeiouAEIOU", what.front()) != nullptr;
  return std::string(vowel ? "an " : "a ") + std::string(what);
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

}  // namespace

int open_regular_file(const std::string& path, std::string_view what) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever before fstat could refuse it.
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw Error(path + ": cannot read: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw Error(path + ": is " + kind_of(st.st_mode) + ", not " + article(what) + " file");
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0) ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  return fd.release();
}

std::string read_text_file(const std::string& path, std::string_view what, size_t max_bytes) {
  Fd fd(open_regular_file(path, what));
  const auto too_large = [&] {
    return Error(path + ": larger than the " + std::to_string(max_bytes) + " bytes allowed for " + article(what) +
                 " file");
  };
  struct stat st {};
  if (::fstat(fd.get(), &st) == 0 && static_cast<uintmax_t>(st.st_size) > max_bytes) throw too_large();
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(path + ": read error: " + std::strerror(errno));
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > max_bytes) throw too_large();  // it grew while we read
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

}  // namespace tessel
