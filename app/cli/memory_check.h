// Memory asked for before the work (CONTRACT.md "Exit codes", 71): the big
// allocations of a run are estimated from the shapes and compared with what
// the machine allows, so a run that cannot fit fails at once naming the key
// or input that drives the size, instead of dying later with bad_alloc.
#pragma once

#include <cstddef>
#include <string>

#include "attn/config.h"

namespace app {

// Bytes this process may use: physical memory, lowered by RLIMIT_AS and
// RLIMIT_DATA when they are set.
std::size_t memory_limit();

// Exit 71 "<culprit>: <what> needs N bytes (X GB), more than the M bytes ..."
// when `bytes` exceeds memory_limit().
void check_memory(std::size_t bytes, const std::string& culprit, const std::string& what);

// Saturating a * b (size_t max on overflow), for estimates.
std::size_t mul_sat(std::size_t a, std::size_t b);

// A seeded init allocates every parameter: checked before it runs.
void check_init_memory(const attn::Config& cfg);

}  // namespace app
