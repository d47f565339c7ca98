#pragma once
// How much memory one compiled model may plan to use, and byte sizes as people write them.
//
// A model's memory plan knows its total before anything is allocated (arena + constants + inputs
// + outputs); compiling refuses a plan above the limit instead of allocating until the machine
// runs out. The limit defaults to a share of physical memory and is raised with
// `--memory-limit 32G` (tessel run, profile, build).
#include <cstdint>
#include <string>
#include <string_view>

namespace tessel {

// Physical memory of this machine (sysconf); 0 when unknown.
int64_t physical_memory_bytes();
// What this process may use: physical memory, or less where a container's memory limit (cgroup v2
// memory.max, v1 memory.limit_in_bytes) or the address-space limit (ulimit -v) says so. `basis`
// gets what set it ("physical memory", "the container's memory limit", "the address-space limit
// (ulimit -v)"). 0 when nothing is known.
int64_t available_memory_bytes(std::string* basis = nullptr);
// The default limit: 3/4 of the available memory (the rest is the system's and other programs'),
// or 16 GiB when it is unknown; `why` gets "3/4 of physical memory" or the like, for messages.
// A plan that passed a limit of physical memory inside a smaller container used to fail only when
// allocating, as "out of memory" with no model named (issue 40).
int64_t default_memory_limit(std::string* why = nullptr);
// "8G", "512M", "1.5GiB", "64k", "1000000" (bytes; K/M/G/T are powers of 1024, an optional "iB" or
// "B" follows). Throws Error quoting the text when it is not a positive size.
int64_t parse_byte_size(std::string_view text);
// "28.0 GiB", "512.0 MiB", "100 bytes".
std::string byte_size_text(int64_t bytes);

}  // namespace tessel
