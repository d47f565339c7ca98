// Kernels and inference of the three element-wise templates (UnaryOp, BinaryOp, VariadicOp), and
// their instantiations for every functor the op table lists.
#include "core/graph/ops/elementwise.h"

namespace tessel::ops {

std::string DTypeSet::str() const {
  std::string out;
  for (int t = 0; t <= static_cast<int>(kLastDataType); ++t)
    if (contains(static_cast<DataType>(t)))
      out += (out.empty() ? "" : ", ") + std::string(dtype_name(static_cast<DataType>(t)));
  return out;
}

void require_dtype(const char* op, const std::string& what, DataType t, DTypeSet allowed) {
  if (!allowed.contains(t))
    throw Error(std::string(op) + ": " + what + " has dtype " + std::string(dtype_name(t)) +
                "; allowed: " + allowed.str());
}

namespace {

[[noreturn]] void unsupported(const char* op, const char* kind) {
  // Inference rejects such dtypes first; reaching this means a graph skipped infer_types.
  throw Error(std::string(op) + ": no kernel for " + kind + " inputs");
}

Shape broadcast_named(const char* op, const Shape& a, const Shape& b) {
  try {
    return broadcast_shapes(a, b);
  } catch (const Error& e) {
    throw Error(std::string(op) + ": " + e.what());
  }
}

template <class Fn>
concept HasFloatUnary = requires(const typename Fn::Attrs& a, double x) {
  Fn::apply(a, x);
};
template <class Fn>
concept HasIntUnary = requires(const typename Fn::Attrs& a, int64_t x) {
  Fn::apply_int(a, x);
};
template <class Fn>
concept HasFloatBinary = requires(double x) {
  Fn::apply(x, x);
};
template <class Fn>
concept HasIntBinary = requires(int64_t x) {
  Fn::apply_int(x, x);
};
// Functors whose integer rule depends on the sign (order, division) give a u64 rule too: the
// int64 compute type holds a u64 above 2^63 as a negative number.
template <class Fn>
concept HasUnsignedBinary = requires(uint64_t x) {
  Fn::apply_unsigned(x, x);
};
template <class Fn>
concept HasFinish = requires(double x) {
  Fn::finish(x, int64_t{1});
};

// f(x) on the compute type of T; integers without an exact formula go through double.
template <class Fn, class T>
auto compute_unary(const typename Fn::Attrs& attrs, T x) {
  if constexpr (!kIsFloatLike<T> && HasIntUnary<Fn>) {
    return Fn::apply_int(attrs, load(x));
  } else if constexpr (HasFloatUnary<Fn>) {
    return Fn::apply(attrs, static_cast<double>(load(x)));
  } else {
    unsupported(Fn::name, "float");
    return int64_t{0};
  }
}

template <class Fn, class A, class B>
auto compute_binary(A a, B b) {
  if constexpr (std::is_same_v<A, uint64_t> && std::is_same_v<B, uint64_t> && HasUnsignedBinary<Fn>) {
    return Fn::apply_unsigned(a, b);
  } else if constexpr (!kIsFloatLike<A> && !kIsFloatLike<B> && HasIntBinary<Fn>) {
    return Fn::apply_int(load(a), load(b));
  } else if constexpr (HasFloatBinary<Fn>) {
    return Fn::apply(static_cast<double>(load(a)), static_cast<double>(load(b)));
  } else {
    unsupported(Fn::name, "float");
    return false;
  }
}

// One step of a variadic fold, staying in the compute type C.
template <class Fn, class C>
C fold(C acc, C x) {
  if constexpr (std::is_same_v<C, int64_t> && HasIntBinary<Fn>)
    return Fn::apply_int(acc, x);
  else if constexpr (std::is_same_v<C, double> && HasFloatBinary<Fn>)
    return Fn::apply(acc, x);
  else
    unsupported(Fn::name, std::is_same_v<C, double> ? "float" : "integer");
}

}  // namespace

// ---------------------------------------------------------------- UnaryOp

template <class Fn>
void UnaryOp<Fn>::infer(const Attrs&, InferContext& ctx) {
  require_dtype(Fn::name, "input 0", ctx.input(0).dtype, Fn::types);
  infer_like_input(ctx);
}

template <class Fn>
void UnaryOp<Fn>::reference(const Attrs& attrs, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  Tensor& y = args.out(0);
  dispatch_dtype(x.dtype(), [&]<class T>() {
    const T* px = x.data<T>();
    T* py = y.data<T>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) py[i] = store<T>(compute_unary<Fn>(attrs, px[i]));
  });
}

