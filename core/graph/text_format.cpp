#include "core/graph/text_format.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <sstream>
#include <type_traits>
#include <unordered_map>

#include "core/graph/op_table.h"

namespace tessel {

namespace {

constexpr int64_t kMaxPrintedConstant = 16;

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-';
}

std::string quote_name(const std::string& name) {
  bool plain = !name.empty();
  for (char c : name) plain = plain && is_name_char(c);
  if (plain) return "%" + name;
  std::string s = "%\"";
  for (char c : name) s += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return s + "\"";
}

std::string type_with_layout(const Value& v) {
  return type_str(v.type) + (v.layout.empty() ? "" : "{" + v.layout + "}");
}

std::string constant_body(const Tensor& t) {
  if (t.numel() <= kMaxPrintedConstant) {
    std::string s = "[";
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (t.dtype() == DataType::kString) {  // quoted, with " and \ escaped
        s += i ? ", \"" : "\"";
        for (char c : t.string_at(i)) s += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
        s += "\"";
        continue;
      }
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%.9g", i ? ", " : "", t.get_double(i));
      s += buf;
    }
    return s + "]";
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "elided(%016zx)", attr_detail::hash_value(t));
  return buf;
}

}  // namespace

std::string print_graph(const Graph& g) {
  std::ostringstream out;
  out << "graph " << g.name << "(";
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value& v = g.value(g.inputs[i]);
    out << (i ? ", " : "") << quote_name(v.name) << ": " << type_with_layout(v);
  }
  out << ") {\n";
  // Constants first, in value order, then nodes in topological order.
  for (ValueId id = 0; id < static_cast<ValueId>(g.values.size()); ++id) {
    if (!g.is_constant(id)) continue;
    const Value& v = g.value(id);
    out << "  " << quote_name(v.name) << " = constant " << type_with_layout(v) << " " << constant_body(v.value) << "\n";
  }
  for (const Node& n : g.nodes) {
    out << "  ";
    for (size_t k = 0; k < n.outputs.size(); ++k) out << (k ? ", " : "") << quote_name(g.value(n.outputs[k]).name);
    out << " = " << n.op->name << "(";
    for (size_t k = 0; k < n.inputs.size(); ++k)
      out << (k ? ", " : "") << (n.inputs[k] == kNoValue ? "_" : quote_name(g.value(n.inputs[k]).name));
    out << ")";
    std::string attrs = n.attrs ? n.attrs->print_non_default() : "";
    if (!attrs.empty()) out << " {" << attrs << "}";
    out << " :";
    for (size_t k = 0; k < n.outputs.size(); ++k) out << (k ? ", " : " ") << type_with_layout(g.value(n.outputs[k]));
    if (n.outputs.empty() || n.name != g.value(n.outputs[0]).name) out << " " << quote_name(n.name).replace(0, 1, "@");
    out << "\n";
  }
  out << "  return";
  for (size_t k = 0; k < g.outputs.size(); ++k) out << (k ? ", " : " ") << quote_name(g.value(g.outputs[k]).name);
  out << "\n}\n";
  return out.str();
}

