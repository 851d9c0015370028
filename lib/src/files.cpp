// STUB (being written): see attn/files.h
#include "attn/files.h"
#include "attn/error.h"
namespace attn {
std::vector<std::uint8_t> read_file(const std::string& path, std::size_t) { throw Error(Exit::software, path + ": not built yet"); }
std::vector<std::uint8_t> read_stdin(std::size_t) { throw Error(Exit::software, "-: not built yet"); }
std::string resolve_path(const std::string& base, const std::string& p) { return p.empty() || p[0] == '/' || base.empty() ? p : base + "/" + p; }
bool is_directory(const std::string&) { return false; }
}
