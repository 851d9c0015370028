// The main job: load, run the forward pass, write the outputs.
#include <chrono>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "attn/attention.h"
#include "attn/error.h"
#include "attn/files.h"
#include "attn/npy.h"
#include "attn/output.h"
#include "attn/report.h"
#include "attn/run.h"
#include "modes.h"
#include "stdout_writer.h"

namespace app {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

constexpr std::size_t kMaxStdinBytes = std::size_t(16) << 30;

// Streams each block of attention rows into attention.npy as it is computed.
class FileSink : public attn::AttentionSink {
 public:
  FileSink(attn::OutputDir& out, int handle, std::size_t H, std::size_t S)
      : out_(out), handle_(handle), H_(H), S_(S) {}
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* rows) override {
    out_.write_at(handle_, ((b * H_ + h) * S_ + i0) * S_, rows, n * S_);
  }

 private:
  attn::OutputDir& out_;
  int handle_;
  std::size_t H_, S_;
};

std::string format_stdout(const attn::Tensor& t, Format f) {
  switch (f) {
    case Format::json: return attn::format_tensor_json(t);
    case Format::npy: return attn::encode_npy(t);
    case Format::text: break;
  }
  return attn::format_tensor_text(t);
}

}  // namespace

int run_forward(const Options& opt) {
  const auto t_start = Clock::now();
  attn::Config cfg = load_config_with_flags(opt);
  attn::LoadOptions lo;
  lo.allow_nonfinite = opt.allow_nonfinite;
  lo.input_path = opt.input;
  lo.padding_mask_path = opt.padding_mask;
  if (opt.input && *opt.input == "-") lo.stdin_bytes = attn::read_stdin(kMaxStdinBytes);
  attn::LoadedRun r = attn::load_run(cfg, lo);
  const double load_ms = ms_since(t_start);

  const std::size_t B = r.x.shape[0], S = r.x.shape[1], H = std::size_t(r.weights.H);
  const bool to_dir = !cfg.output_dir.empty();
  const bool want_maps = to_dir && cfg.output_attention;
  const int threads = opt.threads > 0 ? opt.threads
                                      : int(std::max(1u, std::thread::hardware_concurrency()));
  spdlog::debug("weights {} ({}), input {} {}, threads {}", r.weights_source,
                attn::layout_name(r.layout), r.input_source, attn::shape_str(r.x.shape), threads);

  // The folder is created (and checked writable) before the compute, so an
  // unwritable output fails fast; nothing appears in it before commit().
  std::optional<attn::OutputDir> out;
  std::optional<FileSink> sink;
  std::vector<std::size_t> maps_shape = {H, S, S};
  if (r.batched) maps_shape.insert(maps_shape.begin(), B);
  if (to_dir) out.emplace(cfg.output_dir);
  if (want_maps) sink.emplace(*out, out->add_streamed_npy("attention.npy", maps_shape), H, S);

  attn::ForwardOptions fo;
  fo.attention = sink ? &*sink : nullptr;
  fo.threads = threads;
  attn::Tensor context;
  const auto t_compute = Clock::now();
  attn::ForwardStats stats =
      attn::forward(r.weights, attn::attention_spec(cfg), r.x, r.padding ? &*r.padding : nullptr,
                    context, fo);
  const double compute_ms = ms_since(t_compute);
  if (stats.fully_masked_rows > 0)
    spdlog::warn("{} attention rows have every key masked; their weights and attention output "
                 "are zero (context = output bias)",
                 stats.fully_masked_rows);
  if (!r.batched) context.shape.erase(context.shape.begin());  // (S, O) in, (S, O) out

  if (!to_dir) {
    write_stdout(format_stdout(context, opt.format));
    return 0;
  }

  const auto t_write = Clock::now();
  out->add("context.npy", attn::encode_npy(context));
  if (!want_maps) out->remove_on_commit("attention.npy");
  const double write_ms = ms_since(t_write);
  nlohmann::json run;
  run["attn_run_version"] = ATTN_VERSION;
  run["config"] = attn::config_to_json(cfg);
  run["layout"] = attn::layout_name(r.layout);
  run["layout_detected"] = r.layout_detected;
  run["weights"] = r.weights_source;
  run["input"] = r.input_source;
  run["shapes"] = {{"input", r.batched ? r.x.shape : std::vector<std::size_t>{S, r.x.shape[2]}},
                   {"context", context.shape},
                   {"attention", want_maps ? nlohmann::json(maps_shape) : nlohmann::json()},
                   {"padding_mask", r.padding ? nlohmann::json(r.padding->shape) : nlohmann::json()}};
  run["dtypes"] = {{"compute", "float32"}, {"context", "float32"},
                   {"attention", want_maps ? nlohmann::json("float32") : nlohmann::json()}};
  run["threads"] = threads;
  run["fully_masked_rows"] = stats.fully_masked_rows;
  run["timings"] = {{"load_ms", load_ms}, {"compute_ms", compute_ms}, {"write_ms", write_ms}};
  run["flops"] = stats.flops;
  run["flops_note"] = "2 per multiply-add actually computed; causal blocks above the diagonal are "
                      "skipped, so causal FLOPs are about half the dense count";
  run["gflops"] = compute_ms > 0 ? stats.flops / (compute_ms * 1e6) : 0.0;
  out->add("run.json", run.dump(2) + "\n");
  out->commit();
  spdlog::info("wrote {}/context.npy{} and run.json", cfg.output_dir,
               want_maps ? ", attention.npy" : "");
  return 0;
}

}  // namespace app
