// STUB (being written): see attn/output.h
#include "attn/output.h"
#include "attn/error.h"
namespace attn {
OutputDir::OutputDir(std::string dir) : dir_(std::move(dir)) {}
OutputDir::~OutputDir() {}
void OutputDir::add(const std::string&, const std::string&) { throw Error(Exit::software, "not built yet"); }
int OutputDir::add_streamed_npy(const std::string&, const std::vector<std::size_t>&) { throw Error(Exit::software, "not built yet"); }
void OutputDir::write_at(int, std::size_t, const float*, std::size_t) {}
void OutputDir::commit() {}
std::string OutputDir::temp_name(const std::string& n) const { return n; }
void OutputDir::discard() {}
void install_cleanup_signal_handlers() {}
}
