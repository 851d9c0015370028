// A batch's settings, one entry each (run_fingerprint.h).
#include "modes/run_fingerprint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <vector>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/files.h"
#include "attn/saved_tensors.h"
#include "attn/sha256.h"
#include "attn/state_dict.h"

namespace app {
namespace {

constexpr std::size_t kHeadMin = std::size_t(64) << 10;   // bytes hashed at least at the start
constexpr std::size_t kHeadMax = std::size_t(64) << 20;   // of a header, at most
constexpr std::size_t kTailBytes = std::size_t(1) << 20;  // a zip's end: its directory

// `n` bytes of `fd` at `offset` appended to `out` (fewer at the file's end).
void append_bytes(int fd, std::size_t offset, std::size_t n, std::string& out) {
  const std::size_t start = out.size();
  out.resize(start + n);
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, &out[start + got], n - got, off_t(offset + got));
    if (r <= 0) break;
    got += std::size_t(r);
  }
  out.resize(start + got);
}

// The config keys a flag sets too: named by the flag in messages.
const std::map<std::string, std::string>& key_flags() {
  static const std::map<std::string, std::string> m = {{"layout", "--layout"},
                                                       {"model", "--model"},
                                                       {"layer", "--layer"},
                                                       {"attention_mask", "--attention-mask"},
                                                       {"residual_norm", "--with-residual-norm"}};
  return m;
}

std::string config_entry(const std::string& key) {
  const auto flag = key_flags().find(key);
  return flag == key_flags().end() ? "config key \"" + key + "\""
                                   : flag->second + " (config key \"" + key + "\")";
}

// The keys of a config that may hold an array inline instead of a path.
constexpr const char* kInlineKeys[] = {"input",     "padding_mask", "positions", "attention_mask",
                                       "attn_mask", "kv_input",     "key_input", "value_input"};

// The config file's inline arrays (config_to_json writes them as "inline"):
// each one's SHA-256, so an edited array is a changed setting.
void add_inline_arrays(const attn::Config& cfg, nlohmann::json& fp) {
  if (cfg.file.empty() || attn::is_directory(cfg.file)) return;
  std::vector<std::uint8_t> bytes;
  try {
    bytes = attn::read_file(cfg.file, attn::kMaxConfigBytes);
  } catch (const attn::Error&) {
    return;  // a GGUF model's "config" is the model file itself
  }
  const auto j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (!j.is_object()) return;
  for (const char* key : kInlineKeys)
    if (j.contains(key) && j[key].is_array())
      fp[config_entry(key) + " (its inline array)"] = attn::sha256_hex(j[key].dump());
}

// The files the config's path keys name (the same for every input of a batch).
void add_config_files(const attn::Config& cfg, nlohmann::json& fp) {
  const std::pair<const char*, const std::string*> files[] = {
      {"padding_mask", &cfg.padding_mask_path},
      {"positions", &cfg.positions.path},
      {"attention_mask", &cfg.attention_mask.path},
      {"attn_mask", &cfg.attn_mask.path},
      {"kv_input", &cfg.kv_input.path},
      {"key_input", &cfg.key_input.path},
      {"value_input", &cfg.value_input.path}};
  for (const auto& [key, path] : files)
    if (!path->empty() && *path != "-")
      fp["the file of " + config_entry(key)] = file_identity(*path);
}

std::string shown(const nlohmann::json& v) {
  return v.is_null() ? "not given" : attn::printable_prefix(v.dump(), 60);
}

// How a file's identity changed: its size, its time or its header.
std::string file_change(const nlohmann::json& was, const nlohmann::json& now) {
  if (was.value("missing", false) && !now.value("missing", false)) return "it was missing then";
  if (now.value("missing", false)) return "it is missing or unreadable now";
  if (was.value("path", "") != now.value("path", ""))
    return "was " + shown(was.value("path", "")) + ", now " + shown(now.value("path", ""));
  if (was.value("bytes", -1) != now.value("bytes", -1))
    return "its size changed (" + std::to_string(was.value("bytes", std::int64_t(-1))) + " -> " +
           std::to_string(now.value("bytes", std::int64_t(-1))) + " bytes)";
  if (was.value("sha256", "") != now.value("sha256", "")) return "its header changed";
  return "modified since (another modification time)";
}

bool is_identity(const nlohmann::json& v) {
  return v.is_object() && (v.contains("modified_ns") || v.contains("missing"));
}

// One entry that differs, for the message.
std::string difference(const std::string& name, const nlohmann::json& was,
                       const nlohmann::json& now) {
  if (was.is_null() && !now.is_null() && is_identity(now)) return name + ": new";
  if (now.is_null() && is_identity(was)) return name + ": not used now";
  if (is_identity(was) || is_identity(now)) return name + ": " + file_change(was, now);
  const bool hashed = name.find("inline array") != std::string::npos;
  if (hashed) return name + ": changed";
  return name + ": was " + shown(was) + ", now " + shown(now);
}

}  // namespace

