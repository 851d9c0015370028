// attn-run's entry point: parse flags, set up logging, run one mode, and map
// every failure to one stderr line and a sysexits.h code (CONTRACT.md).
#include <spdlog/sinks/sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <exception>
#include <string_view>

#include "attn/attention.h"
#include "attn/error.h"
#include "attn/escape.h"
#include "attn/output.h"
#include "cli/help.h"
#include "cli/options.h"
#include "cli/stdout_writer.h"
#include "modes/modes.h"
#include "pictures/plot_module.h"

namespace {

// A message escaped for one line of a terminal, and bounded: one that echoes
// a huge input (a 4 MB line of an --input-list on stdin, a path as long)
// keeps its start and its end, the middle cut.
std::string shown(std::string_view message) {
  constexpr std::size_t kHead = 1500, kTail = 500;
  if (message.size() <= kHead + kTail + 100) return attn::printable(message);
  return attn::printable_prefix(message.substr(0, kHead), kHead) + " [" +
         std::to_string(message.size() - kHead - kTail) + " bytes cut] " +
         attn::printable(message.substr(message.size() - kTail));
}

// The one place an error reaches stderr: the message (which may carry a
// user's path, key, label or archive member name) is escaped here, so it stays
// one line and holds no terminal command (CONTRACT.md "Exit codes").
int fail(const std::string& message, attn::Exit code) {
  std::fflush(stdout);
  std::fprintf(stderr, "attn-run: error: %s\n", shown(message).c_str());
  return static_cast<int>(code);
}

// The log's stderr sink with every message escaped on its way out: the one
// place log lines (warnings naming files, labels, folders) are made safe.
class EscapingSink : public spdlog::sinks::sink {
 public:
  EscapingSink() : inner_(std::make_shared<spdlog::sinks::stderr_color_sink_mt>()) {}
  void log(const spdlog::details::log_msg& msg) override {
    const std::string text = shown({msg.payload.data(), msg.payload.size()});
    spdlog::details::log_msg escaped = msg;
    escaped.payload = spdlog::string_view_t(text.data(), text.size());
    inner_->log(escaped);
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> f) override {
    inner_->set_formatter(std::move(f));
  }

 private:
  std::shared_ptr<spdlog::sinks::sink> inner_;
};

void setup_logging(const app::Options& opt) {
  auto logger = std::make_shared<spdlog::logger>("attn-run", std::make_shared<EscapingSink>());
  logger->set_pattern("attn-run: %^%l%$: %v");
  logger->set_level(opt.quiet     ? spdlog::level::err
                    : opt.verbose ? spdlog::level::debug
                                  : spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace

int main(int argc, char** argv) {
  attn::use_own_threads_only();  // one threading layer: attn-run's workers
  app::guard_standard_fds();
  std::signal(SIGPIPE, SIG_IGN);  // EPIPE is handled where stdout is written
  attn::install_cleanup_signal_handlers();

  app::Options opt;
  CLI::App cli{"attn-run"};
  app::setup_options(cli, opt);
  try {
    cli.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return cli.exit(e);  // --help, --version: print and exit 0
  } catch (const CLI::ParseError& e) {
    std::string what = app::parse_error_message(e.what(), {argv + 1, argv + argc});
    if (dynamic_cast<const CLI::ExtrasError*>(&e))
      what = app::unknown_argument_message(cli, cli.remaining());
    return fail(what, attn::Exit::usage);  // CLI11's own 100-114 codes map to 64
  }
  opt.dump_weights = cli.get_option("--dump-weights")->count() > 0;
  // An empty value (an unset shell variable: --layer "$L") would silently mean
  // the flag's absence: no output folder (stdout), the model's table instead of
  // a run, every head.
  const char* const non_empty[][2] = {
      {"--out-dir", "a folder name"},
      {"--config", "a config file"},
      {"--model", "a model folder or a .gguf file"},
      {"--layer", "a layer number (5), all, a range (3-7), a list (0,5) or last:N"},
      {"--model-type", "a model_type"},
      {"--encoder-output", "the encoder's output file"},
      {"--weights", "a weights file or folder"},
      {"--input", "a file, a folder or -"},
      {"--padding-mask", "a mask file"},
      {"--heads", "a list such as 0,3,7-9"},
      {"--queries", "a list such as 0-99,last:16"},
      {"--keys", "a list such as 0,last:16"},
      {"--input-list", "a list file"},
      {"--compare", "a .npy file"}};
  for (const auto& [flag, what] : non_empty) {
    const CLI::Option* o = cli.get_option_no_throw(flag);
    if (o == nullptr || o->count() == 0) continue;
    for (const std::string& v : o->results())
      if (v.empty())
        return fail(std::string(flag) + ": expected " + what + ", found an empty string",
                    attn::Exit::usage);
  }

  try {
    if (!opt.completion_shell.empty()) return app::print_completion(cli);
    app::apply_layer_flag(opt);
    app::apply_renamed_flags(opt);
    app::check_option_combinations(opt);
    // An SVG or PNG is drawn by the picture module (cairo): a missing or stale
    // one fails here, after the flags and before any input is read (exit 70).
    if (app::any_plot_ends_with(opt, ".svg") || app::any_plot_ends_with(opt, ".png"))
      app::load_plot_module();
    setup_logging(opt);
    // Mode dispatch, in this one place.
    if (opt.merge_dir) {
      const int code = app::run_merge_shards(opt);
      // After the merge, so a failure stays one line.
      if (opt.merge_dir_old_name)
        spdlog::warn("--merge-summaries is now --merge-shards (the old name still works)");
      return code;
    }
    if (opt.info) return app::run_gguf_info(opt);
    if (!app::model_summary_folder(opt).empty()) return app::run_model_summary(opt);
    if (opt.dump_weights) return app::run_dump_weights(opt);
    if (opt.layers) return app::run_layers(opt);
    if (opt.input_list) return app::run_input_list(opt);
    return app::run_forward(opt);
  } catch (const attn::Error& e) {
    return fail(e.what(), e.code());
  } catch (const std::bad_alloc&) {
    // The estimates before the work (attn/run.h) should catch this first;
    // an allocation that still fails is the same class of failure.
    return fail("memory: an allocation failed: the run needs more memory than the machine allows",
                attn::Exit::unavailable);
  } catch (const std::exception& e) {
    return fail(std::string("internal error (please report): ") + e.what(), attn::Exit::software);
  }
}
