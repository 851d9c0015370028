#include "cli/options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <thread>
#include <tuple>

#include "attn/cpus.h"
#include "attn/error.h"
#include "attn/escape.h"
#include "attn/files.h"
#include "attn/layout.h"
#include "attn/linear.h"
#include "attn/saved_tensors.h"
#include "attn/version.h"
#include "cli/help.h"
#include "cli/index_list.h"
#include "cli/term.h"

namespace app {
namespace {

constexpr std::size_t kMaxLabelsFileBytes = std::size_t(16) << 20;

}  // namespace

// A count from 0 up (CLI11 would wrap "-1" into a size_t's largest value).
const CLI::Validator kCount(
    [](std::string& v) {
      return !v.empty() && v.size() <= 18 && v.find_first_not_of("0123456789") == std::string::npos
                 ? std::string()
                 : "expected a whole number 0 or more, found '" + v + "'";
    },
    "N");

void setup_options(CLI::App& app, Options& opt) {
  app.description(
      "attn-run: run single-head, multi-head or causal self-attention layers from a JSON config\n"
      "and PyTorch weights saved as .npy, with PyTorch's numbers.");
  app.set_version_flag("--version", std::string("attn-run ") + attn::version() +
                                        "\nBLAS: " + attn::blas_info() + "\n");
  app.footer(
      "Examples:\n"
      "  One run, context vectors printed like a torch tensor:\n"
      "    attn-run --config configs/raschka_mha_causal.json\n"
      "  Results to a folder (context.npy, attention.npy, run.json) with per-head statistics:\n"
      "    attn-run --config configs/gpt2_small_causal.json --out-dir out/ --stats\n"
      "  Pipes: .npy or JSON in on stdin, .npy out on stdout (maps with --attn-stdout):\n"
      "    attn-run --config c.json --input - --format npy < x.npy > context.npy\n"
      "    attn-run --config c.json --attn-stdout --format json\n"
      "  Pictures: a heatmap per head as SVG or PNG, or in the terminal:\n"
      "    attn-run --config configs/warner_causal.json --plot warner.png\n"
      "    attn-run --config c.json --plot maps.svg --heads 0,3,7 --batch-index 1 --labels a,b,c\n"
      "    attn-run --config configs/warner_causal.json --show\n"
      "  Many inputs, weights loaded once; split across 4 machines or processes:\n"
      "    attn-run --config c.json --input-list inputs.txt --out-dir results/\n"
      "    parallel attn-run --config c.json --input-list inputs.txt --out-dir results/ "
      "--shard {}/4 ::: 0 1 2 3\n"
      "  Weights: list them, or write them out in another layout:\n"
      "    attn-run --config c.json --dump-weights\n"
      "    attn-run --config c.json --dump-weights dumped/ --layout separate\n"
      "  One layer of a Hugging Face model folder (its layers as a table without --layer):\n"
      "    attn-run --model ~/models/Qwen3-0.6B --layer 5 --input hidden.npy --plot l5.html\n"
      "Exit codes: 0 ok, 64 usage, 65 bad data, 66 missing input, 70 internal (a bug),\n"
      "71 not enough memory (checked before the work), 73 cannot create output,\n"
      "74 write error, 78 bad config.");

  auto* in = app.add_option_group("Input", "What to run");
  // Type names say what a value is; completion.cpp completes FILE and PATH
  // as files and DIR as folders.
  in->add_option("--config", opt.config, "JSON config (keys: man attn-run, or the README)")
      ->type_name("FILE");
  in->add_option("--model", opt.model,
                 "a Hugging Face model folder (config.json + weights) or a GGUF file: with "
                 "--layer N, that layer's attention; alone, a table of its layers")
      ->type_name("DIR|FILE.gguf");
  in->add_option("--layer", opt.layer_flag,
                 "the layer of --model to run (0-based); all, a range 3-7, a list 0,5 or last:4 "
                 "runs several, each into DIR/layer_N/")
      ->type_name("N|all|A-B|LIST");
  in->add_option("--decoder-layer", opt.decoder_layer,
                 "an encoder-decoder's decoder layer to run (0-based; --layer N is encoder "
                 "layer N): its causal self-attention, or with --cross its cross-attention")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber);
  in->add_flag("--cross", opt.cross,
               "with --decoder-layer N: the cross-attention over the encoder's output "
               "(--encoder-output)");
  in->add_option("--encoder-output", opt.encoder_output,
                 "the encoder's output (its last hidden states), (T, C) or (B, T, C): the keys "
                 "and values of --cross (config key kv_input); masks (--padding-mask, the "
                 "config's attention_mask) then mark the encoder's padded positions")
      ->type_name("FILE");
  in->add_flag("--info", opt.info,
               "with --model FILE.gguf: the file's metadata (keys, types, values) and its "
               "tensors (type, shape, bytes), as gguf-dump lists them");
  in->add_option("--model-type", opt.model_type,
                 "which model of a --model folder that holds several (a CLIPModel folder: "
                 "clip_text_model, the default, or clip_vision_model)")
      ->type_name("TYPE");
  in->add_flag("--with-residual-norm", opt.with_residual_norm,
               "context = LayerNorm(output projection + input), as BertAttention returns it "
               "(bert, roberta, xlm-roberta, electra; distilbert's sa_layer_norm; OPT-350m's "
               "self_attn_layer_norm)");
  in->add_flag("--residual", opt.residual,
               "the input is the residual stream entering the block (transformers' "
               "output_hidden_states): the block's own pre-attention norm is applied first");
  in->add_option("--rope-precision", opt.rope_precision,
                 "the rotary angles' arithmetic: float64 (the default, closest to exact) or "
                 "float32, as transformers' rotary embeddings compute them (config "
                 "rope.precision), to compare with its maps")
      ->check(CLI::IsMember({"float64", "float32"}))
      ->type_name("float64|float32");
  in->add_option("--weights", opt.weights,
                 "weights: folder of <key>.npy, .npz, .safetensors, *.index.json or .pt")
      ->type_name("PATH");
  in->add_option("--input", opt.input,
                 "token embeddings (S, C) or (B, S, C): .npy or JSON; - = stdin (with several "
                 "layers: a (layers, B, S, C) stack, or a folder of layer_N.npy)")
      ->type_name("PATH");
  in->add_option("--tokens", opt.tokens,
                 "layer 0's input from token ids, 9906,11,1917 or a .npy of int32/int64 (S,) or "
                 "(B, S): the model's embedding as its family builds it, then the block's norm")
      ->type_name("LIST|FILE");
  in->add_option("--padding-mask", opt.padding_mask, "(B, S) or (S,) mask .npy, true = padded key")
      ->type_name("FILE");
  in->add_option("--attention-mask", opt.attention_mask,
                 "Hugging Face's attention mask, (B, S) or (S,) .npy: 1 = attend, 0 = padded "
                 "key (config key attention_mask; not with --padding-mask)")
      ->type_name("FILE");
  in->add_flag("--allow-nonfinite", opt.allow_nonfinite,
               "let NaN/inf in inputs and weights through");

