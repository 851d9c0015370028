// --head-stats across runs: the per-layer tables of `--layer all` put in one
// table, and a batch's per-input tables merged into means and standard
// deviations over the inputs (attn/head_stats.h), read back from the result
// folders so inputs and layers done by an earlier run count too.
#pragma once

#include <string>
#include <vector>

#include "attn/output.h"

namespace app {

// DIR/<folder>/head_stats.json of each folder, rows concatenated, staged in
// `out` as head_stats.csv and head_stats.json.
void stage_layer_head_stats(attn::OutputDir& out, const std::string& dir,
                            const std::vector<std::string>& folders);

// The same files, merged over the folders (one per input).
void stage_batch_head_stats(attn::OutputDir& out, const std::string& dir,
                            const std::vector<std::string>& folders);

}  // namespace app
