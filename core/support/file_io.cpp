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

// O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever before fstat could refuse it.
int open_checked(const std::string& path, std::string_view what, int flags) {
  UniqueFd fd(::open(path.c_str(), flags | O_CLOEXEC | O_NONBLOCK, 0644));
  if (fd.get() < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw Error(path + ": cannot read: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw Error(path + ": is " + kind_of(st.st_mode) + ", not " + article(what) + " file");
  const int now = ::fcntl(fd.get(), F_GETFL);
  if (now >= 0) ::fcntl(fd.get(), F_SETFL, now & ~O_NONBLOCK);
  return fd.release();
}

}  // namespace

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

int UniqueFd::release() { return std::exchange(fd_, -1); }

int open_regular_file(const std::string& path, std::string_view what) { return open_checked(path, what, O_RDONLY); }

int open_regular_file_for_append(const std::string& path, std::string_view what) {
  return open_checked(path, what, O_RDWR | O_APPEND | O_CREAT);
}

bool write_all(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string read_text_file(const std::string& path, std::string_view what, size_t max_bytes) {
  UniqueFd fd(open_regular_file(path, what));
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