  auto* out = app.add_option_group("Output", "Where results go");
  out->add_option("-o,--out-dir", opt.out_dir,
                  "write context.npy, attention.npy, run.json here (- = stdout)")
      ->type_name("DIR");
  out->add_flag("--no-attn", opt.no_attn, "do not write (or hold) the attention maps");
  out->add_flag("--average-heads", opt.average_heads,
                "attention maps averaged over heads, (B, L, S) (torch's average_attn_weights)");
  out->add_option("--format", opt.format_name, "stdout format without --out-dir (default text)")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"text", "json", "npy"}))
      ->each([&opt](const std::string& v) {
        opt.format = v == "json" ? Format::json : v == "npy" ? Format::npy : Format::text;
        opt.format_given = true;
      });
  out->add_option("--dump-weights", opt.dump_dir,
                  "print a table of the weights, or write them to DIR as <key>.npy, or to "
                  "FILE.safetensors or FILE.npz")
      ->type_name("[DIR|FILE]")
      ->expected(0, 1);  // given at all: main() sets opt.dump_weights from its count
  out->add_option("--layout", opt.layout, "weight layout to dump as (or to read with)")
      ->type_name("NAME")
      ->check(CLI::IsMember(attn::layout_names()));

  auto* pics = app.add_option_group("Pictures and diagnostics", "Looking at the maps");
  pics->add_option("--plot", opt.plots,
                   "draw the maps, one panel per head: FILE.svg, FILE.png or FILE.html "
                   "(explorer); may be given more than once")
      ->type_name("FILE")
      ->allow_extra_args(false)  // one file each time: --plot a.png --plot b.html
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  pics->add_flag("--show", opt.show,
                 "draw the maps in the terminal on stdout (instead of the context)");
  pics->add_option("--heads", opt.heads_spec,
                   "heads kept in attention.npy and drawn, e.g. 0,3,7-9 (default: all)")
      ->type_name("LIST");
  pics->add_option("--queries", opt.queries_spec,
                   "query rows kept in attention.npy and drawn: 0-99,last:16 (default: all)")
      ->type_name("LIST");
  pics->add_option("--keys", opt.keys_spec,
                   "key columns kept in attention.npy and drawn, as --queries (default: all)")
      ->type_name("LIST");
  pics->add_option("--batch-index", opt.batch_index, "batch entry to draw (default 0)")
      ->type_name("N")
      ->check(kCount);
  pics->add_option("--show-query", opt.show_query,
                   "with --show: list this query token's strongest keys (default: the last)")
      ->type_name("N")
      ->check(kCount);
  pics->add_option("--color-scale", opt.color_scale,
                   "colours of --plot and --show: linear, log (from about 1/S to the largest "
                   "weight), percentile (each head up to its 99th percentile), auto (default: "
                   "log past 256 keys, else linear)")
      ->type_name("SCALE")
      ->check(CLI::IsMember({"auto", "linear", "log", "percentile"}));
  pics->add_option("--labels", opt.labels_spec, "token labels a,b,c (default: config labels)")
      ->type_name("LIST");
  pics->add_option("--labels-file", opt.labels_file,
                   "token labels, one per line (a label may hold a comma)")
      ->type_name("FILE");
  pics->add_option("--top-k", opt.top_k,
                   "per query row the K largest weights and their keys: topk_values.npy, "
                   "topk_indices.npy in the output folder")
      ->type_name("K")
      ->check(CLI::Range(1, 1 << 30));
  pics->add_flag("--summary", opt.summary,
                 "per query row entropy, weight on key 0 and on the recent keys, mean distance, "
                 "argmax; per head a histogram of distances: summary.npy, .csv, .json");
  pics->add_option("--recent", opt.recent,
                   "with --summary or --head-stats: the recent window W (default 64)")
      ->type_name("W")
      ->check(CLI::Range(1, 1 << 30));
  pics->add_flag("--head-stats", opt.head_stats,
                 "one row per head: mean weight on the first --sink keys, on the --recent keys, "
                 "the rest (DuoAttention), mean entropy and distance: head_stats.csv, .json");
  pics->add_option("--sink", opt.sink, "with --head-stats: the sink keys N (default 4)")
      ->type_name("N");
  pics->add_flag("--key-stats", opt.key_stats,
                 "per head and key over the selected query rows: summed weight (H2O), largest "
                 "weight, votes of the last --window rows and those max-pooled over --pool keys "
                 "(SnapKV): key_stats.npy, key_stats.csv");
  pics->add_option("--window", opt.window,
                   "with --key-stats: the last W query rows vote (default 32)")
      ->type_name("W");
  pics->add_option("--pool", opt.pool,
                   "with --key-stats: the votes' max-pooling kernel K over keys, odd (default 7)")
      ->type_name("K");
  pics->add_option("--save", opt.save_spec,
                   "the intermediates as TransformerLens names them, each NAME.npy (float32), "
                   "selection flags applied: scores (pre-softmax), q, k, v (after rope and "
                   "norms), z (each head's weighted values), result (each head's share of the "
                   "output projection)")
      ->type_name("scores,q,k,v,z,result");
  pics->add_option("--check-f64", opt.check_f64,
                   "recompute N query rows per head (evenly spaced; all: every row) in float64 "
                   "from the same weights and inputs: the largest errors of the maps and the "
                   "context on stderr and in run.json (runs the maps path)")
      ->type_name("N|all")
      ->expected(0, 1)
      ->default_str("16");
  pics->add_option("--check-tol", opt.check_tol,
                   "with --check-f64: exit 1 when an error is above X")
      ->type_name("X")
      ->check(CLI::NonNegativeNumber);
  pics->add_option("--compare", opt.compare,
                   "maps made elsewhere (HF eager, TransformerLens), shaped as attention.npy "
                   "(leading 1s aside: transformers' (1, H, L, S)): per head the largest "
                   "difference and its (batch, query, key), the NMSE and the largest row KL, on "
                   "stderr and in run.json; with --no-attn nothing else is written")
      ->type_name("FILE.npy");
  pics->add_option("--compare-tol", opt.compare_tol,
                   "with --compare: exit 1 when a head's largest difference is above X")
      ->type_name("X")
      ->check(CLI::PositiveNumber);
  pics->add_flag("--attn-stdout", opt.attn_stdout,
                 "write the attention maps instead of the context to stdout (--format)");
  pics->add_flag("--stats", opt.stats,
                 "per-head entropy, max weight, first-token share, masked rows: "
                 "a table on stderr and \"stats\" in run.json");

  auto* many = app.add_option_group("Many inputs", "One run per input, weights loaded once");
  many->add_option("--input-list", opt.input_list,
                   "file with one .npy path per line (relative to its folder; - reads them "
                   "from stdin); needs --out-dir")
      ->type_name("FILE");
  many->add_option("--shard", opt.shard_spec,
                   "K/N: run only lines i with i % N == K; auto: K and N of the array task "
                   "(Slurm, Kubernetes Indexed Job, AWS Batch, Grid Engine, PBS, LSF); auto:N "
                   "where the scheduler gives no count")
      ->type_name("K/N|auto[:N]");
  many->add_flag("--keep-going", opt.keep_going,
                 "with --input-list: a failed input does not stop the batch; each failure is "
                 "listed (stderr, manifest.json, the summary), a rerun computes only those, and "
                 "the exit status is the first failure's");
  many->add_flag("--pack", opt.pack,
                 "with --input-list: shard K of N packs every input's results into "
                 "DIR/pack-K-of-N/ (context.npy, attention.npy, ... rows concatenated; "
                 "index.npy and index.csv say where each input's rows are)");
  many->add_option("--merge-shards", opt.merge_dir,
                   "join a sharded batch: DIR/batch-K-of-N.json into DIR/batch.json, the "
                   "inputs' head_stats.json into DIR/head_stats.*, or packs' indexes into "
                   "DIR/index.csv (no --config); exit 66 naming inputs with no result")
      ->type_name("DIR");
  // The old name of --merge-shards, kept working (a note on stderr says the new one).
  app.add_option("--merge-summaries", opt.merge_dir_old_name, "old name of --merge-shards")
      ->group("");

  auto* run = app.add_option_group("Run", "How to run");
  run->add_option("--threads", opt.threads,
                  "worker threads (default: the CPUs this process may use)")
      ->type_name("N")
      ->check(CLI::Range(1, 1024));
  run->add_flag("-q,--quiet", opt.quiet, "print nothing but errors");
  run->add_flag("-v,--verbose", opt.verbose, "debug logs on stderr");

  // Hidden (group ""): for packagers, `attn-run --completion bash > attn-run`.
  app.add_option("--completion", opt.completion_shell, "print a completion script")
      ->check(CLI::IsMember({"bash"}))
      ->group("");
  install_usage(app);
}

