#include "core/target/target_traits.h"

#include "core/support/error.h"
#include "core/target/cpu_caches.h"

namespace tessel {

namespace {

// An option a device class reads from every kind of that class.
const TargetOptionSpec& required_option(const Target& t, std::string_view option, std::string_view why) {
  const TargetOptionSpec* spec = t.kind_info().find_option(option);
  if (!spec)
    throw Error("target kind '" + t.kind() + "' is declared an " +
                std::string(device_class_name(t.kind_info().device_class)) + " but has no option '" +
                std::string(option) + "' (" + std::string(why) + ")");
  return *spec;
}

}  // namespace

TargetTraits target_traits(const Target& target) {
  const TargetKind& kind = target.kind_info();
  TargetTraits t;
  t.device_class = kind.device_class;
  t.kind = kind.name;
  t.device = kind.device;
  t.vector_lanes = target_vector_floats(target);
  t.l1_bytes = target_cache_bytes(target, 1);
  t.l2_bytes = target_cache_bytes(target, 2);
  t.threads = target_threads(target);
  // vnni is a CPU kind's choice (llvm declares it, its default the host's feature); kinds without
  // the option have no dot-product step to schedule for.
  t.vnni = kind.find_option("vnni") && target.get_bool("vnni");
  if (kind.find_option("sub_group_width")) t.sub_group_width = target.get_int("sub_group_width");
  if (t.is_accelerator()) {
    (void)required_option(target, "gemm", "the size of its GEMM core");
    (void)required_option(target, "wgt_bytes", "its weight scratchpad");
    t.accelerator.gemm = target.get_int("gemm");
    t.accelerator.wgt_bytes = target.get_int("wgt_bytes");
    // The layout is the compiler's choice; a kind may offer the row-major one as well.
    t.accelerator.tiled_layout = !kind.find_option("gemm_layout") || target.get_string("gemm_layout") == "tiled";
  }
  t.memory_scopes = kind.memory_scopes;
  if (kind.tensor_intrinsics) {
    t.intrinsics = kind.tensor_intrinsics(target);
    t.all_intrinsics = false;
  }
  return t;
}

TargetTraits cpu_traits(int64_t lanes) {
  TargetTraits t;
  t.kind = "cpu";
  t.device = "cpu";
  t.vector_lanes = lanes;
  return t;
}

}  // namespace tessel
