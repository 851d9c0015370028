#include "cli/help.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <utility>

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
    "           [--pack]                     many inputs, weights loaded once (--pack: a few\n"
    "                                        files per shard in DIR/pack-K-of-N/)\n"
    "  attn-run --merge-shards DIR           join a sharded batch's shards (or packs) in DIR\n"
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

namespace {

// CLI11's messages, taken apart by hand (std::regex cost seconds of every build):
// a flag as CLI11 names it (a dash, then dashes and word characters), a run of
// digits, a word without spaces.
bool message_flag(const std::string& s) {
  return !s.empty() && s[0] == '-' && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_';
  });
}
bool message_digits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}
bool message_word(const std::string& s) {
  return !s.empty() &&
         std::none_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
}
// s without `prefix` at its front, or nullopt.
std::optional<std::string> message_after(const std::string& s, const std::string& prefix) {
  if (s.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  return s.substr(prefix.size());
}
// s split at the last `sep`: {before, after}, or nullopt.
std::optional<std::pair<std::string, std::string>> message_split_last(const std::string& s,
                                                                      const std::string& sep) {
  const auto at = s.rfind(sep);
  if (at == std::string::npos) return std::nullopt;
  return std::make_pair(s.substr(0, at), s.substr(at + sep.size()));
}

}  // namespace

std::string parse_error_message(const std::string& m, const std::vector<std::string>& args) {
  // "FLAG = VALUE" after "Could not convert: ".
  if (const auto rest = message_after(m, "Could not convert: ")) {
    const auto eq = rest->find(" = ");
    if (eq != std::string::npos && message_flag(rest->substr(0, eq)))
      return rest->substr(0, eq) + ": expected a whole number, found '" + rest->substr(eq + 3) +
             "'";
  }
  const auto colon = m.find(": ");
  const std::string flag = colon == std::string::npos ? "" : m.substr(0, colon);
  const std::string rest = colon == std::string::npos ? "" : m.substr(colon + 2);
  if (message_flag(flag)) {
    // "At Most N required but received M"
    if (const auto tail = message_after(rest, "At Most ")) {
      const auto parts = message_split_last(*tail, " required but received ");
      if (parts && message_digits(parts->first) && message_digits(parts->second))
        return flag + ": given " + parts->second + " times; give it once";
    }
    // "N required TYPE missing"
    const auto req = rest.find(" required ");
    const std::string missing = " missing";
    if (req != std::string::npos && message_digits(rest.substr(0, req)) &&
        rest.size() > req + 10 + missing.size() &&
        rest.compare(rest.size() - missing.size(), missing.size(), missing) == 0) {
      // "LIST", or "N:INT in [1 - 1024]" for a checked number: its name.
      std::string type = rest.substr(req + 10, rest.size() - missing.size() - req - 10);
      type = type.substr(0, type.find_first_of(": "));
      if (!type.empty()) return flag + ": expected a value (" + type + ") after it";
    }
    // "Value V not in range A to B"
    if (const auto tail = message_after(rest, "Value ")) {
      const auto value_range = message_split_last(*tail, " not in range ");
      const auto bounds =
          value_range ? message_split_last(value_range->second, " to ") : std::nullopt;
      if (bounds && message_word(bounds->first) && message_word(bounds->second))
        return flag + ": expected a whole number from " + bounds->first + " to " + bounds->second +
               ", found '" + value_range->first + "'";
    }
  }
  // "[FLAG]: V not in {CHOICES}"
  if (colon != std::string::npos && (colon == 0 || message_flag(flag)) && !rest.empty() &&
      rest.back() == '}') {
    if (const auto parts = message_split_last(rest.substr(0, rest.size() - 1), " not in {")) {
      const std::string& value = parts->first;
      const std::string who = colon == 0 ? flag_of_value(args, value) : flag;
      std::string choices = parts->second;
      for (std::size_t at = 0; (at = choices.find(',', at)) != std::string::npos; at += 2)
        choices.replace(at, 1, ", ");
      return (who.empty() ? std::string("a flag") : who) + ": expected one of " + choices +
             "; found '" + value + "'";
    }
  }
  return m;
}

}  // namespace app
