// What the command line says to a person: the usage line of each mode in
// --help, and "did you mean" for a mistyped flag.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace app {

// The usage lines of every mode, in place of CLI11's "Usage: attn-run [OPTIONS]".
void install_usage(CLI::App& app);

// Every option of `app`, its option groups included (CLI11's get_options
// lists only the top level).
std::vector<const CLI::Option*> all_options(const CLI::App& app);

// The one error line (without "attn-run: error: ") for arguments CLI11 did
// not expect: the first unknown flag with the nearest known one when it is
// close ("--out_dir: unknown flag; did you mean --out-dir?").
std::string unknown_argument_message(const CLI::App& app, const std::vector<std::string>& extras);

}  // namespace app
