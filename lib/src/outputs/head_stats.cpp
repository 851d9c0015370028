// --head-stats as the rows stream (attn/head_stats.h).
//
// Letters: B batch, H heads, L query rows, T key positions, T' keys of a row,
// N sink keys, R recent keys.
#include "attn/head_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "kernels/row_scan.h"

namespace attn {

const std::vector<std::string>& head_stats_column_names() {
  static const std::vector<std::string> names = {"sink", "recent", "other", "entropy", "distance"};
  return names;
}

HeadStatsSink::HeadStatsSink(std::size_t B, std::size_t H, std::size_t T, std::size_t T_row,
                             std::size_t sink_keys, std::size_t recent,
                             std::vector<std::size_t> query_position)
    : B_(B),
      H_(H),
      L_(query_position.size()),
      T_(T),
      Tr_(T_row),
      N_(sink_keys),
      pos_(query_position),
      summary_(B, H, T, T_row, recent, std::move(query_position)),
      head_({B, H, L_, kHeadColumns}) {}

void HeadStatsSink::write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                               const float* rows /* (n, T') */) {
  summary_.write_rows(b, h, i0, n, rows);
  const std::size_t R = summary_.recent();
  float* out = head_.ptr() + ((b * H_ + h) * L_ + i0) * kHeadColumns;
  for (std::size_t r = 0; r < n; ++r, out += kHeadColumns) {
    const float* p = rows + r * Tr_;
    const std::size_t i = pos_.at(i0 + r);
    // keys i - R < j <= i from N on (clamped to the key positions)
    const std::size_t lo = std::max(N_, i + 1 > R ? i + 1 - R : 0), hi = std::min(T_, i + 1);
    out[kRowTotal] = float(kernels::sum_range(p, 0, Tr_));
    out[kSinkKeys] = float(kernels::sum_range(p, 0, std::min(N_, T_)));
    out[kRecentKeys] = lo < hi ? float(kernels::sum_range(p, lo, hi)) : 0.0f;
  }
}

DigestRequest HeadStatsSink::digest_request() const {
  DigestRequest r = summary_.digest_request();
  r.head = true;
  r.sink_keys = N_;
  r.argmax = false;  // the entropy and distance columns only: no top 1 to keep per row
  return r;
}

void HeadStatsSink::write_digests(std::size_t b, std::size_t h, std::size_t i0,
                                  const RowDigests& d) {
  if (!d.head) throw Error(Exit::software, "head statistics: digests without the head columns");
  summary_.write_digests(b, h, i0, d);
  std::copy(d.head, d.head + d.n * kHeadColumns,
            head_.ptr() + ((b * H_ + h) * L_ + i0) * kHeadColumns);
}

std::vector<HeadStatsRow> HeadStatsSink::result(std::size_t layer,
                                                const std::vector<std::size_t>& heads) const {
  const Tensor& summary = summary_.rows();  // (B, H, L, 5)
  std::vector<HeadStatsRow> out;
  for (std::size_t h = 0; h < H_; ++h) {
    HeadStatsRow row;
    row.layer = layer;
    row.head = heads.at(h);
    double sink = 0, recent = 0, entropy = 0, distance = 0;
    for (std::size_t b = 0; b < B_; ++b)
      for (std::size_t i = 0; i < L_; ++i) {
        const float* v = head_.ptr() + ((b * H_ + h) * L_ + i) * kHeadColumns;
        const float* s = summary.ptr() + ((b * H_ + h) * L_ + i) * kSummaryColumns;
        if (!(v[kRowTotal] > 0.0f)) continue;  // every key masked
        ++row.rows;
        sink += v[kSinkKeys];
        recent += v[kRecentKeys];
        entropy += s[kEntropy];
        distance += s[kMeanDist];
      }
    if (row.rows) {
      const double n = double(row.rows);
      row.sink = sink / n;
      row.recent = recent / n;
      row.other = 1.0 - row.sink - row.recent;
      row.entropy = entropy / n;
      row.distance = distance / n;
    }
    out.push_back(row);
  }
  return out;
}

std::string head_stats_csv(const std::vector<HeadStatsRow>& rows) {
  std::string out = "layer,head";
  for (const std::string& c : head_stats_column_names()) out += "," + c;
  out += "\n";
  char line[256];
  for (const HeadStatsRow& r : rows) {
    // %.9g: a float32 reads back exactly; these are means in double, shown to 9 digits.
    std::snprintf(line, sizeof line, "%zu,%zu,%.9g,%.9g,%.9g,%.9g,%.9g\n", r.layer, r.head, r.sink,
                  r.recent, r.other, r.entropy, r.distance);
    out += line;
  }
  return out;
}

