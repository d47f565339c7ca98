#include "plugins/c_source/compiler_options.h"

#include <array>
#include <cctype>

#include "core/support/subprocess.h"

namespace tessel::c_source {

namespace {

bool is_flag_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '=' || c == '.' || c == ',' ||
         c == '+' || c == ':';
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// -f options that load code, choose programs, or read or write files named by their value.
constexpr std::array<std::string_view, 6> kRefusedF = {"plugin",  "pass-plugin", "use-ld",
                                                       "ld-path", "profile",     "auto-profile"};

// Why the flag word `w` (already made of flag characters) is refused, or "".
std::string flag_form_problem(std::string_view w) {
  const std::string quoted = "'" + std::string(w) + "'";
  if (w.size() < 2 || w[0] != '-') return "word " + quoted + " is not a flag (flags start with '-')";
  const std::string_view body = w.substr(2);
  const std::string_view name = body.substr(0, body.find('='));
  switch (w[1]) {
    case 'O':
      return body.find('=') == std::string_view::npos ? "" : "word " + quoted + " is not an -O level";
    case 'g':
      return body.empty() || (body.size() == 1 && body[0] >= '0' && body[0] <= '3')
                 ? ""
                 : "word " + quoted + " is not accepted (only -g and -g0 to -g3)";
    case 'm':
      return name.empty() ? "word " + quoted + " names no machine option" : "";
    case 'f': {
      if (name.empty()) return "word " + quoted + " names no -f option";
      const std::string_view option = starts_with(name, "no-") ? name.substr(3) : name;
      for (std::string_view refused : kRefusedF)
        if (starts_with(option, refused))
          return "flag " + quoted + " is not accepted: it loads or chooses a program, or reads or writes files";
      return "";
    }
    case 'W':
      if (w.find(',') != std::string_view::npos)
        return "flag " + quoted + " is not accepted: -W options with ',' pass options to other programs";
      return name.empty() ? "word " + quoted + " names no warning" : "";
    default:
      break;
  }
  if (w == "-w" || w == "-pedantic" || w == "-pedantic-errors" || w == "-pthread") return "";
  if (starts_with(w, "-std=") && w.size() > 5) return "";
  return "flag " + quoted +
         " is not accepted (allowed: -O*, -g, -m*, -f*, -W*, -w, -std=*, -pedantic, -pthread; the backend "
         "sets the output and inputs itself)";
}

}  // namespace

std::vector<std::string> split_cflags(std::string_view cflags) {
  std::vector<std::string> words;
  std::string cur;
  for (char c : cflags) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!cur.empty()) words.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) words.push_back(std::move(cur));
  return words;
}

std::string cflags_problem(std::string_view cflags) {
  for (const std::string& w : split_cflags(cflags)) {
    for (char c : w)
      if (!is_flag_char(c))
        return "word '" + w + "' contains '" + std::string(1, c) +
               "' (a flag is made of letters, digits and - _ = . , + : only; words are split at spaces, with no "
               "quoting)";
    if (std::string why = flag_form_problem(w); !why.empty()) return why;
  }
  return {};
}

std::string check_cc_option(const TargetOptionValue& value) {
  const std::string* s = std::get_if<std::string>(&value);
  return s ? program_problem(*s) : std::string("expects a program name");
}

std::string check_cflags_option(const TargetOptionValue& value) {
  const std::string* s = std::get_if<std::string>(&value);
  return s ? cflags_problem(*s) : std::string("expects compiler flags");
}

std::vector<std::string> compiler_command(const Target& target, const std::vector<std::string>& fixed) {
  const std::string& cc = target.get_string("cc");
  const std::string& cflags = target.get_string("cflags");
  if (std::string why = program_problem(cc); !why.empty()) throw Error("target 'c': option 'cc': " + why);
  if (std::string why = cflags_problem(cflags); !why.empty()) throw Error("target 'c': option 'cflags': " + why);
  std::vector<std::string> argv{cc};
  for (std::string& w : split_cflags(cflags)) argv.push_back(std::move(w));
  argv.insert(argv.end(), fixed.begin(), fixed.end());
  return argv;
}

}  // namespace tessel::c_source
