#pragma once
// Reading files the user names (a model, a schedule, a graph text, an input tensor). Only regular
// files are read: a folder, FIFO or device is refused up front, naming the file and what it is,
// because reading one would hang (a FIFO with no writer), never end (/dev/zero) or read nothing (a
// folder). Text reads are bounded, so a huge file is an error rather than an exhausted memory.
//
//   std::string text = read_text_file(path, "schedule", kMaxScheduleBytes);
//   int fd = open_regular_file(path, "ONNX model");  // the caller closes it
#include <cstddef>
#include <string>
#include <string_view>

namespace tessel {

inline constexpr size_t kMaxTextFileBytes = size_t{256} << 20;

// Opens `path` read-only; throws an Error "PATH: is a FIFO, not a WHAT file" (folder, device,
// socket) unless it is a regular file. Never blocks on a FIFO. Returns the descriptor.
int open_regular_file(const std::string& path, std::string_view what);

// Opens `path` for appending (O_APPEND, read and write, created with mode 0644 when missing); the
// same refusal as open_regular_file for anything but a regular file. Returns the descriptor.
int open_regular_file_for_append(const std::string& path, std::string_view what);

// Writes all of `bytes` (retrying short writes and EINTR); false on an error (errno says which).
bool write_all(int fd, std::string_view bytes);

// Closes the descriptor it holds when it goes out of scope.
class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  int release();

 private:
  int fd_;
};

// The whole of the regular file `path`; an Error when it is not one, cannot be read, or is larger
// than `max_bytes`. `what` names the kind of file in messages ("schedule", "graph text").
std::string read_text_file(const std::string& path, std::string_view what, size_t max_bytes = kMaxTextFileBytes);

}  // namespace tessel
