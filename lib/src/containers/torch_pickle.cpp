// A pickle interpreter for torch.save's data.pkl that executes nothing
// (torch_pickle.h). Python's pickletools documents every opcode; torch.save
// (protocol 2 by default, 3-5 when asked) writes the subset handled here.
// Objects live in an arena and refer to each other by index, so a pickle that
// builds cycles through the memo cannot leak or recurse without bound.
#include "containers/torch_pickle.h"

#include <cstring>
#include <limits>
#include <set>
#include <unordered_map>

#include "attn/error.h"

namespace attn::detail {

namespace {

enum class Kind : std::uint8_t {
  none,
  boolean,
  integer,
  floating,
  string,
  tuple,
  list,
  dict,
  global,
  storage,
  tensor
};

struct Obj {
  Kind kind = Kind::none;
  std::int64_t i = 0;              // integer, boolean
  std::string s;                   // string; global's dotted name; storage key
  std::vector<std::size_t> items;  // tuple/list values; dict keys and values interleaved
  std::size_t tensor = 0;          // tensor: index into the records
  DType dtype = DType::f4;         // storage
  std::uint64_t numel = 0;         // storage
  std::string problem;             // storage: what is wrong with it, told by its tensor's key
};

Obj of(Kind k) {
  Obj o;
  o.kind = k;
  return o;
}

// The globals a state dict needs, and what each rebuilds.
enum class Global {
  ordered_dict,
  rebuild_tensor,
  rebuild_parameter,
  rebuild_parameter_state,
  storage
};

bool storage_dtype(const std::string& g, DType* t) {
  static const std::pair<const char*, DType> kTypes[] = {
      {"torch.FloatStorage", DType::f4}, {"torch.DoubleStorage", DType::f8},
      {"torch.HalfStorage", DType::f2},  {"torch.BFloat16Storage", DType::bf16},
      {"torch.LongStorage", DType::i8},  {"torch.IntStorage", DType::i4},
      {"torch.ShortStorage", DType::i2}, {"torch.CharStorage", DType::i1},
      {"torch.ByteStorage", DType::u1},  {"torch.BoolStorage", DType::b1}};
  for (const auto& [n, d] : kTypes)
    if (g == n) return *t = d, true;
  return false;
}

bool allowed_global(const std::string& g, Global* what) {
  DType unused;
  if (g == "collections.OrderedDict") return *what = Global::ordered_dict, true;
  if (g == "torch._utils._rebuild_tensor_v2") return *what = Global::rebuild_tensor, true;
  if (g == "torch._utils._rebuild_parameter") return *what = Global::rebuild_parameter, true;
  if (g == "torch._utils._rebuild_parameter_with_state")
    return *what = Global::rebuild_parameter_state, true;
  if (storage_dtype(g, &unused)) return *what = Global::storage, true;
  return false;
}

class Machine {
 public:
  Machine(const std::uint8_t* p, std::size_t n, const std::string& name)
      : p_(p), n_(n), name_(name) {}

