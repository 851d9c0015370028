// Typed, checked access to a Hugging Face config.json (hf_config.h).
#include "family/hf_config.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/files.h"

namespace attn::family {

namespace {

constexpr std::size_t kMaxConfigJson = 1u << 20;  // as attn-run's own configs

const char* type_name(const json& v) {
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  if (v.is_number()) return "a number";
  return "null";
}

}  // namespace

HfConfig::HfConfig(const json& j, std::string file, std::string path)
    : j_(&j), file_(std::move(file)), path_(std::move(path)) {}

std::string HfConfig::name(const std::string& key) const {
  return file_ + ": \"" + printable(path_ + key) + "\"";
}

void HfConfig::fail(const std::string& key, const std::string& what) const {
  throw Error(Exit::config, name(key) + ": " + what);
}

std::string HfConfig::found(const json& v) const {
  std::string text = v.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  text = printable(text);
  if (v.is_number() && !v.is_boolean()) return text;
  return text + " (" + type_name(v) + ")";
}

bool HfConfig::has(const char* key) const {
  return j_->is_object() && j_->contains(key) && !(*j_)[key].is_null();
}

const char* HfConfig::first_set(std::initializer_list<const char*> keys) const {
  for (const char* k : keys)
    if (has(k)) return k;
  return nullptr;
}

std::int64_t HfConfig::check_integer(const json& v, const std::string& key, std::int64_t min,
                                     std::int64_t max) const {
  const std::string range = max >= (std::int64_t(1) << 40)
                                ? ">= " + std::to_string(min)
                                : "in " + std::to_string(min) + ".." + std::to_string(max);
  std::int64_t n = 0;
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(INT64_MAX)) {
    fail(key, "expected an integer " + range + ", found " + found(v));
  } else if (v.is_number_integer()) {
    n = v.get<std::int64_t>();
  } else if (v.is_number_float() && std::isfinite(v.get<double>()) &&
             v.get<double>() == std::floor(v.get<double>()) && std::fabs(v.get<double>()) < 9e15) {
    n = static_cast<std::int64_t>(v.get<double>());
  } else {
    fail(key, "expected an integer " + range + ", found " + found(v));
  }
  if (n < min || n > max) fail(key, "expected an integer " + range + ", found " + found(v));
  return n;
}

std::optional<std::int64_t> HfConfig::integer(const char* key, std::int64_t min,
                                              std::int64_t max) const {
  if (!has(key)) return std::nullopt;
  return check_integer((*j_)[key], key, min, max);
}

std::optional<double> HfConfig::number(const char* key, double min, bool min_open,
                                       double max) const {
  if (!has(key)) return std::nullopt;
  const json& v = (*j_)[key];
  const std::string range = std::string(min_open ? "> " : ">= ") + json(min).dump() +
                            (max < 1e300 ? " and <= " + json(max).dump() : "");
  if (!v.is_number() || v.is_boolean())
    fail(key, "expected a number " + range + ", found " + found(v));
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < min || (min_open && x == min) || x > max)
    fail(key, "expected a number " + range + ", found " + found(v));
  return x;
}

std::optional<bool> HfConfig::boolean(const char* key) const {
  if (!has(key)) return std::nullopt;
  const json& v = (*j_)[key];
  if (!v.is_boolean()) fail(key, "expected true or false, found " + found(v));
  return v.get<bool>();
}

std::optional<std::string> HfConfig::string(const char* key) const {
  if (!has(key)) return std::nullopt;
  const json& v = (*j_)[key];
  if (!v.is_string()) fail(key, "expected a string, found " + found(v));
  return v.get<std::string>();
}

std::optional<HfConfig> HfConfig::object(const char* key) const {
  if (!has(key)) return std::nullopt;
  const json& v = (*j_)[key];
  if (!v.is_object()) fail(key, "expected an object, found " + found(v));
  return HfConfig(v, file_, path_ + key + ".");
}

std::optional<std::vector<std::string>> HfConfig::strings(const char* key) const {
  if (!has(key)) return std::nullopt;
  const json& v = (*j_)[key];
  if (!v.is_array()) fail(key, "expected an array of strings, found " + found(v));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      fail(std::string(key) + "[" + std::to_string(i) + "]",
           "expected a string, found " + found(v[i]));
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

std::optional<std::vector<std::int64_t>> HfConfig::integers(const char* key, std::int64_t min,
                                                            std::int64_t max) const {
  if (!has(key)) return std::nullopt;
  const json& v = (*j_)[key];
  if (!v.is_array()) fail(key, "expected an array of integers, found " + found(v));
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < v.size(); ++i)
    out.push_back(check_integer(v[i], std::string(key) + "[" + std::to_string(i) + "]", min, max));
  return out;
}

json read_config_json(const std::string& file) {
  struct stat st;
  if (::lstat(file.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR))
    throw Error(Exit::no_input, printable(file) + ": no config.json in the model folder");
  std::vector<std::uint8_t> bytes;
  try {
    bytes = read_file(file, kMaxConfigJson);  // names a folder, device or FIFO as what it is
  } catch (const Error& e) {
    if (e.code() != Exit::data) throw;
    throw Error(Exit::config, printable(file) + ": larger than 1 MiB, not a config.json");
  }
  json j;
  try {
    j = json::parse(bytes.begin(), bytes.end());
  } catch (const json::parse_error& e) {
    throw Error(Exit::config, printable(file) + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!j.is_object())
    throw Error(Exit::config,
                printable(file) + ": expected a JSON object, found " + std::string(type_name(j)));
  return j;
}

}  // namespace attn::family
