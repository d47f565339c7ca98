#include "plugins/accel_sim/codegen.h"

#include <functional>
#include <map>

#include "core/loopir/printer.h"
#include "core/support/error.h"
#include "core/support/int_math.h"
#include "core/te/tensor_intrinsic.h"

namespace tessel::accel {
using namespace loopir;

bool scratchpad_of_scope(const std::string& scope, Scratchpad* out) {
  if (scope == "accel.inp")
    *out = Scratchpad::kInput;
  else if (scope == "accel.wgt")
    *out = Scratchpad::kWeight;
  else if (scope == "accel.acc")
    *out = Scratchpad::kAcc;
  else
    return false;
  return true;
}

namespace {

// The longest stream the generator writes before refusing (the simulator holds it in memory).
constexpr size_t kMaxInstructions = 500'000;

std::string first_line(const Stmt& s) {
  std::string text = to_string(s);
  size_t start = text.find_first_not_of(' ');
  text = text.substr(start == std::string::npos ? 0 : start);
  return text.substr(0, text.find('\n'));
}

// A tile of a copy or ALU nest: element offsets of one side at (row, col) = base + row*rs + col*cs.
struct Affine {
  int64_t base = 0, rs = 0, cs = 0;
};

class Emitter {
 public:
  Emitter(const Func& f, const MachineConfig& m) : f_(f), m_(m) {
    for (size_t k = 0; k < f.params.size(); ++k) {
      param_[f.params[k]->name] = static_cast<int>(k);
      program_.buffers.push_back(f.params[k]->name);
    }
  }

  Program run() {
    stmt(f_.body);
    for (int u = 0; u < kUnits; ++u)
      if (has_pending_pops(u)) emit_nop(static_cast<Unit>(u), "the last tokens");
    bool tokens = false;
    for (const Instruction& in : program_.insns)
      for (int u = 0; u < kUnits; ++u) tokens = tokens || in.pop[u] || in.push[u];
    if (!tokens) synchronize();
    return std::move(program_);
  }

 private:
  [[noreturn]] void refuse(const std::string& what, const std::string& why) const {
    throw Error("kernel '" + f_.name + "': accel-sim codegen: " + what + ": " + why);
  }

  // ── Values ──

  int64_t eval(const Expr& e, const std::string& where) const {
    if (auto* n = as<IntImm>(e)) return n->value;
    if (auto* n = as<Var>(e)) {
      auto it = env_.find(n);
      if (it == env_.end()) refuse(where, "the variable " + n->name + " has no value here");
      return it->second;
    }
    if (auto* n = as<Cast>(e)) {
      if (!dtype_is_integer(n->dtype) && n->dtype != DataType::kBool) refuse(where, "a non-integer index");
      return eval(n->value, where);
    }
    if (auto* n = as<Not>(e)) return eval(n->a, where) ? 0 : 1;
    if (auto* n = as<Select>(e)) return eval(n->cond, where) ? eval(n->true_value, where) : eval(n->false_value, where);
    if (auto* n = as<Binary>(e)) {
      int64_t x = eval(n->a, where), y = eval(n->b, where);
      switch (n->op) {
        case BinaryOp::kAdd:
          return x + y;
        case BinaryOp::kSub:
          return x - y;
        case BinaryOp::kMul:
          return x * y;
        case BinaryOp::kDiv:
          if (y == 0) refuse(where, "division by zero in " + to_string(e));
          return floor_div(x, y);
        case BinaryOp::kMod:
          if (y == 0) refuse(where, "modulo by zero in " + to_string(e));
          return floor_mod(x, y);
        case BinaryOp::kMin:
          return std::min(x, y);
        case BinaryOp::kMax:
          return std::max(x, y);
        case BinaryOp::kAnd:
          return x && y;
        case BinaryOp::kOr:
          return x || y;
        default:
          return *eval_comparison(n->op, x, y);
      }
    }
    refuse(where, "the expression " + to_string(e) + " is not an integer computed from loop variables");
  }

  // ── Statements ──

