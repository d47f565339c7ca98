#include <ostream>

#include "core/graph/text_format.h"
#include "core/pass/pass_instrument.h"

namespace tessel {

PassTextDumper::PassTextDumper(std::ostream& out, When when, std::string pass_name)
    : out_(out), when_(when), pass_name_(std::move(pass_name)) {}

void PassTextDumper::after_pass(std::string_view pass, const GraphPtr&, const GraphPtr& after, bool changed,
                                double wall_ms) {
  const bool wanted = when_ == When::kAll || (when_ == When::kChanged && changed) ||
                      (when_ == When::kNamed && pass == pass_name_);
  if (!wanted) return;
  out_ << "// ---- after " << pass << (changed ? "" : " (unchanged)") << ", " << wall_ms << " ms\n"
       << print_graph(*after) << "\n";
}

void PassTextDumper::after_pass_failed(std::string_view pass, const GraphPtr&, const Error& error, double) {
  out_ << "// ---- " << pass << " FAILED: " << error.what() << "\n";
}

}  // namespace tessel
