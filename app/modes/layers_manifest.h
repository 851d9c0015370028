// DIR/manifest.json of a run over several layers (--layer all|A-B|LIST;
// CONTRACT.md "(v3) Many layers, resumable batches"): each layer's folder is
// committed as it finishes, with its entry here (its settings, its input, its
// line of DIR/run.json and, under --plot, its tiles of the model view), so a
// rerun after a kill computes only the layers that are missing and ends with
// the files a clean run writes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "attn/output.h"
#include "pictures/model_view.h"

namespace app {

class LayersManifest {
 public:
  // Reads DIR/manifest.json when present: exit 73 when it is not a manifest
  // of a run over layers (an --input-list batch, a --dump-weights folder).
  explicit LayersManifest(std::string dir);

  // The entry of layer folder `name` when an earlier run committed it with
  // these settings (`fingerprint`, run_fingerprint.h) from this input
  // (`input`, file_identity) and its folder still holds its results; null
  // otherwise (an input changed since is computed again). Exit 73 naming
  // each setting that differs when an earlier run made it with others.
  const nlohmann::json* done(const std::string& name, const nlohmann::json& fingerprint,
                             const nlohmann::json& input) const;

  // Records layer folder `name` (its fingerprint, input, "run" line and,
  // under --plot, "view") and stages DIR/manifest.json in `top`, to commit
  // together with the layer's folder.
  void record(const std::string& name, nlohmann::json entry, attn::OutputDir& top);

 private:
  std::string dir_;
  nlohmann::json layers_ = nlohmann::json::object();  // folder name -> entry
};

// A layer's tiles of the model view as the manifest keeps them (floats
// exactly, as base64 of their bytes), and back.
nlohmann::json view_to_json(const ModelViewLayer& v);
ModelViewLayer view_from_json(const nlohmann::json& j);

}  // namespace app