  void stmt(const Stmt& s) {
    if (!s) return;
    if (auto* n = as<Seq>(s)) {
      for (auto& c : n->stmts) stmt(c);
    } else if (auto* n = as<Allocate>(s)) {
      allocate(*n);
    } else if (auto* n = as<LetStmt>(s)) {
      env_[n->var.get()] = eval(n->value, first_line(s));
      stmt(n->body);
      env_.erase(n->var.get());
    } else if (auto* n = as<IfThenElse>(s)) {
      stmt(eval(n->cond, first_line(s)) ? n->then_case : n->else_case);
    } else if (auto* n = as<For>(s)) {
      loop(*n, s);
    } else if (auto* n = as<Store>(s)) {
      tile({}, *n, s);
    } else if (auto* n = as<Evaluate>(s)) {
      evaluate(*n, s);
    } else {
      refuse(first_line(s), "the accelerator has no instruction for this statement");
    }
  }

  void allocate(const Allocate& a) {
    const Buffer& b = a.buffer;
    std::string what = "allocate " + b->name + " (" + b->scope + ")";
    Scratchpad pad;
    if (!scratchpad_of_scope(b->scope, &pad))
      refuse(what, "the accelerator allocates only in its scratchpads accel.inp, accel.wgt and accel.acc");
    DataType want = pad == Scratchpad::kAcc ? DataType::kInt32 : DataType::kInt8;
    if (b->dtype != want)
      refuse(what, std::string("the ") + scratchpad_name(pad) + " scratchpad holds " + std::string(dtype_name(want)) +
                       ", not " + std::string(dtype_name(b->dtype)));
    int64_t elems = buffer_span(*b), size = m_.scratchpad_bytes(pad) / scratchpad_elem_bytes(pad);
    int p = static_cast<int>(pad);
    if (top_[p] + elems > size)
      refuse(what, std::to_string(elems) + " elements do not fit the " + scratchpad_name(pad) + " scratchpad (" +
                       std::to_string(size) + " elements, " + std::to_string(top_[p]) + " in use)");
    placed_[b->name] = {pad, top_[p]};
    top_[p] += elems;
    stmt(a.body);
    top_[p] -= elems;
    placed_.erase(b->name);
  }

  void loop(const For& n, const Stmt& self) {
    std::string where = "for " + n.var->name;
    if (n.for_kind == ForKind::kThreadBound)
      refuse(where, "a thread-bound loop (" + n.thread_tag + "): the accelerator has no threads");
    // A perfect nest ending in one store is a tile operation.
    std::vector<const For*> nest{&n};
    while (auto* inner = as<For>(nest.back()->body)) nest.push_back(inner);
    if (auto* store = as<Store>(nest.back()->body)) {
      tile(nest, *store, self);
      return;
    }
    int64_t mn = eval(n.min, where), ext = eval(n.extent, where);
    for (int64_t v = mn; v < mn + ext; ++v) {
      env_[n.var.get()] = v;
      stmt(n.body);
    }
    env_.erase(n.var.get());
  }

  // The nest's outer loops (all but the last two) are walked; each iteration is one 2-D tile.
  void tile(const std::vector<const For*>& nest, const Store& store, const Stmt& self) {
    std::string where = first_line(nest.empty() ? self : nest.back()->body);
    size_t outer = nest.size() > 2 ? nest.size() - 2 : 0;
    std::function<void(size_t)> walk = [&](size_t level) {
      if (level == outer) {
        tile_2d({nest.begin() + static_cast<std::ptrdiff_t>(outer), nest.end()}, store, where);
        return;
      }
      const For& l = *nest[level];
      if (l.for_kind == ForKind::kThreadBound) refuse(where, "a thread-bound loop: the accelerator has no threads");
      int64_t mn = eval(l.min, where), ext = eval(l.extent, where);
      for (int64_t v = mn; v < mn + ext; ++v) {
        env_[l.var.get()] = v;
        walk(level + 1);
      }
      env_.erase(l.var.get());
    };
    walk(0);
  }

  // Offsets of `index` over the tile's rows and columns, checked to be affine at every point.
  Affine affine(const Expr& index, const For* row, const For* col, int64_t rows, int64_t cols,
                const std::string& where) {
    auto at = [&](int64_t r, int64_t c) {
      if (row) env_[row->var.get()] = eval(row->min, where) + r;
      if (col) env_[col->var.get()] = eval(col->min, where) + c;
      return eval(index, where);
    };
    Affine a;
    a.base = at(0, 0);
    a.rs = rows > 1 ? at(1, 0) - a.base : 0;
    a.cs = cols > 1 ? at(0, 1) - a.base : 0;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        if (at(r, c) != a.base + r * a.rs + c * a.cs)
          refuse(where, "the index " + to_string(index) + " is not affine in the tile's loops");
    return a;
  }