// ---------------------------------------------------------------- BinaryOp

template <class Fn>
void BinaryOp<Fn>::infer(const Attrs&, InferContext& ctx) {
  const TensorType& a = ctx.input(0);
  const TensorType& b = ctx.input(1);
  require_dtype(Fn::name, "input 0", a.dtype, Fn::types);
  if constexpr (Fn::mixed_types) {
    require_dtype(Fn::name, "input 1", b.dtype, Fn::exponent_types);
  } else if (b.dtype != a.dtype) {
    throw Error(std::string(Fn::name) + ": inputs have different dtypes (" + std::string(dtype_name(a.dtype)) +
                " and " + std::string(dtype_name(b.dtype)) + "); ONNX requires the same type");
  }
  Shape out = broadcast_named(Fn::name, a.shape, b.shape);
  if (Fn::unidirectional && out != a.shape)
    throw Error(std::string(Fn::name) + ": input 1 of shape " + shape_str(b.shape) +
                " does not broadcast to input 0's shape " + shape_str(a.shape));
  ctx.set_output(0, Fn::bool_result ? DataType::kBool : a.dtype, out);
}

template <class Fn>
void BinaryOp<Fn>::reference(const Attrs&, const KernelArgs& args) {
  const Tensor& a = args.in(0);
  const Tensor& b = args.in(1);
  Tensor& y = args.out(0);
  dispatch_dtype(a.dtype(), [&]<class A>() {
    using Out = std::conditional_t<Fn::bool_result, bool, A>;
    auto run = [&]<class B>() {
      const A* pa = a.data<A>();
      const B* pb = b.data<B>();
      Out* py = y.data<Out>();
      for_each_broadcast(y.shape(), {a.shape(), b.shape()}, [&](int64_t o, const int64_t* in) {
        py[o] = store<Out>(compute_binary<Fn>(pa[in[0]], pb[in[1]]));
      });
    };
    if constexpr (Fn::mixed_types)
      dispatch_dtype(b.dtype(), run);
    else
      run.template operator()<A>();
  });
}

// ---------------------------------------------------------------- VariadicOp

template <class Fn>
void VariadicOp<Fn>::infer(const Attrs&, InferContext& ctx) {
  const DataType dtype = ctx.input(0).dtype;
  Shape out = ctx.input(0).shape;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const TensorType& t = ctx.input(i);  // throws for an omitted input: none is optional
    require_dtype(Fn::name, "input " + std::to_string(i), t.dtype, Fn::types);
    if (t.dtype != dtype)
      throw Error(std::string(Fn::name) + ": input " + std::to_string(i) + " has dtype " +
                  std::string(dtype_name(t.dtype)) + ", input 0 has " + std::string(dtype_name(dtype)) +
                  "; ONNX requires the same type");
    out = broadcast_named(Fn::name, out, t.shape);
  }
  ctx.set_output(0, dtype, out);
}

