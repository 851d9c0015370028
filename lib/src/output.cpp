// STUB (being written): see attn/output.h
#include "attn/output.h"
#include "attn/error.h"
namespace attn {
OutputDir::OutputDir(std::string dir) : dir_(std::move(dir)) {}
OutputDir::~OutputDir() {}
void OutputDir::add(const std::string&, const std::string&) { throw Error(Exit::software, "not built yet"); }
float* OutputDir::add_mapped_npy(const std::string&, const std::vector<std::size_t>&) { throw Error(Exit::software, "not built yet"); }
void OutputDir::commit() {}
std::string OutputDir::temp_name(const std::string& n) const { return n; }
void OutputDir::discard() {}
void install_cleanup_signal_handlers() {}
}