  std::size_t run();  // the object STOP returns
  std::vector<TorchTensorRecord> records;
  // Per record: "" or what is wrong with its view or storage ("... (data.pkl
  // at byte N)"). Told once the tensor has its key (the pickle names a tensor
  // only after building it), so the message says which tensor.
  std::vector<std::string> problems;
  std::vector<Obj> arena;

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(Exit::data, name_ + ": data.pkl at byte " + std::to_string(op_at_) + ": " + what);
  }
  std::string at_byte(const std::string& what) const {
    return what + " (data.pkl at byte " + std::to_string(op_at_) + ")";
  }
  const std::uint8_t* take(std::size_t k) {
    if (k > n_ - pos_) fail("truncated");
    const std::uint8_t* at = p_ + pos_;
    pos_ += k;
    return at;
  }
  std::uint64_t le(std::size_t k) {
    const std::uint8_t* b = take(k);
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < k; ++i) v |= std::uint64_t(b[i]) << (8 * i);
    return v;
  }
  std::string line() {  // GLOBAL's "module\n" and "name\n"
    const std::size_t start = pos_;
    while (pos_ < n_ && p_[pos_] != '\n') {
      if (pos_ - start > 256) fail("GLOBAL name longer than 256 bytes");
      ++pos_;
    }
    if (pos_ >= n_) fail("truncated GLOBAL");
    std::string s(reinterpret_cast<const char*>(p_ + start), pos_ - start);
    ++pos_;
    return s;
  }
  std::size_t make(Obj o) {
    if (arena.size() >= kMaxPickleObjects)
      fail("more than " + std::to_string(kMaxPickleObjects) + " objects");
    arena.push_back(std::move(o));
    return arena.size() - 1;
  }
  std::size_t pop() {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back()))
      fail("stack underflow");
    const std::size_t v = stack_.back();
    stack_.pop_back();
    return v;
  }
  std::size_t top() {
    if (stack_.empty()) fail("stack underflow");
    return stack_.back();
  }
  std::vector<std::size_t> pop_mark() {
    if (marks_.empty()) fail("no MARK on the stack");
    const std::size_t m = marks_.back();
    marks_.pop_back();
    std::vector<std::size_t> items(stack_.begin() + std::ptrdiff_t(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  void push_global(const std::string& module, const std::string& qualname);
  void reduce();
  std::size_t rebuild_tensor(const std::vector<std::size_t>& args);
  std::int64_t integer(std::size_t id, const char* what) {
    if (arena[id].kind != Kind::integer) fail(std::string(what) + ": expected an integer");
    return arena[id].i;
  }
  const std::vector<std::size_t>& tuple(std::size_t id, const char* what) {
    if (arena[id].kind != Kind::tuple) fail(std::string(what) + ": expected a tuple");
    return arena[id].items;
  }

  const std::uint8_t* p_;
  std::size_t n_, pos_ = 0, op_at_ = 0;
  const std::string& name_;
  std::vector<std::size_t> stack_, marks_;
  std::unordered_map<std::uint64_t, std::size_t> memo_;
};

void Machine::push_global(const std::string& module, const std::string& qualname) {
  const std::string g = module + "." + qualname;
  Global what;
  if (!allowed_global(g, &what))
    fail("global '" + g +
         "' is not allowed: a checkpoint may rebuild only tensors, storages "
         "and OrderedDict, and nothing in it is executed");
  Obj o;
  o.kind = Kind::global;
  o.s = g;
  stack_.push_back(make(std::move(o)));
}

std::size_t Machine::rebuild_tensor(const std::vector<std::size_t>& a) {
  // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
  //                    backward_hooks[, metadata])
  if (a.size() < 4 || a.size() > 7) fail("_rebuild_tensor_v2: expected 6 or 7 arguments");
  const Obj& st = arena[a[0]];
  if (st.kind != Kind::storage) fail("_rebuild_tensor_v2: expected a storage");
  const std::int64_t offset = integer(a[1], "storage_offset");
  const auto& size = tuple(a[2], "size");
  const auto& stride = tuple(a[3], "stride");
  TorchTensorRecord r;
  r.storage_key = st.s;
  r.dtype = st.dtype;
  r.storage_numel = st.numel;
  const std::string problem = [&]() -> std::string {
    if (!st.problem.empty()) return st.problem;
    if (size.size() != stride.size()) return at_byte("size and stride differ in length");
    if (size.size() > 32) return at_byte("more than 32 dimensions");
    if (offset < 0) return at_byte("negative storage_offset " + std::to_string(offset));
    r.offset = std::uint64_t(offset);
    // Every element's index, offset + sum(i_d * stride_d), must lie in the storage.
    std::uint64_t last = r.offset, count = 1;
    bool empty = false;
    for (std::size_t d = 0; d < size.size(); ++d) {
      const std::int64_t n = integer(size[d], "size"), s = integer(stride[d], "stride");
      if (n < 0 || s < 0)
        return at_byte("negative size or stride (dimension " + std::to_string(d) + ": size " +
                       std::to_string(n) + ", stride " + std::to_string(s) + ")");
      if (n == 0) empty = true;
      r.shape.push_back(std::size_t(n));
      r.stride.push_back(s);
      if (n > 0 && __builtin_mul_overflow(count, std::uint64_t(n), &count))
        return at_byte("element count overflows");
      std::uint64_t extent;
      if (n > 0 && (__builtin_mul_overflow(std::uint64_t(n - 1), std::uint64_t(s), &extent) ||
                    __builtin_add_overflow(last, extent, &last)))
        return at_byte("tensor view overflows");
    }
    if (!empty && last >= r.storage_numel)
      return at_byte("tensor view (storage_offset " + std::to_string(offset) +
                     ") ends at element " + std::to_string(last) + " of a storage of " +
                     std::to_string(r.storage_numel));
    return "";
  }();
  if (!problem.empty()) r = TorchTensorRecord{};  // never used: the problem is told first
  records.push_back(std::move(r));
  problems.push_back(problem);
  Obj o;
  o.kind = Kind::tensor;
  o.tensor = records.size() - 1;
  return make(std::move(o));
}

void Machine::reduce() {
  const std::size_t args_id = pop(), fn_id = pop();
  const std::vector<std::size_t> args = tuple(args_id, "REDUCE arguments");
  if (arena[fn_id].kind != Kind::global) fail("REDUCE of something that is not an allowed global");
  Global what;
  allowed_global(arena[fn_id].s, &what);
  switch (what) {
    case Global::ordered_dict: {
      if (!args.empty()) fail("OrderedDict: expected no arguments");
      Obj o;
      o.kind = Kind::dict;
      stack_.push_back(make(std::move(o)));
      return;
    }
    case Global::rebuild_tensor:
      stack_.push_back(rebuild_tensor(args));
      return;
    case Global::rebuild_parameter:        // (data, requires_grad, backward_hooks)
    case Global::rebuild_parameter_state:  // (..., state)
      if (args.empty() || arena[args[0]].kind != Kind::tensor)
        fail(arena[fn_id].s + ": expected a tensor");
      stack_.push_back(args[0]);
      return;
    case Global::storage:
      fail(arena[fn_id].s + " called directly");
  }
}

std::size_t Machine::run() {
  const auto push = [&](Obj o) { stack_.push_back(make(std::move(o))); };
  const auto push_int = [&](std::int64_t v) {
    Obj o;
    o.kind = Kind::integer;
    o.i = v;
    push(std::move(o));
  };
  const auto push_str = [&](std::size_t len) {
    const std::uint8_t* b = take(len);
    Obj o;
    o.kind = Kind::string;
    o.s.assign(reinterpret_cast<const char*>(b), len);
    push(std::move(o));
  };
  const auto memo_put = [&](std::uint64_t k) {
    if (memo_.size() >= kMaxPickleObjects) fail("memo too large");
    memo_[k] = top();
  };
  const auto memo_get = [&](std::uint64_t k) {
    const auto it = memo_.find(k);
    if (it == memo_.end()) fail("memo key " + std::to_string(k) + " was never stored");
    stack_.push_back(it->second);
  };
  while (true) {
    op_at_ = pos_;
    const std::uint8_t op = *take(1);
    switch (op) {
      case 0x80: {  // PROTO
        const std::uint8_t v = *take(1);
        if (v < 2 || v > 5)
          fail("pickle protocol " + std::to_string(v) + " (torch.save writes 2 to 5)");
        break;
      }
      case 0x95:
        take(8);
        break;     // FRAME: a length hint only
      case 'c': {  // GLOBAL
        const std::string module = line();
        push_global(module, line());
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        const std::size_t qn = pop(), mod = pop();
        if (arena[qn].kind != Kind::string || arena[mod].kind != Kind::string)
          fail("STACK_GLOBAL of non-strings");
        push_global(arena[mod].s, arena[qn].s);
        break;
      }
      case 'q':
        memo_put(le(1));
        break;  // BINPUT
      case 'r':
        memo_put(le(4));
        break;  // LONG_BINPUT
      case 0x94:
        memo_put(memo_.size());
        break;  // MEMOIZE
      case 'h':
        memo_get(le(1));
        break;  // BINGET
      case 'j':
        memo_get(le(4));
        break;  // LONG_BINGET
      case '}':
        push(of(Kind::dict));
        break;  // EMPTY_DICT
      case ']':
        push(of(Kind::list));
        break;  // EMPTY_LIST
      case ')':
        push(of(Kind::tuple));
        break;   // EMPTY_TUPLE
      case '(':  // MARK
        if (marks_.size() >= kMaxPickleDepth * 64) fail("too many nested MARKs");
        marks_.push_back(stack_.size());
        break;
      case 't': {  // TUPLE
        Obj o;
        o.kind = Kind::tuple;
        o.items = pop_mark();
        push(std::move(o));
        break;
      }
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1..3
        Obj o;
        o.kind = Kind::tuple;
        o.items.resize(op - 0x84);
        for (std::size_t k = o.items.size(); k-- > 0;) o.items[k] = pop();
        push(std::move(o));
        break;
      }
      case 'X':
        push_str(le(4));
        break;  // BINUNICODE
      case 0x8c:
        push_str(le(1));
        break;  // SHORT_BINUNICODE
      case 0x8d:
        push_str(le(8));
        break;  // BINUNICODE8
      case 'B':
        push_str(le(4));
        break;  // BINBYTES
      case 'C':
        push_str(le(1));
        break;  // SHORT_BINBYTES
      case 0x8e:
        push_str(le(8));
        break;  // BINBYTES8
      case 'J':
        push_int(std::int32_t(std::uint32_t(le(4))));
        break;  // BININT
      case 'K':
        push_int(std::int64_t(le(1)));
        break;  // BININT1
      case 'M':
        push_int(std::int64_t(le(2)));
        break;      // BININT2
      case 0x8a: {  // LONG1
        const std::size_t k = *take(1);
        if (k > 8) fail("integer of " + std::to_string(k) + " bytes");
        std::uint64_t v = k ? le(k) : 0;
        if (k > 0 && k < 8 && (v >> (8 * k - 1)) & 1) v |= ~std::uint64_t(0) << (8 * k);  // sign
        push_int(std::int64_t(v));
        break;
      }
      case 'G': {  // BINFLOAT, big-endian
        const std::uint8_t* b = take(8);
        std::uint64_t bits = 0;
        for (int k = 0; k < 8; ++k) bits = (bits << 8) | b[k];
        Obj o;
        o.kind = Kind::floating;
        std::memcpy(&o.i, &bits, 8);
        push(std::move(o));
        break;
      }
      case 'N':
        push(of(Kind::none));
        break;  // NONE
      case 0x88:
      case 0x89: {  // NEWTRUE, NEWFALSE
        Obj o;
        o.kind = Kind::boolean;
        o.i = op == 0x88;
        push(std::move(o));
        break;
      }
      case 'Q': {  // BINPERSID: ('storage', storage_type, key, location, numel)
        const auto& pid = tuple(pop(), "persistent id");
        if (pid.size() != 5 || arena[pid[0]].kind != Kind::string || arena[pid[0]].s != "storage")
          fail("persistent id is not ('storage', type, key, location, numel)");
        const Obj& type = arena[pid[1]];
        Obj o;
        o.kind = Kind::storage;
        if (type.kind != Kind::global || !storage_dtype(type.s, &o.dtype))
          fail("persistent id names no typed storage");
        if (arena[pid[2]].kind != Kind::string) fail("storage key is not a string");
        o.s = arena[pid[2]].s;
        const std::int64_t numel = integer(pid[4], "storage numel");
        if (numel < 0)
          o.problem = at_byte("negative storage size " + std::to_string(numel));
        else
          o.numel = std::uint64_t(numel);
        push(std::move(o));
        break;
      }
      case 'R':
        reduce();
        break;     // REDUCE
      case 'b': {  // BUILD: state of an OrderedDict (_metadata) or a tensor
        pop();
        const Kind k = arena[top()].kind;
        if (k != Kind::dict && k != Kind::tensor)
          fail("BUILD on an object that is not a dict or tensor");
        break;
      }
      case 's': {  // SETITEM
        const std::size_t v = pop(), k = pop();
        Obj& d = arena[top()];
        if (d.kind != Kind::dict) fail("SETITEM on a non-dict");
        d.items.push_back(k);
        d.items.push_back(v);
        break;
      }
      case 'u': {  // SETITEMS
        std::vector<std::size_t> kv = pop_mark();
        if (kv.size() % 2) fail("SETITEMS with an odd number of items");
        Obj& d = arena[top()];
        if (d.kind != Kind::dict) fail("SETITEMS on a non-dict");
        d.items.insert(d.items.end(), kv.begin(), kv.end());
        break;
      }
      case 'a': {  // APPEND
        const std::size_t v = pop();
        Obj& l = arena[top()];
        if (l.kind != Kind::list) fail("APPEND on a non-list");
        l.items.push_back(v);
        break;
      }
      case 'e': {  // APPENDS
        std::vector<std::size_t> vs = pop_mark();
        Obj& l = arena[top()];
        if (l.kind != Kind::list) fail("APPENDS on a non-list");
        l.items.insert(l.items.end(), vs.begin(), vs.end());
        break;
      }
      case '0':
        pop();
        break;  // POP
      case '1':
        pop_mark();
        break;     // POP_MARK
      case '.': {  // STOP
        const std::size_t result = pop();
        if (!stack_.empty() || !marks_.empty()) fail("objects left on the stack at STOP");
        if (pos_ != n_) fail("bytes after STOP");
        return result;
      }
      default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", op);
        fail(std::string("opcode ") + hex + " is not one torch.save writes");
      }
    }
  }
}

