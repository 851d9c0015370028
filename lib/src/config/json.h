// Private to config.cpp: a strict JSON front end (duplicate keys, nesting
// depth, unknown keys with a suggestion, syntax errors with line and column)
// and typed readers whose messages name the key path and what was found.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attn::config_json {

// Deepest nesting of objects and arrays accepted: a config needs 4 (the top
// object holding a (B, S, C) input); the rest is slack, and the cap keeps a
// hostile "[[[[..." from costing more than a few frames.
constexpr int kMaxDepth = 16;

// Known keys of the object at `path` ("" = top level, "init", "output",
// "rope", "rope.scaling", ...), or
// nullptr when that object's keys are not checked while parsing.
using KnownKeys = std::function<const std::vector<std::string>*(const std::string& path)>;

// For an unknown key at `path`: a message that replaces the spelling
// suggestion ("" = suggest as usual). Used for keys of Hugging Face's or
// torch's vocabulary, which mean an attn-run key spelled differently.
using ForeignKey = std::function<std::string(const std::string& path, const std::string& key)>;

// Parse `text` strictly. Errors: Exit::config, "<file>: ...". A null
// `known` checks no keys while parsing (check_keys does, afterwards).
nlohmann::json parse_strict(const std::string& text, const std::string& file,
                            const KnownKeys& known, const ForeignKey& foreign = nullptr);

// The keys of a parsed value (and of its objects at paths `known` lists):
// the same unknown-key errors as parse_strict gives while parsing. nlohmann
// keeps an object's keys sorted, so of several unknown keys the first in
// alphabetical order is named.
void check_keys(const nlohmann::json& root, const std::string& file, const KnownKeys& known,
                const ForeignKey& foreign = nullptr);

// "number 3", "string \"8\"", "boolean true", "null", "an array", "an object".
std::string describe(const nlohmann::json& v);

// A key or string shown in a message: JSON-escaped, quoted, cut at 60 chars.
std::string quote(const std::string& s);

// Typed readers. `name` is "<file>: <key path>" and starts every message.
// Integers: JSON integers, or numbers with an integral value (8.0, like JSON
// Schema's "integer"); 8.5, 1e400, "8" and true are errors, never coerced.
std::int64_t get_int(const nlohmann::json& v, const std::string& name);
std::uint64_t get_uint(const nlohmann::json& v, const std::string& name);
double get_number(const nlohmann::json& v, const std::string& name);
bool get_bool(const nlohmann::json& v, const std::string& name);
std::string get_string(const nlohmann::json& v, const std::string& name);
const nlohmann::json& get_object(const nlohmann::json& v, const std::string& name);

}  // namespace attn::config_json