  const Load* flat_load(const Expr& e) const {
    auto* l = as<Load>(e);
    return l && l->indices.size() == 1 ? l : nullptr;
  }

  void tile_2d(const std::vector<const For*>& loops, const Store& store, const std::string& where) {
    const For* row = loops.size() == 2 ? loops[0] : nullptr;
    const For* col = loops.empty() ? nullptr : loops.back();
    int64_t rows = row ? eval(row->extent, where) : 1, cols = col ? eval(col->extent, where) : 1;
    if (rows < 1 || cols < 1) return;  // an empty loop does nothing
    if (store.indices.size() != 1) refuse(where, "the store is not flattened to one index");
    std::string col_name = col ? col->var->name : "";
    auto contiguous = [&](const Affine& a, const std::string& buffer) {
      if (cols > 1 && a.cs != 1)
        refuse(where, "the innermost loop " + col_name + " walks " + buffer + " with stride " + std::to_string(a.cs) +
                          "; tiles move contiguous rows");
      if (a.rs < 0 || a.base < 0) refuse(where, "a negative offset or row stride in " + buffer);
    };
    Instruction in;
    in.rows = rows;
    in.cols = cols;
    auto dst_place = placed_.find(store.buffer->name);
    const Load* src = flat_load(store.value);
    const Expr* cast_value = nullptr;
    if (auto* c = as<Cast>(store.value)) {
      src = flat_load(c->value);
      cast_value = &c->value;
    }
    if (dst_place != placed_.end() && dst_place->second.pad != Scratchpad::kAcc && !src)
      refuse(where, "a scratchpad is written with something other than a copy from DRAM");
    if (src && !cast_value && dst_place != placed_.end() && param_.count(src->buffer->name)) {
      // LOAD: DRAM → scratchpad.
      const Placed& d = dst_place->second;
      if (src->buffer->dtype != store.buffer->dtype) refuse(where, "the load changes the element type");
      Affine a = affine(store.indices[0], row, col, rows, cols, where);
      Affine b = affine(src->indices[0], row, col, rows, cols, where);
      contiguous(a, store.buffer->name);
      contiguous(b, src->buffer->name);
      in.op = Opcode::kLoad;
      in.sram = d.pad;
      in.sram_region = {d.offset + a.base, a.rs};
      in.buffer = param_.at(src->buffer->name);
      in.dram_offset = b.base;
      in.dram_stride = b.rs;
      in.dram_elem_bytes = dtype_size(src->buffer->dtype);
      in.note = store.buffer->name + " <- " + src->buffer->name;
      emit(in);
      return;
    }
    if (src && dst_place == placed_.end() && param_.count(store.buffer->name)) {
      // STORE: acc → DRAM, int32 as it is or int8 through a cast (the low byte).
      auto s = placed_.find(src->buffer->name);
      if (s == placed_.end() || s->second.pad != Scratchpad::kAcc)
        refuse(where, "the store unit writes DRAM only from the acc scratchpad");
      DataType out = store.buffer->dtype;
      if (!(out == DataType::kInt32 && !cast_value) && !(out == DataType::kInt8 && cast_value))
        refuse(where, "the store unit writes int32, or int8 through a cast, not " + std::string(dtype_name(out)));
      Affine a = affine(store.indices[0], row, col, rows, cols, where);
      Affine b = affine(src->indices[0], row, col, rows, cols, where);
      contiguous(a, store.buffer->name);
      contiguous(b, src->buffer->name);
      in.op = Opcode::kStore;
      in.sram = Scratchpad::kAcc;
      in.sram_region = {s->second.offset + b.base, b.rs};
      in.buffer = param_.at(store.buffer->name);
      in.dram_offset = a.base;
      in.dram_stride = a.rs;
      in.dram_elem_bytes = dtype_size(out);
      in.note = store.buffer->name + " <- " + src->buffer->name;
      emit(in);
      return;
    }
    if (dst_place != placed_.end() && dst_place->second.pad == Scratchpad::kAcc) {
      alu(store, row, col, rows, cols, where);
      return;
    }
    refuse(where, "neither a load into a scratchpad, a store from acc, nor an ALU operation on acc");
  }

