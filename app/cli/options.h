// Every command-line option of attn-run (CONTRACT.md "Invocation") and how
// they override the config's keys of the same meaning. docs/attn-run.1 and
// the bash completion (completion.cpp) describe the same options.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attn/config.h"
#include "cli/shard.h"

// CLI11 (4 s of compile time a file) only where the parser is built or read:
// options.cpp, help.cpp, completion.cpp, main.cpp.
namespace CLI {
class App;
}  // namespace CLI

namespace app {

enum class Format { text, json, npy };

struct Options {
  std::string config;
  std::string model;                  // --model DIR ("" = none)
  std::optional<std::int64_t> layer;  // --layer N: one layer
  // --layer all|3-7|0,5|last:4: several layers in one run (run_layers.cpp),
  // as an index list (cli/index_list.h); "" = every attention layer.
  std::optional<std::string> layers;
  std::string layer_flag;  // --layer as given, before apply_layer_flag
  std::string model_type;  // --model-type TYPE ("" = the folder's first)
  bool info = false;       // --info: a GGUF file's metadata and tensor list (gguf_info.cpp)
  // --decoder-layer N [--cross]: an encoder-decoder's decoder layer N, its causal
  // self-attention or its cross-attention (keys and values: --encoder-output FILE).
  std::optional<std::int64_t> decoder_layer;
  bool cross = false;
  std::optional<std::string> encoder_output;
  bool with_residual_norm = false;    // context = LayerNorm(o_proj + input)
  bool residual = false;              // the input is the residual stream: the block's norm first
  std::optional<std::string> tokens;  // layer 0's input from token ids: a,b,c or ids.npy
  std::optional<std::string> rope_precision;  // --rope-precision float64|float32 (rope.precision)
  std::optional<std::string> weights, input, padding_mask, out_dir, layout;
  std::optional<std::string> attention_mask;  // --attention-mask FILE: the config's attention_mask
  bool no_attn = false;
  bool average_heads = false;  // maps (B, L, S): the mean over heads
  Format format = Format::text;
  std::string format_name = "text";
  bool format_given = false;  // --format on the command line (--show refuses it)
  int threads = 0;            // 0 = the CPUs this process may use (attn/cpus.h)
  bool quiet = false, verbose = false;
  bool allow_nonfinite = false;
  bool dump_weights = false;
  std::string dump_dir;  // "" = table on stdout

  // Pictures and diagnostics.
  std::vector<std::string> plots;          // FILE.svg, FILE.png or FILE.html, each --plot
  bool show = false;                       // maps in the terminal, on stdout
  bool attn_stdout = false;                // maps instead of the context on stdout
  bool stats = false;                      // per-head diagnostics
  std::string heads_spec;                  // "0,3,7-9"; "" = every head
  std::string queries_spec, keys_spec;     // "0-99,last:16"; "" = every row / key
  std::optional<std::size_t> top_k;        // --top-k K: topk_values.npy, topk_indices.npy
  bool summary = false;                    // summary.npy, summary.csv, summary.json
  std::optional<std::size_t> recent;       // --recent W for --summary (default 64)
  bool head_stats = false;                 // head_stats.csv, head_stats.json
  std::optional<long long> sink;           // --sink N for --head-stats (default 4)
  std::optional<std::string> check_f64;    // --check-f64 N|all: rows per head in float64
  std::optional<double> check_tol;         // --check-tol X: a larger error is exit 1
  bool key_stats = false;                  // key_stats.npy, key_stats.csv
  std::string save_spec;                   // --save scores,q,k,v,z,result ("" = none)
  std::optional<long long> window;         // --window W for --key-stats (default 32)
  std::optional<long long> pool;           // --pool K for --key-stats (odd, default 7)
  std::optional<std::string> compare;      // --compare FILE.npy: maps made elsewhere
  std::optional<double> compare_tol;       // --compare-tol X: a larger error is exit 1
  std::size_t batch_index = 0;             // which batch entry --plot/--show draw
  std::optional<std::string> labels_spec;  // "a,b,c": overrides config labels
  std::optional<std::size_t> show_query;   // --show's head view: this query (default: last)
  std::string color_scale = "auto";        // --color-scale auto|linear|log|percentile
  std::optional<std::string> labels_file;  // one label per line (a label may hold a comma)

  // Many inputs.
  std::optional<std::string> input_list;
  bool keep_going = false;                        // a failed input does not stop the batch
  bool pack = false;                              // --pack: one pack per shard (pack_batch.h)
  std::optional<std::string> shard_spec;          // "K/N", "auto", "auto:N" (cli/shard.h)
  std::optional<std::string> merge_dir;           // --merge-shards DIR: its own mode, no config
  std::optional<std::string> merge_dir_old_name;  // --merge-summaries DIR, its old name

  std::string completion_shell;  // hidden --completion bash: print the script and exit
};

// The shared --out-dir value "-" (as `-o -`): results to stdout, overriding a
// config's output.dir.
constexpr const char* kStdoutDir = "-";

// --layer as given split into opt.layer (one number) or opt.layers (all, a
// list, a range, last:N). Exit::usage naming --layer when malformed.
void apply_layer_flag(Options& opt);
// --merge-summaries, the old name of --merge-shards: its value moves to merge_dir
// (main notes the rename on stderr); both given is Error(Exit::usage).
void apply_renamed_flags(Options& opt);

// --heads "0,3,7-9" parsed and checked against H (cli/index_list.h); "" = all heads.
std::vector<std::size_t> parse_heads(const std::string& spec, std::size_t H);

// --labels "a,b,c" split at commas.
std::vector<std::string> split_labels(const std::string& spec);

// The token labels given on the command line: --labels split at commas, or
// --labels-file read one per line (exit 66 when unreadable); none without
// either. `flag` is set to the flag's name for messages.
std::optional<std::vector<std::string>> flag_labels(const Options& opt, std::string* flag);

// The model folder whose table of layers to print ("" = not that mode):
// --model DIR, or --config DIR/config.json of Hugging Face, without --layer.
std::string model_summary_folder(const Options& opt);

// Checks flag combinations that CLI11 cannot express, each message naming
// both flags. Exit::usage. Called once by main before any mode runs.
void check_option_combinations(const Options& opt);

// A file name ends in `ext` (".svg", case-insensitive).
bool ends_with_ext(const std::string& path, const char* ext);
// Some --plot file ends in `ext`.
bool any_plot_ends_with(const Options& opt, const char* ext);

// Registers the options on `app` (CLI11's example style: setup + run).
void setup_options(CLI::App& app, Options& opt);

// --threads, or every core when not given.
int worker_threads(const Options& opt);

// The config file with the flags applied and re-resolved. Refuses (exit 64)
// binary --format npy on stdout when stdout is a terminal, unless `-o -`
// asked for stdout explicitly.
attn::Config load_config_with_flags(const Options& opt);

}  // namespace app