// Tensors under dict `id`, in insertion order, names joined by '.'.
void collect(const Machine& m, std::size_t id, const std::string& prefix, std::size_t depth,
             std::set<std::size_t>& open, std::vector<TorchTensorRecord>& out,
             const std::string& name) {
  if (depth > kMaxPickleDepth)
    throw Error(Exit::data,
                name + ": data.pkl: dicts nested deeper than " + std::to_string(kMaxPickleDepth));
  if (!open.insert(id).second) throw Error(Exit::data, name + ": data.pkl: a dict contains itself");
  const Obj& d = m.arena[id];
  for (std::size_t k = 0; k + 1 < d.items.size(); k += 2) {
    const Obj& key = m.arena[d.items[k]];
    const Obj& val = m.arena[d.items[k + 1]];
    if (key.kind != Kind::string) continue;  // optimizer states keyed by int: not weights
    const std::string full = prefix.empty() ? key.s : prefix + "." + key.s;
    if (val.kind == Kind::tensor) {
      if (!m.problems[val.tensor].empty())
        throw Error(Exit::data, name + ":" + full + ": " + m.problems[val.tensor]);
      TorchTensorRecord r = m.records[val.tensor];
      r.name = full;
      out.push_back(std::move(r));
    } else if (val.kind == Kind::dict) {
      collect(m, d.items[k + 1], full, depth + 1, open, out, name);
    }
  }
  open.erase(id);
}