std::vector<std::size_t> parse_heads(const std::string& spec, std::size_t H) {
  return parse_index_list(spec, H, "--heads", "head");
}

std::vector<std::string> split_labels(const std::string& spec) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = spec.find(',', start);
    out.push_back(spec.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

std::optional<std::vector<std::string>> flag_labels(const Options& opt, std::string* flag) {
  if (opt.labels_spec) {
    *flag = "--labels";
    return split_labels(*opt.labels_spec);
  }
  if (!opt.labels_file) return std::nullopt;
  *flag = "--labels-file";
  const auto bytes = attn::read_file(*opt.labels_file, kMaxLabelsFileBytes);
  std::string text(bytes.begin(), bytes.end());
  if (!text.empty() && text.back() == '\n') text.pop_back();  // the last line's end
  std::vector<std::string> labels;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find('\n', start);
    std::string label =
        text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!label.empty() && label.back() == '\r') label.pop_back();  // written on Windows
    labels.push_back(std::move(label));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return labels;
}

void apply_layer_flag(Options& opt) {
  const std::string& f = opt.layer_flag;
  if (f.empty()) return;
  const bool number = f.find_first_not_of("0123456789") == std::string::npos;
  if (number && f.size() <= 18) {
    opt.layer = std::stoll(f);
    return;
  }
  if (f == "all") {
    opt.layers = "";
    return;
  }
  if (f.find_first_not_of("0123456789,-last:") != std::string::npos || f.front() == '-')
    throw attn::Error(attn::Exit::usage,
                      "--layer: expected a layer number (5), all, a range (3-7), a list (0,5) or "
                      "last:N, found '" +
                          f + "'");
  opt.layers = f;  // checked against the model's layers by run_layers
}

