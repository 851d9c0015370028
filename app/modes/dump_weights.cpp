// --dump-weights: show what was loaded (a table or JSON on stdout), or write
// it in any layout that can hold it: to a folder as <key>.npy with a
// manifest.json (layout, config, keys, shapes, SHA-256 of each file), or to
// one FILE.safetensors (its __metadata__ holding the layout and the config) or
// FILE.npz, written atomically beside its final name.
#include <spdlog/spdlog.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/files.h"
#include "attn/npy.h"
#include "attn/output.h"
#include "attn/run.h"
#include "attn/sha256.h"
#include "attn/weights.h"
#include "attn/writers.h"
#include "cli/memory_check.h"
#include "cli/stdout_writer.h"
#include "modes/modes.h"

namespace app {
namespace {

struct ParamStats {
  double min = 0, max = 0, mean = 0, std = 0;
};

// Population std (NumPy's default ddof=0), accumulated in double.
ParamStats stats_of(const attn::Tensor& t) {
  ParamStats s;
  if (t.size() == 0) return s;
  s.min = s.max = t.data[0];
  double sum = 0;
  for (float v : t.data) {
    s.min = std::min<double>(s.min, v);
    s.max = std::max<double>(s.max, v);
    sum += v;
  }
  s.mean = sum / double(t.size());
  double sq = 0;
  for (float v : t.data) sq += (v - s.mean) * (v - s.mean);
  s.std = std::sqrt(sq / double(t.size()));
  return s;
}

std::string table(const nlohmann::json& params, const std::string& header) {
  std::size_t key_w = 3, shape_w = 5;
  for (const auto& p : params) {
    key_w = std::max(key_w, p["key"].get<std::string>().size());
    shape_w = std::max(shape_w, p["shape_str"].get<std::string>().size());
  }
  std::string out = header + "\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-*s  %-*s  %-8s %11s %11s %11s %11s\n", int(key_w), "key",
                int(shape_w), "shape", "dtype", "min", "max", "mean", "std");
  out += line;
  for (const auto& p : params) {
    std::snprintf(line, sizeof line, "%-*s  %-*s  %-8s %11.4g %11.4g %11.4g %11.4g\n", int(key_w),
                  p["key"].get<std::string>().c_str(), int(shape_w),
                  p["shape_str"].get<std::string>().c_str(), p["dtype"].get<std::string>().c_str(),
                  p["min"].get<double>(), p["max"].get<double>(), p["mean"].get<double>(),
                  p["std"].get<double>());
    out += line;
  }
  return out;
}

bool same_path(const std::string& a, const std::string& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec) && !ec;
}

// The files an earlier dump into `dir` wrote (its manifest.json's "files"),
// plain names only; none when there is no readable manifest.
std::vector<std::string> earlier_dump_files(const std::string& dir) {
  std::vector<std::string> names;
  std::ifstream in(dir + "/manifest.json", std::ios::binary);
  if (!in) return names;
  const nlohmann::json m = nlohmann::json::parse(in, nullptr, false);
  if (!m.is_object() || !m.contains("files") || !m["files"].is_object()) return names;
  for (const auto& entry : m["files"]) {
    if (!entry.is_object() || !entry.contains("file") || !entry["file"].is_string()) continue;
    const std::string name = entry["file"].get<std::string>();
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
      continue;
    names.push_back(name);
  }
  return names;
}

// --dump-weights DIR never writes into the weights it reads (CONTRACT.md
// "Output safety rules"): DIR is not the weights folder, and no file it
// writes or removes is the weights file.
void check_not_the_source(const std::string& dir, const std::string& weights,
                          const std::vector<std::string>& touched) {
  if (weights.empty()) return;
  const auto refuse = [&](const std::string& what) {
    throw attn::Error(attn::Exit::cant_create,
                      "--dump-weights " + dir + ": " + what + " " + weights +
                          " that this run reads; dump into another folder");
  };
  if (same_path(dir, weights)) refuse("is the weights folder");
  for (const std::string& name : touched)
    if (same_path(dir + "/" + name, weights)) refuse("would overwrite the weights file");
}

enum class DumpTo { stdout_table, folder, safetensors, npz };