  // acc[x] = acc[x] op imm, or acc[x] op acc[y]: + max min, and / 2^s as an arithmetic shift.
  void alu(const Store& store, const For* row, const For* col, int64_t rows, int64_t cols, const std::string& where) {
    auto* b = as<Binary>(store.value);
    const Load* self = b ? flat_load(b->a) : nullptr;
    if (!b || !self || self->buffer->name != store.buffer->name)
      refuse(where, "the ALU computes acc[x] = acc[x] op value; this store is not of that form");
    Instruction in;
    in.op = Opcode::kAlu;
    in.rows = rows;
    in.cols = cols;
    const Load* other = flat_load(b->b);
    int64_t imm = 0;
    bool is_imm = is_const_int(b->b, &imm);
    if (!other && !is_imm) refuse(where, "the ALU's second operand is an acc region or an integer constant");
    switch (b->op) {
      case BinaryOp::kAdd:
        in.alu = is_imm ? AluOp::kAddImm : AluOp::kAdd;
        break;
      case BinaryOp::kMax:
        in.alu = is_imm ? AluOp::kMaxImm : AluOp::kMax;
        break;
      case BinaryOp::kMin:
        if (!is_imm) refuse(where, "min of two acc regions is not an ALU operation");
        in.alu = AluOp::kMinImm;
        break;
      case BinaryOp::kDiv: {
        int s = 0;
        while (s < 31 && (int64_t{1} << s) < imm) ++s;
        if (!is_imm || imm < 1 || (int64_t{1} << s) != imm)
          refuse(where, "the ALU divides only by a power of two (an arithmetic shift)");
        in.alu = AluOp::kShrImm;
        imm = s;
        break;
      }
      default:
        refuse(where, "the ALU has no " + std::string(binary_op_symbol(b->op)) + " operation");
    }
    if (is_imm && (imm < INT32_MIN || imm > INT32_MAX)) refuse(where, "the constant does not fit int32");
    Affine d = affine(store.indices[0], row, col, rows, cols, where);
    Affine s = affine(self->indices[0], row, col, rows, cols, where);
    if (d.base != s.base || d.rs != s.rs || d.cs != s.cs)
      refuse(where, "the ALU reads and writes the same acc elements; this store reads other ones");
    if (cols > 1 && d.cs != 1) refuse(where, "the innermost loop walks acc with stride " + std::to_string(d.cs));
    const Placed& p = placed_.at(store.buffer->name);
    in.sram_region = {p.offset + d.base, d.rs};
    if (other) {
      auto o = placed_.find(other->buffer->name);
      if (o == placed_.end() || o->second.pad != Scratchpad::kAcc) refuse(where, "the ALU's operands are in acc");
      Affine a = affine(other->indices[0], row, col, rows, cols, where);
      if (cols > 1 && a.cs != 1)
        refuse(where, "the innermost loop walks the second operand with stride " + std::to_string(a.cs));
      in.src = {o->second.offset + a.base, a.rs};
    }
    in.imm = static_cast<int32_t>(imm);
    in.note = store.buffer->name + " " + std::string(binary_op_symbol(b->op));
    emit(in);
  }

