#include "cli/help.h"

#include <CLI/CLI.hpp>

#include "attn/escape.h"
#include "attn/spelling.h"

namespace app {
namespace {

// One line per mode. TODO(issue 11): `attn-run --model DIR --layer N ...`
// once those flags exist.
constexpr const char* kUsage =
    "\nUsage:\n"
    "  attn-run --config FILE [--weights PATH] [--input PATH|-] [-o DIR] [options]\n"
    "                                        run one layer; context on stdout or in DIR\n"
    "  attn-run --config FILE --input-list LIST -o DIR [--shard K/N]\n"
    "                                        many inputs, weights loaded once\n"
    "  attn-run --merge-summaries DIR        join the shards' summaries into DIR/summary.json\n"
    "  attn-run --config FILE --dump-weights [DIR|FILE] [--layout NAME]\n"
    "                                        list the weights, or write them out\n"
    "  attn-run --help | --version\n";

class UsageFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App*, std::string) const override { return kUsage; }
};

void collect(const CLI::App& app, std::vector<const CLI::Option*>& out) {
  for (const CLI::Option* o : app.get_options()) out.push_back(o);
  // Option groups are nameless subcommands.
  for (const CLI::App* sub :
       app.get_subcommands([](const CLI::App* s) { return s->get_name().empty(); }))
    collect(*sub, out);
}

}  // namespace

void install_usage(CLI::App& app) { app.formatter(std::make_shared<UsageFormatter>()); }

std::vector<const CLI::Option*> all_options(const CLI::App& app) {
  std::vector<const CLI::Option*> out;
  collect(app, out);
  return out;
}

std::string unknown_argument_message(const CLI::App& app, const std::vector<std::string>& extras) {
  std::string first;
  for (const std::string& a : extras)
    if (a.size() > 1 && a[0] == '-') {
      first = a;
      break;
    }
  if (first.empty()) {
    const std::string what = extras.empty() ? std::string() : extras.front();
    return "'" + attn::printable(what) +
           "': unexpected argument (values follow their flag, as in --input x.npy; see --help)";
  }
  const std::string name = first.substr(0, first.find('='));  // --out_dir=x
  std::vector<std::string> known;
  for (const CLI::Option* o : all_options(app)) {
    if (o->get_group().empty()) continue;  // hidden
    for (const std::string& l : o->get_lnames()) known.push_back("--" + l);
  }
  std::string msg = attn::printable(name) + ": unknown flag";
  const auto [best, dist] = attn::nearest_name(name, known);
  if (!best.empty() && attn::close_enough(best, dist)) msg += "; did you mean " + best + "?";
  return msg + " (see --help)";
}

}  // namespace app
