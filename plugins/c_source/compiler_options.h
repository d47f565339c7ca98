#pragma once
// The c target's `cc` and `cflags` options: what they may hold, and the argument vector they become.
// A target string can come from a session file, the command line or a request to the measuring
// process, so these options are data that must never be able to run or load anything but a C
// compiler compiling the generated source.
//
//   cc      one program: a name found on PATH, or an absolute path to an executable file; letters,
//           digits, `. _ + -` (and `/` in a path) only — see tessel::program_problem.
//   cflags  words separated by whitespace. There is no quoting and no escaping: a word is exactly
//           the characters between spaces. Every word must
//             - consist of letters, digits and `- _ = . , + :` (so no `/`: a flag cannot name a
//               file outside the compiler's working folder, which is a fresh temporary folder; no
//               `@`: no response files; nothing a shell would interpret), and
//             - have one of the forms
//                 -O -O<level>           optimization (-O2, -O3, -Os, -Ofast)
//                 -g -g0 -g1 -g2 -g3     debug information
//                 -m<option>[=<value>]   machine options (-march=native, -mavx2, -mno-fma)
//                 -f<option>[=<value>]   code generation (-ffast-math, -fno-tree-vectorize), except
//                                        -fplugin*, -fpass-plugin*, -fuse-ld*, -fld-path* (they load
//                                        or choose programs) and -fprofile*, -fauto-profile*
//                                        (they read or write profile files)
//                 -W<warning>[=<value>]  warnings, without ',' (-Wl, -Wa, -Wp pass options on)
//                 -w -pedantic -pedantic-errors -pthread
//                 -std=<standard>
//           Everything else is refused, among it -o, -B, -I, -L, -l, -x, -specs, -include,
//           -wrapper, -Xlinker, -Xclang, -save-temps, `@file`, and -D/-U (a macro could turn the
//           generated kernels into calls of any C function).
//
//   cflags_problem("-O2; touch x")  → "word '-O2;' contains ';' (a flag is made of ...)"
//   cflags_problem("-O3 -o x")      → "flag '-o' is not accepted (allowed: ...)"
#include <string>
#include <string_view>
#include <vector>

#include "core/target/target.h"

namespace tessel::c_source {

// The words of a cflags value (split at whitespace; no quoting).
std::vector<std::string> split_cflags(std::string_view cflags);

// Why the cflags value is refused (naming the first bad word), or "" when every word passes.
std::string cflags_problem(std::string_view cflags);

// The option checks the c target kind installs (TargetOptionSpec::check).
std::string check_cc_option(const TargetOptionValue& value);
std::string check_cflags_option(const TargetOptionValue& value);

// cc, the cflags words, then `fixed` (the backend's own flags and files). Throws Error naming the
// option when cc or cflags is refused (defaults are checked here too: they never went through
// Target::set).
std::vector<std::string> compiler_command(const Target& target, const std::vector<std::string>& fixed);

}  // namespace tessel::c_source
