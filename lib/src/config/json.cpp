#include "config/json.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "attn/error.h"
#include "attn/spelling.h"

namespace attn::config_json {
namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw Error(Exit::config, name + ": " + what);
}

// One open object or array while parsing: where we are inside it (for key
// paths in messages) and, for objects, the keys seen so far (duplicates).
struct Frame {
  bool is_object = false;
  std::string key;        // object: the key whose value is being parsed
  std::size_t index = 0;  // array: index of the element being parsed
  std::set<std::string> keys;
};

std::string component(const Frame& f, bool first) {
  if (!f.is_object) return "[" + std::to_string(f.index) + "]";
  // Keys the user typed may hold anything (newlines, quotes): plain names as
  // they are, the rest quoted so a message stays one readable line.
  const bool plain =
      !f.key.empty() && f.key.size() <= 60 && std::all_of(f.key.begin(), f.key.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
      });
  if (!plain) return "[" + quote(f.key) + "]";
  return first ? f.key : "." + f.key;
}

// "input[1][2]", "output.dir": the path of frames [0, n).
std::string path_of(const std::vector<Frame>& frames, std::size_t n) {
  std::string p;
  for (std::size_t i = 0; i < n; ++i) p += component(frames[i], i == 0);
  return p;
}

// nlohmann's what(): "[json.exception.parse_error.101] parse error at line 3,
// column 5: syntax error while parsing object - unexpected '}'; ..."
std::string syntax_message(const std::string& file, const std::string& what) {
  const auto at = what.find("at line ");
  if (at == std::string::npos) {
    const auto close = what.find("] ");
    return file +
           ": JSON syntax error: " + (close == std::string::npos ? what : what.substr(close + 2));
  }
  const auto colon = what.find(": ", at);
  std::string where = what.substr(at, colon == std::string::npos ? std::string::npos : colon - at);
  std::string rest = colon == std::string::npos ? "" : what.substr(colon + 2);
  const std::string prefix = "syntax error ";
  if (rest.compare(0, prefix.size(), prefix) == 0) rest = rest.substr(prefix.size());
  return file + ": JSON syntax error " + where + (rest.empty() ? "" : ": " + rest);
}

// "" when `key` is one of `names`; otherwise the message for an unknown key
// at `path` (the foreign vocabulary's, else the nearest known key).
std::string unknown_key(const std::string& path, const std::string& parent, const std::string& key,
                        const std::vector<std::string>& names, const ForeignKey& foreign) {
  if (std::find(names.begin(), names.end(), key) != names.end()) return "";
  if (foreign) {
    const std::string why = foreign(parent, key);
    if (!why.empty()) return "key " + quote(path) + ": " + why;
  }
  const auto [best, dist] = nearest_name(key, names);
  std::string msg = "key " + quote(path) + ": unknown key; did you mean " + quote(best) + "?";
  if (!close_enough(best, dist)) {
    msg += " (known keys:";
    for (const auto& n : names) msg += " " + n;
    msg += ")";
  }
  return msg;
}

// Keys of the objects at known paths, depth first (check_keys).
void check_object(const json& j, const std::string& path, const std::string& file,
                  const KnownKeys& known, const ForeignKey& foreign) {
  const auto* names = known(path);
  if (!names || !j.is_object()) return;
  for (const auto& [key, value] : j.items()) {
    const std::string child = path.empty() ? key : path + "." + key;
    const std::string why = unknown_key(child, path, key, *names, foreign);
    if (!why.empty()) fail(file, why);
    if (value.is_object()) check_object(value, child, file, known, foreign);
  }
}

}  // namespace

std::string quote(const std::string& s) {
  const bool cut = s.size() > 60;
  std::string q =
      json(cut ? s.substr(0, 60) : s).dump(-1, ' ', false, json::error_handler_t::replace);
  if (cut) q.insert(q.size() - 1, "...");
  return q;
}

std::string describe(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return std::string("boolean ") + (v.get<bool>() ? "true" : "false");
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "number " + v.dump();
    case json::value_t::string:
      return "string " + quote(v.get_ref<const std::string&>());
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return v.type_name();
  }
}

