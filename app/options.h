// Every command-line option of attn-run (CONTRACT.md "Invocation") and how
// they override the config's keys of the same meaning.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attn/config.h"

namespace app {

enum class Format { text, json, npy };

struct Options {
  std::string config;
  std::optional<std::string> weights, input, padding_mask, out_dir, layout;
  bool no_attn = false;
  Format format = Format::text;
  std::string format_name = "text";
  int threads = 0;  // 0 = all cores
  bool quiet = false, verbose = false;
  bool allow_nonfinite = false;
  bool dump_weights = false;
  std::string dump_dir;  // "" = table on stdout

  // Pictures and diagnostics (issue 6).
  std::optional<std::string> plot;         // FILE.svg or FILE.png
  bool show = false;                       // maps in the terminal, on stdout
  bool attn_stdout = false;                // maps instead of the context on stdout
  bool stats = false;                      // per-head diagnostics
  std::string heads_spec;                  // "0,3,7"; "" = every head
  std::size_t batch_index = 0;             // which batch entry --plot/--show draw
  std::optional<std::string> labels_spec;  // "a,b,c": overrides config labels
  std::optional<std::size_t> show_query;   // --show's head view: this query (default: last)

  // Many inputs (issue 6).
  std::optional<std::string> input_list;
  std::optional<std::string> shard_spec;  // "K/N"
};

// --shard K/N parsed; Exit::usage naming --shard when malformed.
struct Shard {
  std::size_t k = 0, n = 1;
};
Shard parse_shard(const std::string& spec);

// --heads "0,3,7" parsed and checked against H; "" = all heads. Exit::usage.
std::vector<std::size_t> parse_heads(const std::string& spec, std::size_t H);

// --labels "a,b,c" split at commas.
std::vector<std::string> split_labels(const std::string& spec);

// Checks flag combinations that CLI11 cannot express. Exit::usage.
void check_option_combinations(const Options& opt);

// Registers the options on `app` (CLI11's example style: setup + run).
void setup_options(CLI::App& app, Options& opt);

// --threads, or every core when not given.
int worker_threads(const Options& opt);

// The config file with the flags applied and re-resolved.
attn::Config load_config_with_flags(const Options& opt);

}  // namespace app