template <class Fn>
void VariadicOp<Fn>::reference(const Attrs&, const KernelArgs& args) {
  Tensor& y = args.out(0);
  const int64_t n = static_cast<int64_t>(args.inputs.size());
  dispatch_dtype(y.dtype(), [&]<class T>() {
    std::vector<const T*> data;
    std::vector<Shape> shapes;
    for (int64_t k = 0; k < n; ++k) {
      data.push_back(args.in(static_cast<int>(k)).template data<T>());
      shapes.push_back(args.in(static_cast<int>(k)).shape());
    }
    T* py = y.data<T>();
    for_each_broadcast(y.shape(), shapes, [&](int64_t o, const int64_t* in) {
      // Fn's test first, on its own: it is settled when VariadicOp<Fn> is instantiated, so clang
      // discards the branch for functors without apply_unsigned before it looks inside.
      if constexpr (HasUnsignedBinary<Fn>) {
        if constexpr (std::is_same_v<T, uint64_t>) {
          uint64_t acc = data[0][in[0]];
          for (int64_t k = 1; k < n; ++k) acc = Fn::apply_unsigned(acc, data[k][in[k]]);
          py[o] = acc;
          return;
        }
      }
      Compute<T> acc = load(data[0][in[0]]);
      for (int64_t k = 1; k < n; ++k) acc = fold<Fn>(acc, load(data[k][in[k]]));
      if constexpr (HasFinish<Fn>) {
        if constexpr (std::is_same_v<Compute<T>, double>) acc = Fn::finish(acc, n);
      }
      py[o] = store<T>(acc);
    });
  });
}

template <class Fn>
int64_t VariadicOp<Fn>::flops(const Attrs&, const OpTypes& t) {
  const int64_t folds = static_cast<int64_t>(t.inputs.size()) - 1;
  return flops_per_output_element(t, folds + (HasFinish<Fn> ? 1 : 0));
}

// ---------------------------------------------------------------- instantiations (one per .def line)

template struct UnaryOp<ReluFn>;
template struct UnaryOp<LeakyReluFn>;
template struct UnaryOp<SigmoidFn>;
template struct UnaryOp<TanhFn>;
template struct UnaryOp<ExpFn>;
template struct UnaryOp<LogFn>;
template struct UnaryOp<SqrtFn>;
template struct UnaryOp<ReciprocalFn>;
template struct UnaryOp<FloorFn>;
template struct UnaryOp<CeilFn>;
template struct UnaryOp<RoundFn>;
template struct UnaryOp<SoftplusFn>;
template struct UnaryOp<HardSwishFn>;
template struct UnaryOp<SoftsignFn>;
template struct UnaryOp<CeluFn>;
template struct UnaryOp<ErfFn>;
template struct UnaryOp<NegFn>;
template struct UnaryOp<AbsFn>;
template struct UnaryOp<SignFn>;
template struct UnaryOp<NotFn>;
template struct UnaryOp<EluFn>;
template struct UnaryOp<SeluFn>;
template struct UnaryOp<HardSigmoidFn>;
template struct UnaryOp<SinFn>;
template struct UnaryOp<CosFn>;
template struct UnaryOp<TanFn>;
template struct UnaryOp<AsinFn>;
template struct UnaryOp<AcosFn>;
template struct UnaryOp<AtanFn>;
template struct UnaryOp<SinhFn>;
template struct UnaryOp<CoshFn>;
template struct UnaryOp<AsinhFn>;
template struct UnaryOp<AcoshFn>;
template struct UnaryOp<AtanhFn>;
template struct UnaryOp<ShrinkFn>;
template struct UnaryOp<ThresholdedReluFn>;

template struct BinaryOp<AddFn>;
template struct BinaryOp<SubFn>;
template struct BinaryOp<MulFn>;
template struct BinaryOp<DivFn>;
template struct BinaryOp<PowFn>;
template struct BinaryOp<PReluFn>;
template struct BinaryOp<EqualFn>;
template struct BinaryOp<LessFn>;
template struct BinaryOp<GreaterFn>;
template struct BinaryOp<LessOrEqualFn>;
template struct BinaryOp<GreaterOrEqualFn>;
template struct BinaryOp<AndFn>;
template struct BinaryOp<OrFn>;
template struct BinaryOp<XorFn>;

template struct VariadicOp<MaxFn>;
template struct VariadicOp<MinFn>;
template struct VariadicOp<SumFn>;
template struct VariadicOp<MeanFn>;

}  // namespace tessel::ops
