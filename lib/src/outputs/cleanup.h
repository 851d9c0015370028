// The live temporaries of every output folder, for the signal handlers that
// remove them (install_cleanup_signal_handlers in attn/output.h): a file or
// staging folder is registered while it exists under its temporary name.
#pragma once

#include <csignal>
#include <string>

namespace attn {

// Registers `path` (a temporary file or hidden staging folder); returns its
// slot for live_remove, or nullptr when the path is too long to register.
void* live_add(const std::string& path);
void live_remove(void* slot);  // nullptr is a no-op

// Blocks the cleanup signals on this thread (a commit's renames are not cut
// in half); `previous` receives the mask to restore.
void block_cleanup_signals(sigset_t* previous);

}  // namespace attn
