// Index lists of the map selection flags (CONTRACT.md "(v3) Selecting and
// reducing maps"): --heads 0,3,7-9, --queries 0-99,last:16, --keys ...
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace app {

// `spec` parsed against an axis of n entries: comma-separated items, each a
// number, an inclusive range a-b (a <= b) or last:N (the last N entries,
// N <= n). Kept in the order given, a repeated index kept once. "" = every
// index 0..n-1. Exit::usage naming `flag`, and `what` ("head", "query row",
// "key") for an index past the axis.
std::vector<std::size_t> parse_index_list(const std::string& spec, std::size_t n,
                                          const std::string& flag, const std::string& what);

}  // namespace app