void apply_renamed_flags(Options& opt) {
  if (!opt.merge_dir_old_name) return;
  if (opt.merge_dir)
    throw attn::Error(attn::Exit::usage,
                      "--merge-summaries: the old name of --merge-shards; give one of them");
  opt.merge_dir = opt.merge_dir_old_name;
}

std::string model_summary_folder(const Options& opt) {
  if (opt.layer || opt.layers || opt.decoder_layer || opt.cross || opt.encoder_output) return "";
  if (!opt.model.empty()) return opt.config.empty() ? opt.model : "";
  // A Hugging Face config.json as --config means --model of its folder.
  return opt.config.empty() ? "" : attn::hf_config_folder(opt.config);
}

void check_option_combinations(const Options& opt) {
  using attn::Error;
  using attn::Exit;
  // --save's names, before anything runs (exit 64 listing the valid ones).
  if (!opt.save_spec.empty()) attn::parse_save_list(opt.save_spec);
  // Modes first: what needs a config and what stands alone.
  if (opt.merge_dir) {
    const char* merge_flag = opt.merge_dir_old_name ? "--merge-summaries" : "--merge-shards";
    for (const auto& [given, flag] : {std::pair{!opt.config.empty(), "--config"},
                                      {opt.input_list.has_value(), "--input-list"},
                                      {opt.shard_spec.has_value(), "--shard"},
                                      {opt.dump_weights, "--dump-weights"},
                                      {opt.out_dir.has_value(), "--out-dir"},
                                      {opt.with_residual_norm, "--with-residual-norm"},
                                      {opt.residual, "--residual"}})
      if (given)
        throw Error(Exit::usage, std::string(merge_flag) + ": cannot be combined with " + flag +
                                     " (it reads DIR/batch-K-of-N.json alone)");
    return;
  }
  if (opt.info) {  // a GGUF file's header alone
    if (opt.model.empty() || !ends_with_ext(opt.model, ".gguf"))
      throw Error(Exit::usage,
                  "--info: lists a GGUF file's metadata and tensors: give --model FILE.gguf" +
                      std::string(opt.model.empty() ? ""
                                                    : " (for a model folder, --model DIR "
                                                      "alone lists its layers)"));
    if (model_summary_folder(opt).empty())
      throw Error(Exit::usage,
                  "--info: reads the file alone: give only --model FILE.gguf "
                  "(and --format json)");
  }
  if (!model_summary_folder(opt).empty()) {  // the model summary reads the folder alone
    for (const auto& [given, flag] : {std::pair{opt.dump_weights, "--dump-weights"},
                                      {opt.input_list.has_value(), "--input-list"},
                                      {opt.out_dir.has_value(), "--out-dir"},
                                      {opt.with_residual_norm, "--with-residual-norm"},
                                      {opt.residual, "--residual"},
                                      {opt.tokens.has_value(), "--tokens"}})
      if (given)
        throw Error(Exit::usage, std::string("--model: cannot be combined with ") + flag +
                                     " (alone, it prints a table of the model's layers)");
    return;
  }
  if (opt.config.empty() && opt.model.empty())
    throw Error(Exit::usage, "--config: a config file is required, or --model DIR (try --help)");
  if (opt.check_f64 && (opt.input_list || opt.layers))
    throw Error(Exit::usage, std::string("--check-f64: checks one run; not with ") +
                                 (opt.input_list ? "--input-list" : "--layer " + opt.layer_flag));
  if (opt.decoder_layer && (opt.layer || opt.layers))
    throw Error(Exit::usage,
                "--decoder-layer: cannot be combined with --layer: --layer N runs "
                "encoder layer N, --decoder-layer N the decoder's; choose one");
  if (opt.cross && !opt.decoder_layer)
    throw Error(Exit::usage,
                "--cross: the cross-attention of a decoder layer: give --decoder-layer N with it");
  if (opt.encoder_output && !opt.cross)
    throw Error(Exit::usage,
                "--encoder-output: the encoder's output is what the "
                "cross-attention attends to: give it with --decoder-layer N --cross");
  auto both = [](const char* a, const char* b, const std::string& why) {
    return Error(Exit::usage, std::string(a) + ": cannot be combined with " + b + ": " + why);
  };
  if (opt.attn_stdout && opt.no_attn)
    throw both("--attn-stdout", "--no-attn",
               "one asks for the attention maps on stdout, the other for no maps");
  if (opt.show && opt.format_given)
    throw both("--show", "--format",
               "--show draws the maps on stdout instead of the context, so there is nothing "
               "to format");
  if (opt.attention_mask && opt.padding_mask)
    throw both("--attention-mask", "--padding-mask",
               "both mark padded keys, with opposite meanings (1 = attend, 1 = padded)");
  if (opt.labels_spec && opt.labels_file)
    throw both("--labels", "--labels-file", "give the labels one way");
  for (std::size_t i = 0; i < opt.plots.size(); ++i) {
    const std::string& p = opt.plots[i];
    if (p.empty()) throw Error(Exit::usage, "--plot: expected a file name, found an empty string");
    if (!ends_with_ext(p, ".svg") && !ends_with_ext(p, ".png") && !ends_with_ext(p, ".html"))
      throw Error(Exit::usage,
                  "--plot: expected a file name ending in .svg, .png or .html, found '" + p + "'");
    for (std::size_t j = 0; j < i; ++j)
      if (opt.plots[j] == p) throw Error(Exit::usage, "--plot: '" + p + "' is given twice");
  }
  if (opt.show && opt.attn_stdout)
    throw both("--show", "--attn-stdout", "both write to stdout; choose one");
  if (opt.keep_going && !opt.input_list)
    throw Error(Exit::usage, "--keep-going: only meaningful with --input-list");
  if (opt.shard_spec && !opt.input_list)
    throw Error(Exit::usage, "--shard: only meaningful with --input-list");
  if (opt.shard_spec) parse_shard(*opt.shard_spec);
  if (opt.compare_tol && !opt.compare)
    throw Error(Exit::usage, "--compare-tol: only meaningful with --compare FILE.npy");
  if (opt.layers) {  // several layers: each into DIR/layer_N/
    const std::string flag = "--layer " + opt.layer_flag;
    for (const auto& [given, other] : {std::pair{opt.input_list.has_value(), "--input-list"},
                                       {opt.dump_weights, "--dump-weights"},
                                       {opt.show, "--show"},
                                       {opt.attn_stdout, "--attn-stdout"}})
      if (given)
        throw Error(Exit::usage, flag + ": cannot be combined with " + other +
                                     " (it runs several layers; give one layer with --layer N)");
    for (const std::string& p : opt.plots)
      if (!ends_with_ext(p, ".html"))
        throw Error(Exit::usage, "--plot: with " + flag +
                                     " the picture is the model view, an .html page (every layer "
                                     "x head); found '" +
                                     p + "'");
  }
  if (opt.tokens) {  // layer 0's input from token ids (CONTRACT.md "(v4) Inputs")
    if (opt.input)
      throw both("--tokens", "--input",
                 "both give the layer's input (the ids' embedding, or a file); give one");
    for (const auto& [given, other] :
         {std::pair<bool, std::string>{opt.input_list.has_value(), "--input-list"},
          {opt.layers.has_value(), "--layer " + opt.layer_flag},
          {opt.decoder_layer.has_value(), "--decoder-layer"},
          {opt.dump_weights, "--dump-weights"}})
      if (given)
        throw Error(Exit::usage, "--tokens: cannot be combined with " + other +
                                     ": it builds layer 0's input from the embedding table; run "
                                     "that one layer, --layer 0");
  }
  if (opt.pack && !opt.input_list)
    throw Error(Exit::usage, "--pack: only meaningful with --input-list");
  if (opt.pack) {  // outputs whose rows do not concatenate into one file per shard
    for (const auto& [given, flag, why] :
         {std::tuple{opt.head_stats, "--head-stats", "its tables are per input, not rows"},
          {!opt.save_spec.empty(), "--save", "its tensors are not packed"},
          {opt.stats, "--stats",
           "its table goes to each input's run.json, which a pack does "
           "not keep"}})
      if (given)
        throw Error(Exit::usage, std::string(flag) + ": not available with --pack (" + why +
                                     "); run the batch without --pack, or drop " + flag);
  }
  if (opt.input_list) {
    if (opt.input) throw Error(Exit::usage, "--input: cannot be combined with --input-list");
    if (opt.compare)
      throw Error(Exit::usage,
                  "--compare: not available with --input-list (compare one input "
                  "at a time)");
    if (!opt.plots.empty() || opt.show || opt.attn_stdout)
      throw Error(Exit::usage, std::string(!opt.plots.empty() ? "--plot"
                                           : opt.show         ? "--show"
                                                              : "--attn-stdout") +
                                   ": not available with --input-list (draw one input at a time)");
  }
}

