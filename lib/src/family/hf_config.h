// A Hugging Face config.json as the model families read it (private to
// lib/src/family): every field is fetched through a typed accessor that checks
// its type and range, as transformers' configuration classes refuse them, so a
// folder that lies fails with one line naming the field and the file
// (Exit::config) instead of being silently mapped. A key set to null means
// "unset", as in the configuration classes.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace attn::family {

using nlohmann::json;

class HfConfig {
 public:
  // `j` the object, `file` the config.json (messages), `path` the object's
  // place in it ("" at the top, "attn_config." inside MPT's nested object).
  HfConfig(const json& j, std::string file, std::string path = "");

  const json& raw() const { return *j_; }
  const std::string& file() const { return file_; }
  // "DIR/config.json: \"rope_theta\"" (the field as the file spells it).
  std::string name(const std::string& key) const;
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;

  bool has(const char* key) const;  // present and not null
  // The first of `keys` that is set (families spell sizes differently), or nullptr.
  const char* first_set(std::initializer_list<const char*> keys) const;

  // Each: nullopt when unset; Exit::config naming the field when set to a
  // value of the wrong type or out of range. Integers accept 8.0, not 8.5,
  // "8" or true (as attn-run's own config).
  std::optional<std::int64_t> integer(const char* key, std::int64_t min, std::int64_t max) const;
  std::optional<double> number(const char* key, double min, bool min_open, double max) const;
  std::optional<bool> boolean(const char* key) const;
  std::optional<std::string> string(const char* key) const;
  // An object (nullopt when unset): its accessor names fields "key.field".
  std::optional<HfConfig> object(const char* key) const;
  // An array of strings, or of integers in [min, max].
  std::optional<std::vector<std::string>> strings(const char* key) const;
  std::optional<std::vector<std::int64_t>> integers(const char* key, std::int64_t min,
                                                    std::int64_t max) const;

  // The same with a fallback for unset keys.
  std::int64_t integer_or(const char* key, std::int64_t min, std::int64_t max,
                          std::int64_t fallback) const {
    return integer(key, min, max).value_or(fallback);
  }
  double positive_or(const char* key, double fallback) const {
    return number(key, 0.0, true, 1e300).value_or(fallback);
  }
  bool boolean_or(const char* key, bool fallback) const { return boolean(key).value_or(fallback); }

 private:
  std::string found(const json& v) const;  // "\"10000\" (a string)"
  std::int64_t check_integer(const json& v, const std::string& key, std::int64_t min,
                             std::int64_t max) const;
  const json* j_;
  std::string file_, path_;
};

// Reads DIR/config.json: at most 1 MiB, valid JSON, an object; a path that is
// a device, a FIFO or a folder is named as what it is. Exit::no_input when
// missing, Exit::config otherwise.
json read_config_json(const std::string& file);

}  // namespace attn::family
