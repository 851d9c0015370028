// Private to the config sources: the shape of a row of the key table
// (config/keys.cpp) and the makers of the usual rows. A row says what a key
// expects, where its value lands, how it is read and checked, and how run.json
// writes it back; the table of an object is the one list of its keys.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "config/internal.h"
#include "config/json.h"

namespace attn::config_detail {

// The known keys of each checked object, by path ("" = top level, "rope.scaling").
using KeyLists = std::map<std::string, std::vector<std::string>>;

// One key of a config object whose values land in a T: Config for the top
// level (and the objects that land in it: init, output), a spec struct for
// the others (RopeSpec for "rope").
template <class T>
struct Key {
  const char* name;
  // The type and range, as messages say what was expected ("an integer > 0").
  const char* expects;
  // Reads a value that is present into `t` (`c` is the whole config: its
  // folder, its flags of what was given). `at` names the key in messages
  // ("<file>: rope.theta"). Empty: read before the table (model, layer).
  std::function<void(Config& c, T& t, const json& v, const std::string& at)> read;
  // Puts the resolved value into run.json's object `out`. Empty: not written.
  std::function<void(const Config& c, const T& t, json& out)> write;
  // A key whose value is an object: its table's keys into `lists` at `path`.
  std::function<void(const std::string& path, KeyLists& lists)> fields = nullptr;
  // Missing: "<at>: required key missing (<expects>)".
  bool required = false;
};

template <class T>
using Keys = std::vector<Key<T>>;

// How each key of an object is named in messages.
using NameOf = std::function<std::string(const std::string& key)>;

// The keys of `o` that the table lists, in table order (a missing required
// key fails at its row).
template <class T>
void read_keys(const Keys<T>& keys, Config& c, T& t, const json& o, const NameOf& name) {
  for (const Key<T>& k : keys) {
    if (!o.contains(k.name)) {
      if (k.required) bad(name(k.name), std::string("required key missing (") + k.expects + ")");
      continue;
    }
    if (k.read) k.read(c, t, o.at(k.name), name(k.name));
  }
}

// The fields of a nested object, named "<at>.<field>".
template <class T>
void read_fields(const Keys<T>& keys, Config& c, T& t, const json& o, const std::string& at) {
  read_keys(keys, c, t, o, [&](const std::string& k) { return at + "." + k; });
}

// run.json's object for `t`: every key with a writer.
template <class T>
json write_keys(const Keys<T>& keys, const Config& c, const T& t) {
  json out = json::object();
  for (const Key<T>& k : keys)
    if (k.write) k.write(c, t, out);
  return out;
}

// `keys`' names at `path`, and those of their objects below it.
template <class T>
void list_keys(const Keys<T>& keys, const std::string& path, KeyLists& lists) {
  std::vector<std::string>& names = lists[path];
  for (const Key<T>& k : keys) names.emplace_back(k.name);
  for (const Key<T>& k : keys)
    if (k.fields) k.fields(path.empty() ? k.name : path + "." + k.name, lists);
}

// ---- where a value lands ----

// A member of T.
template <class T, class V>
struct Member {
  using Target = T;
  V T::*m;
  V& operator()(T& t) const { return t.*m; }
  const V& operator()(const T& t) const { return t.*m; }
};
template <class T, class V>
Member<T, V> in(V T::*m) {
  return {m};
}

// A member of the config's AttentionSpec (Config::spec).
template <class V>
struct SpecMember {
  using Target = Config;
  V AttentionSpec::*m;
  V& operator()(Config& c) const { return c.spec.*m; }
  const V& operator()(const Config& c) const { return c.spec.*m; }
};
template <class V>
SpecMember<V> in_spec(V AttentionSpec::*m) {
  return {m};
}

// ---- the usual rows ----

// The type of the value a row's `at` reaches.
template <class At>
using ValueOf =
    std::decay_t<decltype(std::declval<const At&>()(std::declval<typename At::Target&>()))>;

// X itself, in a parameter that takes no part in deducing the row's types.
template <class X>
struct Same {
  using type = X;
};

// A value as run.json writes it: none is null.
template <class V>
json json_of(const V& v) {
  return json(v);
}
template <class V>
json json_of(const std::optional<V>& v) {
  return v ? json(*v) : json(nullptr);
}

// Written back as held, under the key's name.
template <class At>
auto as_is(const char* name, At at) {
  return [name, at](const Config&, const typename At::Target& t, json& out) {
    out[name] = json_of(at(t));
  };
}

// A value read by `get` (cj::get_int, get_number, get_bool, get_string),
// then `check(value, v, at)` when given; `given`, a flag of the config, is
// set when the key is present.
template <class At, class Get>
Key<typename At::Target> scalar(const char* name, const char* expects, At at, Get get,
                                bool Config::*given = nullptr) {
  using T = typename At::Target;
  return {name, expects,
          [at, get, given](Config& c, T& t, const json& v, const std::string& n) {
            at(t) = get(v, n);
            if (given) c.*given = true;
          },
          as_is(name, at)};
}

template <class At>
Key<typename At::Target> flag(const char* name, At at, bool Config::*given = nullptr) {
  return scalar(name, "true or false", at, config_json::get_bool, given);
}
template <class At>
Key<typename At::Target> integer(const char* name, At at, bool Config::*given = nullptr) {
  return scalar(name, "an integer", at, config_json::get_int, given);
}
template <class At>
Key<typename At::Target> number(const char* name, At at, bool Config::*given = nullptr) {
  return scalar(name, "a number", at, config_json::get_number, given);
}
template <class At>
Key<typename At::Target> text(const char* name, At at, bool Config::*given = nullptr) {
  return scalar(name, "a string", at, config_json::get_string, given);
}

// A number > 0 ("expected a number > 0, found ...").
double positive_number(const json& v, const std::string& at);
// An integer > 0 ("expected an integer > 0, found ...").
std::int64_t positive_integer(const json& v, const std::string& at);

template <class At>
Key<typename At::Target> positive(const char* name, At at, bool Config::*given = nullptr) {
  return scalar(name, "a number > 0", at, positive_number, given);
}
template <class At>
Key<typename At::Target> positive_int(const char* name, At at, bool Config::*given = nullptr) {
  return scalar(name, "an integer > 0", at, positive_integer, given);
}

// One of a few strings, each standing for a value V; anything else:
// "expected <expects>, found <the string>". run.json writes the string back.
template <class At>
Key<typename At::Target> choice(const char* name, const char* expects, At at,
                                std::vector<std::pair<const char*, ValueOf<At>>> options) {
  using T = typename At::Target;
  return {name, expects,
          [at, options, expects](Config&, T& t, const json& v, const std::string& n) {
            const std::string s = config_json::get_string(v, n);
            for (const auto& [word, value] : options)
              if (s == word) {
                at(t) = value;
                return;
              }
            bad(n, std::string("expected ") + expects + ", found " + config_json::quote(s));
          },
          [name, at, options](const Config&, const T& t, json& out) {
            for (const auto& [word, value] : options)
              if (at(t) == value) out[name] = word;
          }};
}

// A key whose value is an object of `keys` or null (none), landing in an
// optional S: "expected <expects>, found ..." for anything else; `after`
// checks the fields against each other. run.json: the object, or null.
template <class At, class S>
Key<Config> object(
    const char* name, const char* expects, At at, const Keys<S>& (*keys)(),
    typename Same<void (*)(S& s, const json& o, const std::string& at)>::type after = nullptr) {
  return {name, expects,
          [at, keys, after, expects](Config& c, Config&, const json& v, const std::string& n) {
            at(c).reset();
            if (v.is_null()) return;
            if (!v.is_object())
              bad(n, std::string("expected ") + expects + ", found " + config_json::describe(v));
            S s;
            read_fields(keys(), c, s, v, n);
            if (after) after(s, v, n);
            at(c) = std::move(s);
          },
          [name, at, keys](const Config& c, const Config&, json& out) {
            out[name] = at(c) ? write_keys(keys(), c, *at(c)) : json(nullptr);
          },
          [keys](const std::string& path, KeyLists& lists) { list_keys(keys(), path, lists); }};
}

// ---- the objects' tables (config/object_keys.cpp) ----
const Keys<Config>& init_keys();
const Keys<Config>& output_keys();
const Keys<RopeScaling>& rope_scaling_keys();
const Keys<RopeSpec>& rope_keys();
const Keys<AlibiSpec>& alibi_keys();
const Keys<QkNormSpec>& qk_norm_keys();
const Keys<RelativeBiasSpec>& relative_bias_keys();
const Keys<AttnTemperature>& attn_temperature_keys();
const Keys<VNormSpec>& v_norm_keys();
const Keys<DisentangledSpec>& disentangled_keys();
const Keys<MlaSpec>& mla_keys();
const Keys<ResidualNormSpec>& residual_norm_keys();
const Keys<InputNormSpec>& input_norm_keys();
const Keys<EmbeddingSpec>& embedding_keys();
void check_embedding(EmbeddingSpec& e, const json& o, const std::string& at);

}  // namespace attn::config_detail
