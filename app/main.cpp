// attn-run's entry point: parse flags, set up logging, run one mode, and map
// every failure to one stderr line and a sysexits.h code (CONTRACT.md).
#include <csignal>
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "attn/error.h"
#include "attn/output.h"
#include "help.h"
#include "modes.h"
#include "options.h"

namespace {

int fail(const std::string& message, attn::Exit code) {
  std::fflush(stdout);
  std::fprintf(stderr, "attn-run: error: %s\n", message.c_str());
  return static_cast<int>(code);
}

void setup_logging(const app::Options& opt) {
  auto logger = spdlog::stderr_color_mt("attn-run");
  logger->set_pattern("attn-run: %^%l%$: %v");
  logger->set_level(opt.quiet ? spdlog::level::err
                              : opt.verbose ? spdlog::level::debug : spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace

int main(int argc, char** argv) {
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
    std::string what = e.what();
    if (dynamic_cast<const CLI::ExtrasError*>(&e))
      what = app::unknown_argument_message(cli, cli.remaining());
    return fail(what, attn::Exit::usage);  // CLI11's own 100-114 codes map to 64
  }
  opt.dump_weights = cli.get_option("--dump-weights")->count() > 0;

  try {
    if (!opt.completion_shell.empty()) return app::print_completion(cli);
    app::check_option_combinations(opt);
    setup_logging(opt);
    if (opt.merge_dir) return app::run_merge_summaries(opt);
    return opt.dump_weights ? app::run_dump_weights(opt) : app::run_forward(opt);
  } catch (const attn::Error& e) {
    return fail(e.what(), e.code());
  } catch (const std::bad_alloc&) {
    return fail("out of memory", attn::Exit::software);
  } catch (const std::exception& e) {
    return fail(std::string("internal error (please report): ") + e.what(), attn::Exit::software);
  }
}