bool any_plot_ends_with(const Options& opt, const char* ext) {
  for (const std::string& p : opt.plots)
    if (ends_with_ext(p, ext)) return true;
  return false;
}

bool ends_with_ext(const std::string& p, const char* ext) {
  const std::string e = ext;
  if (p.size() < e.size()) return false;
  std::string tail = p.substr(p.size() - e.size());
  for (auto& c : tail) c = char(std::tolower(static_cast<unsigned char>(c)));
  return tail == e;
}

int worker_threads(const Options& opt) {
  return opt.threads > 0 ? opt.threads : attn::available_cpus();
}

attn::Config load_config_with_flags(const Options& opt) {
  attn::ModelFlags flags{opt.model, opt.layer, opt.model_type, opt.with_residual_norm};
  flags.decoder_layer = opt.decoder_layer;
  flags.cross = opt.cross;
  flags.input_norm = opt.residual;
  flags.tokens = opt.tokens.has_value();
  flags.encoder_output = opt.encoder_output.value_or("");
  attn::Config cfg = attn::load_config(opt.config, flags);
  // Relative paths on the command line resolve against the working directory.
  if (opt.weights) {
    cfg.weights = *opt.weights;
    cfg.init_seed.reset();
  }
  if (opt.layout && !opt.dump_weights) cfg.layout = attn::parse_layout(*opt.layout);
  if (opt.attention_mask) {  // the key's value, so the key's checks and messages apply
    if (!cfg.padding_mask_path.empty() || cfg.padding_mask_inline)
      throw attn::Error(attn::Exit::usage,
                        "--attention-mask: cannot be combined with the config's padding_mask; "
                        "both mark padded keys, with opposite meanings");
    cfg.attention_mask = {};
    cfg.attention_mask.path = *opt.attention_mask;
  }
  if (opt.out_dir) cfg.output_dir = *opt.out_dir == kStdoutDir ? "" : *opt.out_dir;
  if (opt.no_attn) cfg.output_attention = false;
  if (opt.average_heads) cfg.output_average_heads = true;
  if (opt.rope_precision && cfg.spec.rope)  // a layer without rope (NoPE) has no angles
    cfg.spec.rope->precision = *opt.rope_precision == "float32" ? attn::RopePrecision::float32
                                                                : attn::RopePrecision::float64;
  attn::resolve_config(cfg);
  // Bytes of a .npy would garble the terminal; a redirect or `-o -` says
  // they are wanted. --show and --dump-weights print text whatever --format.
  const bool binary_stdout = opt.format == Format::npy && cfg.output_dir.empty() && !opt.show &&
                             !opt.dump_weights && !opt.input_list;
  if (binary_stdout && !(opt.out_dir && *opt.out_dir == kStdoutDir) && stdout_is_terminal())
    throw attn::Error(attn::Exit::usage,
                      "--format npy: stdout is a terminal; redirect it (> file.npy, | program), "
                      "give -o DIR, or -o - to write the bytes anyway");
  return cfg;
}

}  // namespace app
