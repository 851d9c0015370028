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

// The one error line for a flag CLI11 refused, in attn-run's words and
// naming the flag: "--input: given 2 times; give it once", "--layer:
// expected a value (N) after it", "--threads: expected a whole number from 1
// to 1024, found 'x'", "--format: expected one of text, json, npy; found
// 'xml'". `args` (argv without the program) finds the flag where CLI11's
// message leaves it out; a message of another form is passed on as it is.
std::string parse_error_message(const std::string& cli11_message,
                                const std::vector<std::string>& args);

}  // namespace app
