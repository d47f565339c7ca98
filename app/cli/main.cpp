// `tessel`: the command-line driver of the core. Commands are listed once in commands.def; each
// lives in its own cmd_<name>.cpp. Every failure prints one line "tessel: <message>" on stderr and
// exits with status 1, or 2 for a usage mistake.
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "app/cli/cli_args.h"

namespace tessel::cli {

#define TESSEL_COMMAND(NAME, SUMMARY) int run_##NAME##_command(std::span<const std::string> args);
#include "app/cli/commands.def"
#undef TESSEL_COMMAND

namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(std::span<const std::string> args);
};

constexpr Command kCommands[] = {
#define TESSEL_COMMAND(NAME, SUMMARY) {#NAME, SUMMARY, &run_##NAME##_command},
#include "app/cli/commands.def"
#undef TESSEL_COMMAND
};

void print_help(std::FILE* to) {
  std::fprintf(to,
               "tessel %s: a deep-learning compiler you can watch and steer\n\n"
               "usage: tessel COMMAND [ARGS...]      tessel COMMAND --help\n"
               "       tessel --help | --version\n\ncommands:\n",
               TESSEL_VERSION);
  for (const Command& c : kCommands) std::fprintf(to, "  %-10s %s\n", c.name, c.summary);
}

std::string command_names() {
  std::string out;
  for (const Command& c : kCommands) out += (out.empty() ? "" : ", ") + std::string(c.name);
  return out;
}

// Error messages are one line by contract; a stray newline from a library must not break that.
int fail(std::string message, int status) {
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  std::fflush(stdout);
  std::fprintf(stderr, "tessel: %s\n", tessel::printable(message).c_str());  // text echoed from a binary file
  return status;
}

int dispatch(const std::vector<std::string>& args) {
  if (args.empty()) throw UsageError("no command given (commands: " + command_names() + "; see tessel --help)");
  const std::string& first = args[0];
  if (first == "--help" || first == "-h" || first == "help") {
    print_help(stdout);
    return 0;
  }
  if (first == "--version") {
    std::printf("tessel %s\n", TESSEL_VERSION);
    return 0;
  }
  for (const Command& c : kCommands)
    if (first == c.name) return c.run(std::span<const std::string>(args).subspan(1));
  throw UsageError("unknown command '" + first + "' (commands: " + command_names() + ")");
}

}  // namespace
}  // namespace tessel::cli

int main(int argc, char** argv) {
  using namespace tessel::cli;
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return dispatch(args);
  } catch (const UsageError& e) {
    return fail(e.what(), 2);
  } catch (const tessel::Error& e) {
    return fail(e.what(), 1);
  } catch (const std::bad_alloc&) {
    return fail("out of memory", 1);
  } catch (const std::exception& e) {
    return fail(std::string("internal error: ") + e.what(), 1);
  } catch (...) {
    return fail("internal error: unknown exception", 1);
  }
}
