// Reading whole files safely: regular files only (a folder, a FIFO or
// /dev/zero never hangs or exhausts memory), bounded size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// Whole contents of a regular file. Exit::no_input when missing, a folder,
// not a regular file or unreadable; Exit::data when larger than max_bytes.
std::vector<std::uint8_t> read_file(const std::string& path, std::size_t max_bytes);

// A read-only descriptor (O_CLOEXEC, non-blocking open) of a regular file
// and its size, with the same checks and errors as read_file; the caller
// closes it.
int open_regular_file(const std::string& path, std::size_t& size);

// Whole standard input, at most max_bytes (Exit::data past that).
std::vector<std::uint8_t> read_stdin(std::size_t max_bytes);

// `path` resolved against `base_dir` unless absolute (config-relative paths).
std::string resolve_path(const std::string& base_dir, const std::string& path);

bool is_directory(const std::string& path);

}  // namespace attn