json parse_strict(const std::string& text, const std::string& file, const KnownKeys& known,
                  const ForeignKey& foreign) {
  std::vector<Frame> frames;

  auto open = [&](bool is_object) {
    if (static_cast<int>(frames.size()) >= kMaxDepth) {
      std::string where = path_of(frames, frames.size());
      fail(file, (where.empty() ? "" : where + ": ") + "JSON nested deeper than " +
                     std::to_string(kMaxDepth) + " levels");
    }
    Frame f;
    f.is_object = is_object;
    frames.push_back(std::move(f));
  };
  // An element of an array finished: the next one has the next index.
  auto element_done = [&]() {
    if (!frames.empty() && !frames.back().is_object) ++frames.back().index;
  };

  json::parser_callback_t cb = [&](int, json::parse_event_t event, json& parsed) -> bool {
    switch (event) {
      case json::parse_event_t::object_start:
        open(true);
        break;
      case json::parse_event_t::array_start:
        open(false);
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames.pop_back();
        element_done();
        break;
      case json::parse_event_t::value:
        element_done();
        break;
      case json::parse_event_t::key: {
        Frame& top = frames.back();
        const std::string& key = parsed.get_ref<const std::string&>();
        const std::string parent = path_of(frames, frames.size() - 1);
        const std::string path = parent.empty() ? key : parent + "." + key;
        // nlohmann keeps the last of two equal keys silently; a config that
        // says hidden_size twice is a mistake to show, not to guess at.
        if (!top.keys.insert(key).second)
          fail(file, "key " + quote(path) + ": duplicate key (each key may appear once)");
        top.key = key;
        if (known) {
          if (const auto* names = known(parent)) {
            const std::string why = unknown_key(path, parent, key, *names, foreign);
            if (!why.empty()) fail(file, why);
          }
        }
        break;
      }
    }
    return true;
  };

  try {
    return json::parse(text, cb, /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const json::parse_error& e) {
    throw Error(Exit::config, syntax_message(file, e.what()));
  } catch (const json::out_of_range& e) {
    // 1e400: nlohmann refuses a float that overflows a double (error 406)
    // without a position; the frames still say whose value it was.
    const std::string where = path_of(frames, frames.size());
    fail(file, (where.empty() ? "" : where + ": ") + "number out of range (" +
                   std::string(e.what()).substr(std::string(e.what()).find("] ") + 2) + ")");
  } catch (const json::exception& e) {
    fail(file, std::string("JSON error: ") + e.what());
  }
}

void check_keys(const json& root, const std::string& file, const KnownKeys& known,
                const ForeignKey& foreign) {
  check_object(root, "", file, known, foreign);
}

std::int64_t get_int(const json& v, const std::string& name) {
  constexpr double kExact = 9007199254740992.0;  // 2^53: doubles are exact integers below
  if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<std::int64_t>();
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(INT64_MAX)) fail(name, "integer out of range: " + v.dump());
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || std::fabs(d) > kExact) fail(name, "integer out of range: " + v.dump());
    if (d != std::floor(d)) fail(name, "expected an integer, found " + describe(v));
    return static_cast<std::int64_t>(d);
  }
  fail(name, "expected an integer, found " + describe(v));
}

std::uint64_t get_uint(const json& v, const std::string& name) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  const std::int64_t i = get_int(v, name);
  if (i < 0) fail(name, "expected an integer >= 0, found " + describe(v));
  return static_cast<std::uint64_t>(i);
}

double get_number(const json& v, const std::string& name) {
  if (!v.is_number()) fail(name, "expected a number, found " + describe(v));
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(name, "number out of range: " + v.dump());
  return d;
}

bool get_bool(const json& v, const std::string& name) {
  if (!v.is_boolean()) fail(name, "expected true or false, found " + describe(v));
  return v.get<bool>();
}

std::string get_string(const json& v, const std::string& name) {
  if (!v.is_string()) fail(name, "expected a string, found " + describe(v));
  return v.get<std::string>();
}

const json& get_object(const json& v, const std::string& name) {
  if (!v.is_object()) fail(name, "expected an object, found " + describe(v));
  return v;
}

}  // namespace attn::config_json