// The dict holding the weights: the top dict, or its "state_dict" / "model".
std::size_t weights_dict(const Machine& m, std::size_t top) {
  for (const char* wrapper : {"state_dict", "model"}) {
    const Obj& d = m.arena[top];
    for (std::size_t k = 0; k + 1 < d.items.size(); k += 2) {
      const Obj& key = m.arena[d.items[k]];
      if (key.kind == Kind::string && key.s == wrapper &&
          m.arena[d.items[k + 1]].kind == Kind::dict)
        return d.items[k + 1];
    }
  }
  return top;
}

}  // namespace

bool TorchTensorRecord::contiguous() const {
  std::int64_t expect = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && stride[d] != expect) return false;
    expect *= std::int64_t(shape[d]);
  }
  return true;
}

std::vector<TorchTensorRecord> parse_torch_pickle(const std::uint8_t* data, std::size_t size,
                                                  const std::string& name) {
  if (size > kMaxPickleBytes)
    throw Error(Exit::data, name + ": data.pkl of " + std::to_string(size) +
                                " bytes is larger than the " +
                                std::to_string(kMaxPickleBytes >> 20) + " MiB accepted");
  Machine m(data, size, name);
  const std::size_t top = m.run();
  if (m.arena[top].kind != Kind::dict)
    throw Error(Exit::data, name +
                                ": holds no dict of tensors (torch.save of a state_dict or a "
                                "checkpoint dict is expected; save model.state_dict(), not the "
                                "model)");
  std::vector<TorchTensorRecord> out;
  std::set<std::size_t> open;
  collect(m, weights_dict(m, top), "", 0, open, out, name);
  // A bad tensor outside the weights (an optimizer's state, an int key):
  // still refused, as torch.load would, by its place in data.pkl.
  for (const std::string& problem : m.problems)
    if (!problem.empty()) throw Error(Exit::data, name + ": " + problem);
  return out;
}

bool is_legacy_torch_save(const std::uint8_t* head, std::size_t size) {
  // pickle.dump(MAGIC_NUMBER = 0x1950a86a20f9469cfc6c, protocol 2): PROTO 2, LONG1 10 bytes.
  static const std::uint8_t kMagic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c,
                                        0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};
  return size >= sizeof kMagic && std::memcmp(head, kMagic, sizeof kMagic) == 0;
}

}  // namespace attn::detail
