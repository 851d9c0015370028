#include "cli/help.h"

#include <CLI/CLI.hpp>
#include <regex>
#include <string>

#include "attn/escape.h"
#include "attn/spelling.h"

namespace app {
namespace {

// One line per mode.
constexpr const char* kUsage =
    "\nUsage:\n"
    "  attn-run --config FILE [--weights PATH] [--input PATH|-] [-o DIR] [options]\n"
    "                                        run one layer; context on stdout or in DIR\n"
    "  attn-run --model DIR|FILE.gguf --layer N --input PATH|- [-o DIR] [options]\n"
    "                                        one layer of a Hugging Face folder or a GGUF file\n"
    "  attn-run --model DIR|FILE.gguf --layer all|A-B|LIST --input STACK.npy|DIR -o DIR\n"
    "                                        several layers, each into DIR/layer_N/\n"
    "  attn-run --model DIR|FILE.gguf        the model's layers as a table\n"
    "  attn-run --config FILE --input-list LIST -o DIR [--shard K/N|auto[:N]] [--keep-going]\n"
    "                                        many inputs, weights loaded once\n"
    "  attn-run --merge-shards DIR           join a sharded batch's shards in DIR\n"
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

namespace {

// The flag a value was given to: "--x v" or "--x=v" in args; "" if none.
std::string flag_of_value(const std::vector<std::string>& args, const std::string& value) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("-", 0) != 0) continue;
    const auto eq = a.find('=');
    if (eq != std::string::npos && a.substr(eq + 1) == value) return a.substr(0, eq);
    if (i + 1 < args.size() && args[i + 1] == value) return a;
  }
  return "";
}

}  // namespace

std::string parse_error_message(const std::string& m, const std::vector<std::string>& args) {
  std::smatch g;
  const auto is = [&m, &g](const char* pattern) {
    return std::regex_match(m, g, std::regex(pattern));
  };
  if (is(R"((-[-\w]*): At Most \d+ required but received (\d+))"))
    return g[1].str() + ": given " + g[2].str() + " times; give it once";
  if (is(R"((-[-\w]*): \d+ required (\S+) missing)"))
    return g[1].str() + ": expected a value (" + g[2].str() + ") after it";
  if (is(R"(Could not convert: (-[-\w]*) = (.*))"))
    return g[1].str() + ": expected a whole number, found '" + g[2].str() + "'";
  if (is(R"((-[-\w]*): Value (.*) not in range (\S+) to (\S+))"))
    return g[1].str() + ": expected a whole number from " + g[3].str() + " to " + g[4].str() +
           ", found '" + g[2].str() + "'";
  if (is(R"((-[-\w]*)?: (.*) not in \{(.*)\})")) {
    const std::string flag = g[1].matched ? g[1].str() : flag_of_value(args, g[2].str());
    std::string choices = g[3].str();
    for (std::size_t at = 0; (at = choices.find(',', at)) != std::string::npos; at += 2)
      choices.replace(at, 1, ", ");
    return (flag.empty() ? std::string("a flag") : flag) + ": expected one of " + choices +
           "; found '" + g[2].str() + "'";
  }
  return m;
}

}  // namespace app