  void evaluate(const Evaluate& n, const Stmt& self) {
    std::string where = first_line(self);
    auto* call = as<Call>(n.value);
    if (!call) refuse(where, "the accelerator has no instruction for this expression");
    if (call->builtin == Builtin::kPrefetch) return;  // a CPU cache hint: the accelerator's DMA has no cache
    if (call->is_dependence_token()) {
      if (call->args.size() != 2) refuse(where, "a token names two queues");
      int64_t from = eval(call->args[0], where), to = eval(call->args[1], where);
      if (from < 0 || from >= kUnits || to < 0 || to >= kUnits || from == to)
        refuse(where, "the queues are load 0, compute 1 and store 2");
      if (call->builtin == Builtin::kDepPush)
        push(static_cast<int>(from), static_cast<int>(to));
      else
        ++pending_pop_[static_cast<size_t>(to)][static_cast<size_t>(from)];
      return;
    }
    bool reset = false;
    const te::TensorIntrinsic* intrin = te::find_tensor_intrinsic_call(call->name, &reset);
    if (!intrin) refuse(where, "the accelerator has no instruction for the call " + call->name);
    std::string n_str = std::to_string(m_.gemm);
    std::string want = "gemm_" + n_str + "x" + n_str + "x" + n_str + "_i8";
    if (intrin->name != want)
      refuse(where, "the GEMM core computes " + want + " (target option gemm=" + n_str + "), not " + intrin->name);
    // Operands: address_of(T[i]) then its row stride, inputs first, the output last.
    std::vector<Region> regions;
    std::vector<Scratchpad> pads;
    for (size_t k = 0; k + 1 < call->args.size(); k += 2) {
      // address_of(one load), and that load a flat buffer access
      const Load* l = address_of_load(call->args[k]) ? flat_load(as<Call>(call->args[k])->args[0]) : nullptr;
      if (!l) refuse(where, "operand " + std::to_string(k / 2) + " is not address_of(a flat buffer access)");
      auto p = placed_.find(l->buffer->name);
      if (p == placed_.end())
        refuse(where, l->buffer->name + " is not in a scratchpad (the GEMM core reads only them)");
      regions.push_back({p->second.offset + eval(l->indices[0], where), eval(call->args[k + 1], where)});
      pads.push_back(p->second.pad);
    }
    std::vector<Scratchpad> want_pads =
        reset ? std::vector<Scratchpad>{Scratchpad::kAcc}
              : std::vector<Scratchpad>{Scratchpad::kInput, Scratchpad::kWeight, Scratchpad::kAcc};
    if (pads != want_pads)
      refuse(where, reset ? "the reset's operand must be in accel.acc"
                          : "the GEMM's operands must be in accel.inp, accel.wgt and accel.acc, in that order");
    Instruction in;
    in.op = Opcode::kGemm;
    in.reset = reset;
    in.c = regions.back();
    if (!reset) {
      in.a = regions[0];
      in.b = regions[1];
    }
    in.note = intrin->name + (reset ? " reset" : "");
    emit(in);
  }

  // ── Instructions and tokens ──

  bool has_pending_pops(int u) const {
    for (int v = 0; v < kUnits; ++v)
      if (pending_pop_[u][static_cast<size_t>(v)]) return true;
    return false;
  }

  void emit(Instruction in) {
    if (program_.insns.size() >= kMaxInstructions)
      refuse("the program", "the instruction stream would exceed " + std::to_string(kMaxInstructions) +
                                " instructions; tile it more coarsely");
    if (in.op != Opcode::kNop) in.unit = unit_of(in.op);
    int u = static_cast<int>(in.unit);
    for (int v = 0; v < kUnits; ++v) in.pop[v] += pending_pop_[u][static_cast<size_t>(v)];
    pending_pop_[u] = {};
    last_[u] = static_cast<int64_t>(program_.insns.size());
    program_.insns.push_back(std::move(in));
  }

  void emit_nop(Unit u, const std::string& note) {
    Instruction nop;
    nop.op = Opcode::kNop;
    nop.unit = u;
    nop.note = note;
    emit(nop);
  }

  // A push certifies everything `from` did so far: it rides on from's last instruction, or on a
  // NOP when `from` has none yet or has tokens to pop first (they come before the push).
  void push(int from, int to) {
    if (last_[from] < 0 || has_pending_pops(from)) emit_nop(static_cast<Unit>(from), "tokens");
    ++program_.insns[static_cast<size_t>(last_[from])].push[to];
  }