nlohmann::json file_identity(const std::string& path, std::size_t header_bytes) {
  nlohmann::json id = {{"path", path}};
  std::size_t size = 0;
  int fd = -1;
  try {
    fd = attn::open_regular_file(path, size);
  } catch (const attn::Error&) {
    id["missing"] = true;
    return id;
  }
  struct stat st {};
  ::fstat(fd, &st);
  id["bytes"] = std::int64_t(st.st_size);
  id["modified_ns"] = std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  std::string sampled;
  append_bytes(fd, 0, std::min(size, std::clamp(header_bytes, kHeadMin, kHeadMax)), sampled);
  if (header_bytes == 0 && size > kHeadMin)  // the end: a zip's directory (each member's CRC)
    append_bytes(fd, size - std::min(size, kTailBytes), std::min(size, kTailBytes), sampled);
  ::close(fd);
  id["sha256"] = attn::sha256_hex(sampled);
  return id;
}

nlohmann::json run_fingerprint(const Options& opt, const attn::Config& cfg,
                               const std::string& weights_source) {
  nlohmann::json fp = nlohmann::json::object();
  // What is written, and how: each flag as given (null when not).
  const auto given = [](const std::string& s) {
    return s.empty() ? nlohmann::json() : nlohmann::json(s);
  };
  fp["--no-attn"] = !cfg.output_attention;
  fp["--average-heads"] = cfg.output_average_heads;
  fp["--heads"] = given(opt.heads_spec);
  fp["--queries"] = given(opt.queries_spec);
  fp["--keys"] = given(opt.keys_spec);
  fp["--top-k"] = opt.top_k ? nlohmann::json(*opt.top_k) : nlohmann::json();
  fp["--summary"] = opt.summary;
  fp["--recent"] = opt.recent ? nlohmann::json(*opt.recent) : nlohmann::json();
  fp["--stats"] = opt.stats;
  // Null when not given, so folders from before these flags still resume;
  // with --key-stats its effective window and pool.
  if (opt.head_stats) {
    fp["--head-stats"] = true;
    fp["--sink"] = opt.sink.value_or(4);
    fp["--recent"] = opt.recent.value_or(64);
  }
  if (opt.key_stats) {
    fp["--key-stats"] = true;
    fp["--window"] = opt.window.value_or(32);
    fp["--pool"] = opt.pool.value_or(7);
  }
  // --save: the names asked for (null when not given, so older folders resume).
  if (!opt.save_spec.empty()) fp["--save"] = attn::parse_save_list(opt.save_spec);
  // --pack: null when not given, so folder batches from before it still resume.
  if (opt.pack) fp["--pack"] = true;
  fp["--allow-nonfinite"] = opt.allow_nonfinite;
  std::string labels_flag;
  const auto labels = flag_labels(opt, &labels_flag);
  fp["--labels"] = labels ? nlohmann::json(*labels) : nlohmann::json();
  fp["--padding-mask"] = opt.padding_mask ? file_identity(*opt.padding_mask) : nlohmann::json();
  // --compare (with --layer all): the maps compared with, as a file or a folder's path.
  fp["--compare"] = !opt.compare                       ? nlohmann::json()
                    : attn::is_directory(*opt.compare) ? nlohmann::json(*opt.compare)
                                                       : file_identity(*opt.compare);
  fp["--compare-tol"] = opt.compare_tol ? nlohmann::json(*opt.compare_tol) : nlohmann::json();
  // The config as resolved (flags applied), key by key; where the results
  // go, the input and the weights are entries of their own.
  nlohmann::json c = attn::config_to_json(cfg);
  // (from_model, what the folder said, is in the keys it resolved to.)
  for (const char* own : {"output", "weights", "input", "from_model"}) c.erase(own);
  for (const auto& [key, value] : c.items()) fp[config_entry(key)] = value;
  add_inline_arrays(cfg, fp);
  add_config_files(cfg, fp);
  // The weights: where they come from, and each file they are read from.
  fp["weights"] = weights_source;
  if (!cfg.weights.empty())
    for (const attn::SourceFile& f : attn::weight_source_files(cfg.weights))
      fp["weights file " + f.path] = file_identity(f.path, f.header_bytes);
  return fp;
}

void check_same_settings(const nlohmann::json& was, const nlohmann::json& now,
                         const std::string& manifest) {
  std::vector<std::string> differ;
  for (const auto& [name, value] : now.items()) {
    const nlohmann::json old = was.contains(name) ? was[name] : nlohmann::json();
    if (old != value) differ.push_back(difference(name, old, value));
  }
  for (const auto& [name, value] : was.items())
    if (!now.contains(name) && !value.is_null())
      differ.push_back(difference(name, value, nlohmann::json()));
  if (differ.empty()) return;
  std::string what;
  const std::size_t shown_max = 4;
  for (std::size_t i = 0; i < differ.size() && i < shown_max; ++i)
    what += (i ? "; " : "") + differ[i];
  if (differ.size() > shown_max)
    what += "; and " + std::to_string(differ.size() - shown_max) + " more";
  throw attn::Error(
      attn::Exit::cant_create,
      attn::printable(manifest) + ": the results in this folder were made with other settings: " +
          attn::printable(what) + "; use another --out-dir, or remove the folder to start over");
}

}  // namespace app
