// Suggestions for mistyped names: the config's unknown keys and the command
// line's unknown flags ("did you mean ...?") use the same measure.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace attn {

// The known name nearest to `name` (case-insensitive optimal string alignment
// distance: Levenshtein plus adjacent transposition, so "hidden_szie" is one
// edit from "hidden_size"), and that distance. {"", SIZE_MAX} when `known` is
// empty. Only the first 64 characters of `name` are compared.
std::pair<std::string, std::size_t> nearest_name(const std::string& name,
                                                 const std::vector<std::string>& known);

// Whether a suggestion at distance `d` from `best` is close enough to offer
// on its own (at most 2 edits, or a third of the name's length).
bool close_enough(const std::string& best, std::size_t d);

}  // namespace attn