  // Without virtual threads the lowering inserts no tokens: keep the program order wherever two
  // units touch the same bytes. Each instruction pops one token from the latest earlier
  // instruction of every other unit it conflicts with (unless an earlier token already orders
  // them), which pushes it. Tokens only point forward in program order, so nothing deadlocks.
  void synchronize() {
    const std::vector<Instruction>& insns = program_.insns;
    if (insns.size() > 200'000)
      refuse("the program", "a stream of " + std::to_string(insns.size()) +
                                " instructions without virtual threads is too long to synchronize; use a vthread "
                                "loop (its tokens come from the lowering)");
    std::vector<std::vector<Touch>> touches;
    std::array<std::vector<size_t>, kUnits> on_unit;
    for (size_t k = 0; k < insns.size(); ++k) {
      touches.push_back(touches_of(insns[k]));
      on_unit[static_cast<int>(insns[k].unit)].push_back(k);
    }
    std::array<std::array<int64_t, kUnits>, kUnits> covered;  // [from][to]: the last producer ordered
    for (auto& row : covered) row.fill(-1);
    std::array<size_t, kUnits> seen{};  // how many of each unit's instructions precede k
    for (size_t k = 0; k < insns.size(); ++k) {
      int u = static_cast<int>(insns[k].unit);
      for (int v = 0; v < kUnits; ++v) {
        if (v == u) continue;
        for (size_t n = seen[v]; n-- > 0;) {
          auto i = static_cast<int64_t>(on_unit[v][n]);
          if (i <= covered[v][u]) break;
          if (!conflict(touches[static_cast<size_t>(i)], touches[k])) continue;
          ++program_.insns[static_cast<size_t>(i)].push[u];
          ++program_.insns[k].pop[v];
          covered[v][u] = i;
          break;
        }
      }
      ++seen[u];
    }
  }

  // What an instruction reads or writes: rows of bytes in a memory (0-2: the scratchpads,
  // 3 + k: DRAM buffer k).
  struct Touch {
    int memory = 0;
    int64_t begin = 0, rows = 1, stride = 0, width = 0;
    bool write = false;
  };

  std::vector<Touch> touches_of(const Instruction& in) const {
    auto sram = [&](Scratchpad s, const Region& r, int64_t rows, int64_t cols, bool write) {
      int64_t eb = scratchpad_elem_bytes(s);
      return Touch{static_cast<int>(s), r.offset * eb, rows, r.stride * eb, cols * eb, write};
    };
    auto dram = [&](bool write) {
      int64_t eb = in.dram_elem_bytes;
      return Touch{3 + in.buffer, in.dram_offset * eb, in.rows, in.dram_stride * eb, in.cols * eb, write};
    };
    int64_t n = m_.gemm;
    switch (in.op) {
      case Opcode::kLoad:
        return {dram(false), sram(in.sram, in.sram_region, in.pad_top + in.rows + in.pad_bottom,
                                  in.pad_left + in.cols + in.pad_right, true)};
      case Opcode::kStore:
        return {sram(Scratchpad::kAcc, in.sram_region, in.rows, in.cols, false), dram(true)};
      case Opcode::kGemm:
        if (in.reset) return {sram(Scratchpad::kAcc, in.c, n, n, true)};
        return {sram(Scratchpad::kInput, in.a, n, n, false), sram(Scratchpad::kWeight, in.b, n, n, false),
                sram(Scratchpad::kAcc, in.c, n, n, true)};
      case Opcode::kAlu: {
        std::vector<Touch> t{sram(Scratchpad::kAcc, in.sram_region, in.rows, in.cols, true)};
        if (alu_op_has_source(in.alu)) t.push_back(sram(Scratchpad::kAcc, in.src, in.rows, in.cols, false));
        return t;
      }
      case Opcode::kNop:
        return {};
    }
    return {};
  }

  static bool conflict(const std::vector<Touch>& x, const std::vector<Touch>& y) {
    for (const Touch& a : x)
      for (const Touch& b : y) {
        if (a.memory != b.memory || !(a.write || b.write)) continue;
        for (int64_t r = 0; r < a.rows; ++r)
          for (int64_t s = 0; s < b.rows; ++s) {
            int64_t ab = a.begin + r * a.stride, bb = b.begin + s * b.stride;
            if (ab < bb + b.width && bb < ab + a.width) return true;
          }
      }
    return false;
  }

  struct Placed {
    Scratchpad pad;
    int64_t offset;  // elements
  };

  const Func& f_;
  const MachineConfig& m_;
  Program program_;
  std::map<std::string, int> param_;
  std::map<std::string, Placed> placed_;
  std::map<const Var*, int64_t> env_;
  std::array<int64_t, kUnits> top_{};
  std::array<std::array<int, kUnits>, kUnits> pending_pop_{};  // [popping unit][from]
  std::array<int64_t, kUnits> last_{-1, -1, -1};
};

}  // namespace

Program generate_program(const Func& f, const MachineConfig& m) { return Emitter(f, m).run(); }

}  // namespace tessel::accel
