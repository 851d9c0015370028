// What makes a batch's results what they are (CONTRACT.md "(v3) Many layers,
// resumable batches" and "(v4) Families and schedulers"): every setting that
// changes what is written, one entry each, named as the user gives it
// ("--top-k", "config key \"rope\"", "weights file DIR/model-00002-of-00004.safetensors").
// A batch's manifest keeps it; a rerun whose settings differ is refused
// naming each entry that differs, so old results are never taken for new ones.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "attn/config.h"
#include "cli/options.h"

namespace app {

// A file as a fingerprint records it: size, modification time (ns) and the
// SHA-256 of its header (`header_bytes` from attn::weight_source_files, at
// least its first 64 KiB) and, for a file whose directory is at its end (a
// zip archive: .pt, .bin, .npz, each member's CRC-32 in it), its last MiB.
// {"missing": true} when the file cannot be read.
nlohmann::json file_identity(const std::string& path, std::size_t header_bytes = 0);

// The settings of a run with these flags and this resolved config (one
// layer's, for --layer all the first): a flat object, entry name -> value.
// `weights_source` is what the weights came from ("init(seed=1)" or a path).
nlohmann::json run_fingerprint(const Options& opt, const attn::Config& cfg,
                               const std::string& weights_source);

// Exit::cant_create (73) when `was` (a manifest's, at `manifest`) is not
// `now`: one line naming each entry that differs and how ("--top-k: was 5,
// now 3"; "weights file X: modified since"), then what to do.
void check_same_settings(const nlohmann::json& was, const nlohmann::json& now,
                         const std::string& manifest);

}  // namespace app
