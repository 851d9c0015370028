// Every command-line option of attn-run (CONTRACT.md "Invocation") and how
// they override the config's keys of the same meaning.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

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
};

// Registers the options on `app` (CLI11's example style: setup + run).
void setup_options(CLI::App& app, Options& opt);

// The config file with the flags applied and re-resolved.
attn::Config load_config_with_flags(const Options& opt);

}  // namespace app