bool ends_with_ci(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         std::equal(
             suffix.begin(), suffix.end(), s.end() - std::ptrdiff_t(suffix.size()),
             [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

DumpTo dump_target(const std::string& path) {
  if (path.empty()) return DumpTo::stdout_table;
  if (ends_with_ci(path, ".safetensors")) return DumpTo::safetensors;
  if (ends_with_ci(path, ".npz")) return DumpTo::npz;
  return DumpTo::folder;
}

// The shard files a sharded index reads (its weight_map's values), beside it.
std::vector<std::string> shards_of(const std::string& index) {
  std::vector<std::string> files;
  if (!ends_with_ci(index, ".index.json")) return files;
  std::ifstream in(index, std::ios::binary);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object()) return files;
  const std::string folder = std::filesystem::path(index).parent_path().string();
  for (const auto& v : j["weight_map"])
    if (v.is_string()) files.push_back((folder.empty() ? "" : folder + "/") + v.get<std::string>());
  return files;
}

// --dump-weights FILE never replaces the weights it reads, nor a shard of
// them, nor a folder (exit 73, as the folder dump).
void check_file_target(const std::string& file, const std::string& weights) {
  if (attn::is_directory(file))
    throw attn::Error(
        attn::Exit::cant_create,
        "--dump-weights " + file +
            ": is a folder (a .safetensors or .npz name "
            "writes one file; drop the extension to dump <key>.npy files into a folder)");
  if (weights.empty()) return;
  std::vector<std::string> read = shards_of(weights);
  read.push_back(weights);
  for (const std::string& w : read)
    if (same_path(file, w))
      throw attn::Error(attn::Exit::cant_create,
                        "--dump-weights " + file + ": would overwrite the weights file " + w +
                            " that this run reads; dump into another file");
}

// The folder and name an output file is staged and committed under.
std::pair<std::string, std::string> split_path(const std::string& file) {
  const std::filesystem::path p(file);
  const std::string dir = p.parent_path().string();
  return {dir.empty() ? "." : dir, p.filename().string()};
}

}  // namespace

int run_dump_weights(const Options& opt) {
  attn::Config cfg = load_config_with_flags(opt);
  const DumpTo to = dump_target(opt.dump_dir);
  if (to == DumpTo::folder) check_not_the_source(opt.dump_dir, cfg.weights, {});
  if (to == DumpTo::safetensors || to == DumpTo::npz) check_file_target(opt.dump_dir, cfg.weights);
  attn::Layout loaded_layout;
  bool detected = false;
  std::string source;
  check_init_memory(cfg);
  attn::Weights w =
      attn::load_model_weights(cfg, opt.allow_nonfinite, &loaded_layout, &detected, &source);
  const attn::Layout target = opt.layout ? *attn::parse_layout(*opt.layout) : loaded_layout;
  attn::StateDict sd = attn::export_weights(w, target);
  // T5's relative position bias table rides along under the layer's own name,
  // where relative_bias finds it without a table key (dumped.spec.relative_bias below).
  if (!w.relative_bias.data.empty()) sd.add("relative_attention_bias.weight", w.relative_bias);
  // DeBERTa's relative embeddings (their 2 span rows, through their LayerNorm
  // already) and position projections, likewise (dumped.spec.disentangled below).
  const std::pair<const char*, const attn::Tensor*> deberta[] = {
      {"rel_embeddings.weight", &w.rel_embeddings},
      {"pos_key_proj.weight", &w.pos_key_w},
      {"pos_key_proj.bias", &w.pos_key_b},
      {"pos_query_proj.weight", &w.pos_query_w},
      {"pos_query_proj.bias", &w.pos_query_b}};
  for (const auto& [key, t] : deberta)
    if (!t->data.empty()) sd.add(key, *t);

  // Keys in the layout's constructor order, as a state_dict lists them.
  std::vector<std::string> keys;
  for (const auto& p : attn::expected_params(cfg, target))
    if (sd.contains(p.key)) keys.push_back(p.key);
  for (const auto& k : sd.keys())
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);

  nlohmann::json params = nlohmann::json::array();
  std::vector<attn::Tensor> tensors;
  for (const auto& key : keys) {
    attn::Tensor t = sd.read_f32(key, true);
    ParamStats s = stats_of(t);
    params.push_back({{"key", key},
                      {"shape", t.shape},
                      {"shape_str", attn::shape_str(t.shape)},
                      {"dtype", "float32"},
                      {"min", s.min},
                      {"max", s.max},
                      {"mean", s.mean},
                      {"std", s.std}});
    tensors.push_back(std::move(t));
  }
  const std::string layout_note =
      attn::layout_name(target) +
      (target == loaded_layout ? (detected ? " (detected)" : " (from config)")
                               : " (converted from " + attn::layout_name(loaded_layout) + ")");

  if (to == DumpTo::stdout_table) {
    if (opt.format == Format::json) {
      for (auto& p : params) p.erase("shape_str");
      nlohmann::json j = {{"layout", attn::layout_name(target)},
                          {"source_layout", attn::layout_name(loaded_layout)},
                          {"layout_detected", detected},
                          {"weights", source},
                          {"params", params}};
      write_stdout(j.dump(2) + "\n");
    } else {
      write_stdout(table(params, "layout: " + layout_note + "   weights: " + source));
    }
    return 0;
  }

  attn::Config dumped = cfg;
  dumped.layout = target;
  dumped.init_seed.reset();
  dumped.weights_prefix.clear();  // the dumped keys are the layer's own
  if (dumped.spec.relative_bias) dumped.spec.relative_bias->table.clear();
  if (dumped.spec.disentangled) {  // the table as dumped: the layer's own, normed
    dumped.spec.disentangled->table.clear();
    dumped.spec.disentangled->norm_weight.clear();
    dumped.spec.disentangled->norm_bias.clear();
  }
  if (to == DumpTo::safetensors || to == DumpTo::npz) {
    const auto [dir, name] = split_path(opt.dump_dir);
    dumped.weights = name;  // a config saved beside the file reads it
    std::vector<attn::NamedTensor> named;
    for (std::size_t i = 0; i < keys.size(); ++i) named.push_back({keys[i], &tensors[i]});
    attn::OutputDir out(dir);
    out.check_name(name);
    if (to == DumpTo::safetensors)
      out.add(name, attn::encode_safetensors(
                        named, {{"format", "pt"},
                                {"attn_run_layout", attn::layout_name(target)},
                                {"attn_run_config", attn::config_to_json(dumped).dump()}}));
    else
      out.add(name, attn::encode_npz(named));
    out.commit();
    spdlog::info("wrote {} parameters as layout {} to {}", keys.size(), attn::layout_name(target),
                 opt.dump_dir);
    return 0;
  }

  std::vector<std::string> written = {"manifest.json"};
  for (const auto& key : keys) written.push_back(key + ".npy");
  std::vector<std::string> stale;  // an earlier dump's files this one does not write
  for (const std::string& name : earlier_dump_files(opt.dump_dir))
    if (std::find(written.begin(), written.end(), name) == written.end()) stale.push_back(name);
  std::vector<std::string> touched = written;
  touched.insert(touched.end(), stale.begin(), stale.end());
  check_not_the_source(opt.dump_dir, cfg.weights, touched);

  attn::OutputDir out(opt.dump_dir);
  for (const std::string& name : stale) out.remove_on_commit(name);
  nlohmann::json files = nlohmann::json::object();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::string bytes = attn::encode_npy(tensors[i]);
    out.add(keys[i] + ".npy", bytes);
    files[keys[i]] = {{"file", keys[i] + ".npy"},
                      {"shape", tensors[i].shape},
                      {"dtype", "float32"},
                      {"sha256", attn::sha256_hex(bytes)}};
  }
  dumped.weights = ".";
  nlohmann::json manifest = {{"attn_run_version", ATTN_VERSION},
                             {"layout", attn::layout_name(target)},
                             {"source_layout", attn::layout_name(loaded_layout)},
                             {"weights", source},
                             {"config", attn::config_to_json(dumped)},
                             {"keys", keys},
                             {"files", files}};
  out.add("manifest.json", manifest.dump(2) + "\n");
  out.commit();
  spdlog::info("wrote {} parameters as layout {} to {}", keys.size(), attn::layout_name(target),
               opt.dump_dir);
  return 0;
}

}  // namespace app