nlohmann::json head_stats_json(const std::vector<HeadStatsRow>& rows, std::size_t sink_keys,
                               std::size_t recent) {
  nlohmann::json j;
  j["sink"] = sink_keys;
  j["recent"] = recent;
  j["columns"] = head_stats_column_names();
  j["columns_note"] =
      "per (layer, head), means over the selected query rows of every batch entry (rows with "
      "every key masked left out): sink = weight on keys 0..sink-1; recent = weight on the keys "
      "j with query - recent < j <= query and j >= sink; other = 1 - sink - recent "
      "(DuoAttention's score); entropy in nats; distance = mean |query - key| weighted by the "
      "row's weights";
  nlohmann::json list = nlohmann::json::array();
  for (const HeadStatsRow& r : rows)
    list.push_back({{"layer", r.layer},
                    {"head", r.head},
                    {"sink", r.sink},
                    {"recent", r.recent},
                    {"other", r.other},
                    {"entropy", r.entropy},
                    {"distance", r.distance},
                    {"rows", r.rows}});
  j["heads"] = list;
  return j;
}

std::vector<HeadStatsRow> head_stats_rows(const nlohmann::json& j, const std::string& what) {
  const auto bad = [&](const std::string& why) {
    return Error(Exit::data, what + ": not a head_stats.json table: " + why);
  };
  if (!j.is_object() || !j.contains("heads") || !j["heads"].is_array()) throw bad("no \"heads\"");
  std::vector<HeadStatsRow> rows;
  for (const nlohmann::json& h : j["heads"]) {
    HeadStatsRow r;
    for (const char* key : {"layer", "head", "rows"})
      if (!h.is_object() || !h.contains(key) || !h[key].is_number_unsigned())
        throw bad(std::string("a head without an integer \"") + key + "\"");
    for (const std::string& key : head_stats_column_names())
      if (!h.contains(key) || !h[key].is_number())
        throw bad("a head without a number \"" + key + "\"");
    r.layer = h["layer"].get<std::size_t>();
    r.head = h["head"].get<std::size_t>();
    r.rows = h["rows"].get<std::size_t>();
    r.sink = h["sink"].get<double>();
    r.recent = h["recent"].get<double>();
    r.other = h["other"].get<double>();
    r.entropy = h["entropy"].get<double>();
    r.distance = h["distance"].get<double>();
    rows.push_back(r);
  }
  return rows;
}

std::vector<MergedHeadStats> merge_head_stats(
    const std::vector<std::vector<HeadStatsRow>>& tables) {
  // (layer, head) -> each input's row
  std::map<std::pair<std::size_t, std::size_t>, std::vector<const HeadStatsRow*>> by_head;
  for (const auto& t : tables)
    for (const HeadStatsRow& r : t) by_head[{r.layer, r.head}].push_back(&r);
  std::vector<MergedHeadStats> out;
  for (const auto& [key, rows] : by_head) {
    MergedHeadStats m;
    m.layer = key.first;
    m.head = key.second;
    m.inputs = rows.size();
    for (const HeadStatsRow* r : rows) m.rows += r->rows;
    const auto column = [](const HeadStatsRow& r, std::size_t c) {
      const double v[5] = {r.sink, r.recent, r.other, r.entropy, r.distance};
      return v[c];
    };
    if (m.rows == 0) {
      out.push_back(m);
      continue;
    }
    const double total = double(m.rows);
    for (std::size_t c = 0; c < 5; ++c) {
      double mean = 0, var = 0;
      for (const HeadStatsRow* r : rows) mean += double(r->rows) * column(*r, c);
      mean /= total;
      for (const HeadStatsRow* r : rows) {
        const double d = column(*r, c) - mean;
        var += double(r->rows) * d * d;
      }
      m.mean[c] = mean;
      m.std[c] = std::sqrt(var / total);
    }
    out.push_back(m);
  }
  return out;
}

std::string merged_head_stats_csv(const std::vector<MergedHeadStats>& rows) {
  std::string out = "layer,head,inputs";
  for (const std::string& c : head_stats_column_names()) out += "," + c + "," + c + "_std";
  out += "\n";
  char cell[64];
  for (const MergedHeadStats& m : rows) {
    std::snprintf(cell, sizeof cell, "%zu,%zu,%zu", m.layer, m.head, m.inputs);
    out += cell;
    for (std::size_t c = 0; c < 5; ++c) {
      std::snprintf(cell, sizeof cell, ",%.9g,%.9g", m.mean[c], m.std[c]);
      out += cell;
    }
    out += "\n";
  }
  return out;
}

nlohmann::json merged_head_stats_json(const std::vector<MergedHeadStats>& rows,
                                      std::size_t sink_keys, std::size_t recent) {
  nlohmann::json j;
  j["sink"] = sink_keys;
  j["recent"] = recent;
  j["columns"] = head_stats_column_names();
  j["merge_note"] =
      "per (layer, head) over the batch's inputs: each column's mean weighted by the inputs' "
      "rows (the statistic of all their rows together) and its standard deviation over the "
      "inputs, weighted the same way (ddof 0)";
  nlohmann::json list = nlohmann::json::array();
  for (const MergedHeadStats& m : rows) {
    nlohmann::json h = {
        {"layer", m.layer}, {"head", m.head}, {"inputs", m.inputs}, {"rows", m.rows}};
    for (std::size_t c = 0; c < 5; ++c) {
      h[head_stats_column_names()[c]] = m.mean[c];
      h[head_stats_column_names()[c] + "_std"] = m.std[c];
    }
    list.push_back(h);
  }
  j["heads"] = list;
  return j;
}

}  // namespace attn
