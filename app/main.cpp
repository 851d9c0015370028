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
    if (what.find("--config is required") != std::string::npos)
      what = "--config: a config file is required (try --help)";
    if (const auto* extras = dynamic_cast<const CLI::ExtrasError*>(&e)) {
      (void)extras;
      auto args = cli.remaining();
      what = (args.empty() ? std::string("argument") : args.front()) +
             ": unknown flag or argument (see --help)";
    }
    return fail(what, attn::Exit::usage);  // CLI11's own 100-114 codes map to 64
  }
  opt.dump_weights = cli.get_option("--dump-weights")->count() > 0;

  try {
    setup_logging(opt);
    return opt.dump_weights ? app::run_dump_weights(opt) : app::run_forward(opt);
  } catch (const attn::Error& e) {
    return fail(e.what(), e.code());
  } catch (const std::bad_alloc&) {
    return fail("out of memory", attn::Exit::software);
  } catch (const std::exception& e) {
    return fail(std::string("internal error (please report): ") + e.what(), attn::Exit::software);
  }
}
