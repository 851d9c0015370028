// The model families: one row of data per Hugging Face model_type
// (family_row.h), each as its configuration_<type>.py and modeling_<type>.py
// in transformers read config.json. The supported list (CONTRACT.md, README,
// errors, tests) is this table, in this order: its groups of rows are
// families_core.cpp, families_decoders.cpp, families_encoders.cpp,
// families_features.cpp, families_text.cpp, families_clipped.cpp, families_vl.cpp,
// families_towers.cpp, families_seq2seq.cpp and families_hybrid.cpp (table.h).
#include <stdexcept>

#include "family/family_row.h"
#include "family/table.h"

namespace attn::family {

const Row& Table::of(const std::string& type) const {
  for (const Row& r : rows_)
    if (r.model_type == type) return r;
  throw std::logic_error("family table: no row " + type + " to derive from");
}

const std::vector<Row>& rows() {
  static const std::vector<Row> t = [] {
    Table table;
    add_core_rows(table);
    add_decoder_rows(table);
    add_encoder_rows(table);
    add_feature_rows(table);
    add_text_rows(table);
    add_clipped_rows(table);
    add_vl_rows(table);
    add_tower_rows(table);
    add_seq2seq_rows(table);
    add_hybrid_rows(table);
    return table.take();
  }();
  return t;
}

const Row* row_of(const std::string& model_type) {
  for (const Row& r : rows())
    if (r.model_type == model_type) return &r;
  return nullptr;
}

}  // namespace attn::family
