#include "options.h"


#include "attn/error.h"
#include "attn/files.h"
#include "attn/layout.h"
#include "attn/version.h"

namespace app {

void setup_options(CLI::App& app, Options& opt) {
  app.description(
      "attn-run: run single-head, multi-head or causal self-attention layers from a JSON config\n"
      "and PyTorch weights saved as .npy, with PyTorch's numbers.");
  app.set_version_flag("--version", std::string("attn-run ") + attn::version() + "\nBLAS: " +
                                        attn::blas_info() + "\n");
  app.footer(
      "Examples:\n"
      "  attn-run --config configs/raschka_mha_causal.json\n"
      "  attn-run --config configs/gpt2_small_causal.json --out-dir out/\n"
      "  attn-run --config c.json --input x.npy --format npy > context.npy\n"
      "  attn-run --config c.json --dump-weights\n"
      "  attn-run --config c.json --dump-weights dumped/ --layout separate\n"
      "Exit codes: 0 ok, 64 usage, 65 bad data, 66 missing input, 70 internal,\n"
      "73 cannot create output, 74 write error, 78 bad config.");

  auto* in = app.add_option_group("Input", "What to run");
  in->add_option("--config", opt.config, "JSON config (CONTRACT.md keys)")->required();
  in->add_option("--weights", opt.weights, "weights: folder of <key>.npy, .npz or .safetensors");
  in->add_option("--input", opt.input, "token embeddings (S, C) or (B, S, C): .npy or JSON; - = stdin");
  in->add_option("--padding-mask", opt.padding_mask, "(B, S) or (S,) mask .npy, true = padded key");
  in->add_flag("--allow-nonfinite", opt.allow_nonfinite, "let NaN/inf in inputs and weights through");

  auto* out = app.add_option_group("Output", "Where results go");
  out->add_option("--out-dir", opt.out_dir, "write context.npy, attention.npy, run.json here");
  out->add_flag("--no-attn", opt.no_attn, "do not write (or hold) the attention maps");
  out->add_option("--format", opt.format_name, "stdout format without --out-dir (default text)")
      ->check(CLI::IsMember({"text", "json", "npy"}))
      ->each([&opt](const std::string& v) {
        opt.format = v == "json" ? Format::json : v == "npy" ? Format::npy : Format::text;
      });
  out->add_option("--dump-weights", opt.dump_dir,
                  "print a table of the weights, or write them to DIR as <key>.npy")
      ->expected(0, 1)
      ->each([&opt](const std::string&) { opt.dump_weights = true; });
  out->add_option("--layout", opt.layout, "weight layout to dump as (or to read with)")
      ->check(CLI::IsMember(attn::layout_names()));

  auto* run = app.add_option_group("Run", "How to run");
  run->add_option("--threads", opt.threads, "worker threads (default: all cores)")
      ->check(CLI::Range(1, 1024));
  run->add_flag("-q,--quiet", opt.quiet, "print nothing but errors");
  run->add_flag("-v,--verbose", opt.verbose, "debug logs on stderr");
}

attn::Config load_config_with_flags(const Options& opt) {
  attn::Config cfg = attn::load_config(opt.config);
  // Relative paths on the command line resolve against the working directory.
  if (opt.weights) {
    cfg.weights = *opt.weights;
    cfg.init_seed.reset();
  }
  if (opt.layout && !opt.dump_weights) cfg.layout = attn::parse_layout(*opt.layout);
  if (opt.out_dir) cfg.output_dir = *opt.out_dir;
  if (opt.no_attn) cfg.output_attention = false;
  attn::resolve_config(cfg);
  return cfg;
}

}  // namespace app