namespace {

// Whether `v` converts to `dtype` (a double outside an integer type's range does not: the
// conversion would be undefined).
bool representable(DataType dtype, double v) {
  return dispatch_dtype(dtype, [&]<class T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      return v >= static_cast<double>(std::numeric_limits<T>::min()) &&
             v < static_cast<double>(std::numeric_limits<T>::max()) + 1.0;
    else
      return true;
  });
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// A cursor over the text with the line number for error messages.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Graph parse() {
    Graph g;
    expect_word("graph");
    g.name = identifier();
    expect('(');
    if (!accept(')')) {
      do {
        std::string name = value_name();
        expect(':');
        auto [type, layout] = tensor_type();
        ValueId id = g.add_input(name, type);
        g.value(id).layout = layout;
        define(name, id);
      } while (accept(','));
      expect(')');
    }
    expect('{');
    while (true) {
      skip_space();
      if (peek_word("return")) break;
      statement(g);
    }
    expect_word("return");
    skip_space_inline();
    if (peek() != '}' && peek() != '\n') {
      do g.outputs.push_back(use(value_name()));
      while (accept(','));
    }
    expect('}');
    try {
      infer_types(g);
    } catch (const Error& e) {
      throw Error("graph text: " + std::string(e.what()));
    }
    for (const auto& [id, written] : written_types_) {
      if (g.value(id).type != written)
        fail("value '" + g.value(id).name + "' is written as " + type_str(written) + " but infers to " +
             type_str(g.value(id).type));
    }
    return g;
  }

 private:
  void statement(Graph& g) {
    std::vector<std::string> outs;
    do outs.push_back(value_name());
    while (accept(','));
    expect('=');
    std::string op_name = identifier();
    if (op_name == "constant") {
      if (outs.size() != 1) fail("a constant defines exactly one value");
      auto [type, layout] = tensor_type();
      Tensor t = constant_data(type);
      ValueId id = g.add_constant(outs[0], t);
      g.value(id).layout = layout;
      define(outs[0], id);
      return;
    }
    const OpDef* op = find_op(op_name);
    if (!op) {
      try {
        get_op(op_name);
      } catch (const Error& e) {
        fail(e.what());
      }
    }
    expect('(');
    std::vector<ValueId> inputs;
    if (!accept(')')) {
      do {
        skip_space();
        if (accept('_')) inputs.push_back(kNoValue);
        else inputs.push_back(use(value_name()));
      } while (accept(','));
      expect(')');
    }
    AttrMap attrs;
    if (accept('{')) {
      if (!accept('}')) {
        do {
          std::string key = identifier();
          expect('=');
          attrs[key] = attr_value();
        } while (accept(','));
        expect('}');
      }
    }
    Attrs parsed;
    try {
      parsed = op->parse_attrs(op->name, attrs);
    } catch (const Error& e) {
      fail(e.what());
    }
    std::vector<std::pair<TensorType, std::string>> types;
    if (accept(':')) {
      do types.push_back(tensor_type());
      while (accept(','));
    }
    std::string node_name = outs[0];
    skip_space_inline();
    if (accept('@')) node_name = raw_name();
    auto ids = g.add_node(node_name, *op, parsed, inputs, static_cast<int>(outs.size()), outs);
    for (size_t k = 0; k < ids.size(); ++k) {
      define(outs[k], ids[k]);
      if (k < types.size()) {
        written_types_.emplace_back(ids[k], types[k].first);
        g.value(ids[k]).layout = types[k].second;
      }
    }
  }

  Tensor constant_data(const TensorType& type) {
    Tensor t(type.dtype, type.shape);
    skip_space();
    if (accept('[')) {
      int64_t i = 0;
      if (!accept(']')) {
        do {
          double v = number();
          if (i >= t.numel()) fail("too many values for constant of type " + type_str(type));
          if (!representable(type.dtype, v))
            fail("value " + number_text(v) + " does not fit constant of type " + type_str(type));
          t.set_double(i++, v);
        } while (accept(','));
        expect(']');
      }
      if (i != t.numel()) fail("constant of type " + type_str(type) + " needs " + std::to_string(t.numel()) +
                               " values, got " + std::to_string(i));
      return t;
    }
    std::string kind = identifier();
    if (kind == "zeros") return t;
    if (kind == "random" || kind == "elided") {
      expect('(');
      skip_space();
      std::string seed_text;
      while (std::isxdigit(static_cast<unsigned char>(peek()))) seed_text += get();
      expect(')');
      // random(SEED) is decimal, elided(HASH) hexadecimal; both fit 64 bits.
      uint64_t seed = 0;
      auto [end, err] = std::from_chars(seed_text.data(), seed_text.data() + seed_text.size(), seed,
                                        kind == "random" ? 10 : 16);
      if (seed_text.empty() || err != std::errc() || end != seed_text.data() + seed_text.size())
        fail("expected a " + std::string(kind == "random" ? "decimal" : "hexadecimal") + " 64-bit seed in " + kind +
             "(...), got '" + seed_text + "'");
      std::mt19937_64 rng(seed);
      std::uniform_real_distribution<double> dist(-1.0, 1.0);
      // Integers in [-8, 8), or [0, 8) for unsigned types.
      const bool is_unsigned = dtype_is_unsigned(type.dtype);
      for (int64_t i = 0; i < t.numel(); ++i) {
        double r = dist(rng);
        t.set_double(i, dtype_is_float(type.dtype) ? r : std::floor(is_unsigned ? (r + 1) * 4 : r * 8));
      }
      return t;
    }
    fail("expected constant values: [..], zeros or random(seed), got '" + kind + "'");
  }

  AttrValue attr_value() {
    skip_space();
    if (peek() == '"') return string_literal();
    if (peek() == '[') {
      get();
      std::vector<Number> nums;
      std::vector<std::string> strs;
      bool all_int = true;
      if (!accept(']')) {
        do {
          skip_space();
          if (peek() == '"') {
            strs.push_back(string_literal());
          } else {
            nums.push_back(number_token());
            all_int = all_int && nums.back().is_int;
          }
        } while (accept(','));
        expect(']');
      }
      if (!strs.empty()) return strs;
      if (all_int) {
        std::vector<int64_t> ints;
        for (const Number& n : nums) ints.push_back(n.integer);
        return ints;
      }
      std::vector<double> reals;
      for (const Number& n : nums) reals.push_back(n.value);
      return reals;
    }
    if (std::isalpha(static_cast<unsigned char>(peek()))) {
      std::string word = identifier();
      if (word == "tensor") {
        expect('<');
        auto [type, layout] = tensor_type();
        expect('>');
        return constant_data(type);
      }
      if (word == "nan" || word == "inf") return word == "nan" ? NAN : INFINITY;
      return word;  // a bare word: dtype names
    }
    Number n = number_token();
    if (n.is_int) return n.integer;
    return n.value;
  }

  std::pair<TensorType, std::string> tensor_type() {
    std::string dt = identifier();
    TensorType t;
    try {
      t.dtype = dtype_from_name(dt);
    } catch (const Error& e) {
      fail(e.what());
    }
    expect('[');
    if (!accept(']')) {
      do {
        Number n = number_token();
        if (!n.is_int) fail("a dimension must be an integer");
        t.shape.push_back(n.integer);
      } while (accept(','));
      expect(']');
    }
    std::string layout;
    if (peek() == '{' && std::isalpha(static_cast<unsigned char>(peek(1)))) {
      get();
      while (peek() != '}' && peek() != '\0') layout += get();
      expect('}');
    }
    return {t, layout};
  }

  // A number as written: integers keep their exact value (a double cannot hold every int64).
  struct Number {
    double value = 0;
    bool is_int = false;
    int64_t integer = 0;  // when is_int
  };
  double number() { return number_token().value; }
  Number number_token() {
    skip_space();
    size_t start = pos_;
    if (peek() == '-' || peek() == '+') get();
    if (text_.substr(pos_, 3) == "inf") { pos_ += 3; return {text_[start] == '-' ? -INFINITY : INFINITY}; }
    if (text_.substr(pos_, 3) == "nan") { pos_ += 3; return {NAN}; }
    bool is_int = true;
    while (std::isdigit(static_cast<unsigned char>(peek())) || peek() == '.' || peek() == 'e' || peek() == 'E' ||
           ((peek() == '-' || peek() == '+') && (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E'))) {
      if (!std::isdigit(static_cast<unsigned char>(peek()))) is_int = false;
      get();
    }
    std::string tok(text_.substr(start, pos_ - start));
    if (tok.empty() || tok == "-" || tok == "+") fail("expected a number");
    try {
      if (is_int) {
        int64_t v = std::stoll(tok);
        // "-0" is a float constant's negative zero (what number_text prints for one): the integer
        // has no sign to keep, the value must.
        return {v == 0 && tok[0] == '-' ? -0.0 : static_cast<double>(v), true, v};
      }
      return {std::stod(tok)};
    } catch (const std::exception&) {
      fail("bad number '" + tok + "'");
    }
  }

  std::string string_literal() {
    expect('"');
    std::string s;
    while (peek() != '"') {
      if (peek() == '\0' || peek() == '\n') fail("unterminated string");
      if (peek() == '\\') get();
      s += get();
    }
    get();
    return s;
  }

  std::string value_name() {
    expect('%');
    return raw_name();
  }
  std::string raw_name() {
    if (peek() == '"') return string_literal();
    std::string s;
    while (is_name_char(peek())) s += get();
    if (s.empty()) fail("expected a name");
    return s;
  }
  std::string identifier() {
    skip_space();
    std::string s;
    while (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_') s += get();
    if (s.empty()) fail(std::string("expected a word, got '") + (peek() ? std::string(1, peek()) : "end of text") + "'");
    return s;
  }

  void define(const std::string& name, ValueId id) {
    if (!names_.emplace(name, id).second) fail("value '%" + name + "' is defined twice");
  }
  ValueId use(const std::string& name) {
    auto it = names_.find(name);
    if (it == names_.end()) fail("value '%" + name + "' is used before it is defined");
    return it->second;
  }

  void skip_space() {
    while (true) {
      char c = peek();
      if (c == '\n') ++line_;
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') { ++pos_; continue; }
      if (c == '#') { while (peek() != '\n' && peek() != '\0') ++pos_; continue; }
      break;
    }
  }
  void skip_space_inline() {
    while (peek() == ' ' || peek() == '\t') ++pos_;
  }
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  char get() { return pos_ < text_.size() ? text_[pos_++] : '\0'; }
  bool accept(char c) {
    skip_space();
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!accept(c))
      fail(std::string("expected '") + c + "', got '" + (peek() ? std::string(1, peek()) : "end of text") + "'");
  }
  bool peek_word(std::string_view w) {
    skip_space();
    return text_.substr(pos_, w.size()) == w && !std::isalnum(static_cast<unsigned char>(peek(w.size())));
  }
  void expect_word(std::string_view w) {
    if (!peek_word(w)) fail("expected '" + std::string(w) + "'");
    pos_ += w.size();
  }
  [[noreturn]] void fail(const std::string& why) const { throw Error("line " + std::to_string(line_) + ": " + why); }

  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  std::unordered_map<std::string, ValueId> names_;
  std::vector<std::pair<ValueId, TensorType>> written_types_;
};

}  // namespace

Graph parse_graph(std::string_view text) { return Parser(text).parse(); }

}  // namespace tessel
