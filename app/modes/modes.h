// The modes of attn-run, one file each (CLI11 example style).
#pragma once

#include <string>
#include <vector>

#include "attn/stats.h"
#include "cli/options.h"

namespace app {

int run_forward(const Options& opt);        // the forward pass (run_forward.cpp)
int run_layers(const Options& opt);         // --layer all|3-7|0,5 (run_layers.cpp)
int run_input_list(const Options& opt);     // --input-list, --shard (input_list.cpp)
int run_dump_weights(const Options& opt);   // --dump-weights (dump_weights.cpp)
int run_merge_shards(const Options& opt);   // --merge-shards (merge_shards.cpp)
int run_model_summary(const Options& opt);  // --model DIR alone: a table (model_summary.cpp)
int run_gguf_info(const Options& opt);      // --model FILE.gguf --info (gguf_info.cpp)
// --completion bash: the script on stdout, generated from `cli`'s options (completion.cpp).
int print_completion(const CLI::App& cli);

// The --stats table on stderr (nothing with -q); `what` names the input.
void print_stats_table(const std::vector<attn::HeadStats>& stats, const std::string& what,
                       bool quiet);

}  // namespace app
