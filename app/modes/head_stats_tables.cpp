// --head-stats' tables across layers and inputs (head_stats_tables.h).
#include "modes/head_stats_tables.h"

#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/files.h"
#include "attn/head_stats.h"

namespace app {
namespace {

constexpr std::size_t kMaxTableBytes = std::size_t(64) << 20;

struct Table {
  std::vector<attn::HeadStatsRow> rows;
  std::size_t sink = 0, recent = 0;
};

Table read_table(const std::string& path) {
  const auto bytes = attn::read_file(path, kMaxTableBytes);
  const nlohmann::json j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
  Table t;
  t.rows = attn::head_stats_rows(j, attn::printable(path));
  t.sink = j.value("sink", std::size_t(0));
  t.recent = j.value("recent", std::size_t(0));
  return t;
}

std::vector<Table> read_tables(const std::string& dir, const std::vector<std::string>& folders) {
  std::vector<Table> tables;
  for (const std::string& f : folders)
    tables.push_back(read_table(dir + "/" + f + "/head_stats.json"));
  return tables;
}

}  // namespace

void stage_layer_head_stats(attn::OutputDir& out, const std::string& dir,
                            const std::vector<std::string>& folders) {
  const std::vector<Table> tables = read_tables(dir, folders);
  std::vector<attn::HeadStatsRow> all;
  for (const Table& t : tables) all.insert(all.end(), t.rows.begin(), t.rows.end());
  const std::size_t sink = tables.empty() ? 0 : tables[0].sink;
  const std::size_t recent = tables.empty() ? 0 : tables[0].recent;
  out.add("head_stats.csv", attn::head_stats_csv(all));
  out.add("head_stats.json", attn::head_stats_json(all, sink, recent).dump(2) + "\n");
}

void stage_batch_head_stats(attn::OutputDir& out, const std::string& dir,
                            const std::vector<std::string>& folders) {
  const std::vector<Table> tables = read_tables(dir, folders);
  std::vector<std::vector<attn::HeadStatsRow>> rows;
  for (const Table& t : tables) rows.push_back(t.rows);
  const auto merged = attn::merge_head_stats(rows);
  const std::size_t sink = tables.empty() ? 0 : tables[0].sink;
  const std::size_t recent = tables.empty() ? 0 : tables[0].recent;
  out.add("head_stats.csv", attn::merged_head_stats_csv(merged));
  out.add("head_stats.json", attn::merged_head_stats_json(merged, sink, recent).dump(2) + "\n");
}

}  // namespace app
