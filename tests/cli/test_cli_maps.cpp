// cli_maps: selecting and reducing maps through the built binary (CONTRACT.md
// "(v3) Selecting and reducing maps"): --heads / --queries / --keys against
// the slices of a full run's attention.npy, run.json's selection, out of
// range and malformed lists (exit 64 naming the flag, nothing written).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numeric>

#include "attn/map_select.h"
#include "attn/npy.h"
#include "cli_checks.h"
#include "json_files.h"
#include "test_util.h"

namespace fs = std::filesystem;
using attn::test::check_cli_failure;
using attn::test::q;
using attn::test::run;
using attn::test::run_json;

namespace {

std::string bin() { return attn::test::quoted_binary(); }
std::string cfg(const std::string& name) { return attn::test::quoted_config(name); }

// raschka_mha_causal: B = 2, H = 2, S = 6 (causal); warner_multi: (H, S, S), not causal.

attn::Tensor npy(const std::string& path) { return attn::read_npy_f32(path, false); }

// maps[:, heads][:, :, queries][..., keys] of a (B, H, L, T) tensor.
attn::Tensor slice(const attn::Tensor& m, const std::vector<std::size_t>& hs,
                   const std::vector<std::size_t>& qs, const std::vector<std::size_t>& ks) {
  const std::size_t B = m.shape[0], H = m.shape[1], L = m.shape[2], T = m.shape[3];
  attn::Tensor out({B, hs.size(), qs.size(), ks.size()});
  std::size_t at = 0;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h : hs)
      for (std::size_t i : qs)
        for (std::size_t j : ks) out.data[at++] = m.data[((b * H + h) * L + i) * T + j];
  return out;
}

}  // namespace

TEST_CASE("cli_maps: --heads, --queries and --keys write the slices of the full maps") {
  attn::test::TempDir t;
  for (const char* config : {"raschka_mha_causal.json", "warner_multi.json"}) {
    CAPTURE(config);
    const std::string base = bin() + " -q --config " + cfg(config) + " --out-dir ";
    REQUIRE(run(base + q(t / "full")).exit_code == 0);
    attn::Tensor full = npy(t / "full/attention.npy");
    const bool batched = full.ndim() == 4;  // warner_multi's input is (S, C)
    if (!batched) full.shape.insert(full.shape.begin(), 1);
    const std::size_t H = full.shape[1], L = full.shape[2];
    REQUIRE(H >= 2);
    REQUIRE(L >= 5);
    struct Pick {
      std::string flags;
      std::vector<std::size_t> heads, queries, keys;  // expected; empty = all
    };
    const std::vector<Pick> picks = {
        {"--heads 1,0 --queries 1-2,last:2 --keys 0,last:1",
         {1, 0},
         {1, 2, L - 2, L - 1},
         {0, L - 1}},
        {"--heads 1", {1}, {}, {}},
        {"--queries 3,0,3", {}, {3, 0}, {}},  // the order given, a repeat once
        {"--keys 2-4", {}, {}, {2, 3, 4}},
        {"--queries last:" + std::to_string(L), {}, {}, {}},  // every row, named
    };
    for (const Pick& p : picks) {
      CAPTURE(p.flags);
      fs::remove_all(t / "sel");
      REQUIRE(run(base + q(t / "sel") + " " + p.flags).exit_code == 0);
      const auto hs = p.heads.empty() ? attn::selected_or_all({}, H) : p.heads;
      const auto qs = p.queries.empty() ? attn::selected_or_all({}, L) : p.queries;
      const auto ks = p.keys.empty() ? attn::selected_or_all({}, full.shape[3]) : p.keys;
      attn::Tensor want = slice(full, hs, qs, ks);
      if (!batched) want.shape.erase(want.shape.begin());
      const attn::Tensor got = npy(t / "sel/attention.npy");
      CHECK(got.shape == want.shape);
      CHECK(got.data == want.data);
      // The context does not depend on the selection.
      CHECK(attn::read_npy_f32(t / "sel/context.npy", false).data ==
            attn::read_npy_f32(t / "full/context.npy", false).data);
      const auto js = run_json(t / "sel");
      CHECK(js["shapes"]["attention"] == nlohmann::json(want.shape));
      const auto picked = [](const std::vector<std::size_t>& v, const std::string& flag,
                             const std::string& flags) {
        return flags.find(flag) == std::string::npos ? nlohmann::json() : nlohmann::json(v);
      };
      CHECK(js["selection"]["heads"] == picked(hs, "--heads", p.flags));
      CHECK(js["selection"]["queries"] == picked(qs, "--queries", p.flags));
      CHECK(js["selection"]["keys"] == picked(ks, "--keys", p.flags));
    }
  }
}

TEST_CASE("cli_maps: a selection past the maps or malformed is exit 64 naming the flag") {
  attn::test::TempDir t;
  const std::string base =
      bin() + " --config " + cfg("raschka_mha_causal.json") + " --out-dir " + q(t / "out") + " ";
  for (const auto& [flags, culprit] : std::vector<std::pair<std::string, std::string>>{
           {"--heads 2", "--heads"},
           {"--heads 0-2", "--heads"},
           {"--queries 6", "--queries"},
           {"--queries last:7", "--queries"},
           {"--queries 3-1", "--queries"},
           {"--queries last:0", "--queries"},
           {"--keys 0,,1", "--keys"},
           {"--keys 99", "--keys"},
           {"--keys x", "--keys"},
       }) {
    CAPTURE(flags);
    check_cli_failure(run(base + flags), 64, {culprit});
  }
  CHECK(!fs::exists(t / "out"));  // checked before the folder is created
}

TEST_CASE("cli_maps: pictures draw the selection") {
  attn::test::TempDir t;
  auto r = run(bin() + " -q --config " + cfg("raschka_mha_causal.json") +
               " --heads 1 --queries 2-4 --keys 0-3 --plot " + q(t / "p.svg"));
  REQUIRE(r.exit_code == 0);
  const std::string svg = attn::test::read_text(t / "p.svg");
  CHECK(svg.find("id=\"head-1\"") != std::string::npos);
  CHECK(svg.find("id=\"head-0\"") == std::string::npos);
  // What the crop is, out of the run's 6 tokens (not "L = 3 queries x T = 4 keys").
  CHECK(svg.find("queries 2-4, keys 0-3 of 6; each row&apos;s weight inside the crop") !=
        std::string::npos);
}

namespace {

// topk_indices.npy as int64 values.
std::vector<std::int64_t> int64_npy(const std::string& path, std::vector<std::size_t>* shape) {
  const attn::RawArray a = attn::read_npy(path);
  REQUIRE(a.dtype == attn::DType::i8);
  *shape = a.shape;
  std::vector<std::int64_t> v(a.count());
  std::memcpy(v.data(), a.bytes.data(), v.size() * sizeof(std::int64_t));
  return v;
}

}  // namespace

TEST_CASE("cli_maps: --top-k equals the stable sort of the full maps' rows") {
  attn::test::TempDir t;
  for (const char* config : {"raschka_mha_causal.json", "warner_multi.json"}) {
    CAPTURE(config);
    const std::string base = bin() + " -q --config " + cfg(config) + " --out-dir ";
    fs::remove_all(t / "full");
    REQUIRE(run(base + q(t / "full")).exit_code == 0);
    attn::Tensor full = npy(t / "full/attention.npy");
    const bool batched = full.ndim() == 4;
    if (!batched) full.shape.insert(full.shape.begin(), 1);
    const std::size_t B = full.shape[0], H = full.shape[1], L = full.shape[2], T = full.shape[3];
    // --keys picks attention.npy's columns only; --no-attn writes no maps but still the top-k.
    for (const std::string extra : {"", " --heads 1 --queries last:3 --keys 0", " --no-attn"})
      for (std::size_t K : {std::size_t(1), std::size_t(3), T}) {
        CAPTURE(extra);
        CAPTURE(K);
        fs::remove_all(t / "k");
        REQUIRE(run(base + q(t / "k") + " --top-k " + std::to_string(K) + extra).exit_code == 0);
        CHECK(fs::exists(t / "k/attention.npy") == (extra != " --no-attn"));
        const bool picked = extra.find("--heads") != std::string::npos;
        const bool online = extra == " --no-attn";  // no maps: the streaming pass's top-k
        const std::vector<std::size_t> hs =
            picked ? std::vector<std::size_t>{1} : attn::selected_or_all({}, H);
        const std::vector<std::size_t> qs =
            picked ? std::vector<std::size_t>{L - 3, L - 2, L - 1} : attn::selected_or_all({}, L);
        const attn::Tensor values = npy(t / "k/topk_values.npy");
        std::vector<std::size_t> ishape;
        const auto indices = int64_npy(t / "k/topk_indices.npy", &ishape);
        std::vector<std::size_t> want_shape = {B, hs.size(), qs.size(), K};
        if (!batched) want_shape.erase(want_shape.begin());
        CHECK(values.shape == want_shape);
        CHECK(ishape == want_shape);
        std::size_t differ = 0, at = 0;
        for (std::size_t b = 0; b < B; ++b)
          for (std::size_t h : hs)
            for (std::size_t i : qs) {
              const float* row = full.ptr() + ((b * H + h) * L + i) * T;
              std::vector<std::size_t> order(T);
              std::iota(order.begin(), order.end(), std::size_t(0));
              std::stable_sort(order.begin(), order.end(),
                               [&](std::size_t x, std::size_t y) { return row[x] > row[y]; });
              for (std::size_t k = 0; k < K; ++k, ++at) {
                const float want = row[order[k]];
                if (!online) {  // reduced from the maps' own rows: bit for bit
                  differ += indices[at] != std::int64_t(order[k]);
                  differ += values.data[at] != want;
                  continue;
                }
                // The streaming pass's top-k (attn/digest.h): within float rounding, and
                // another key only where its weight ties the k-th within rounding.
                differ += !(std::abs(values.data[at] - want) <= 1e-5f * want + 1e-9f);
                differ += indices[at] != std::int64_t(order[k]) &&
                          !(indices[at] >= 0 && std::size_t(indices[at]) < T &&
                            std::abs(row[indices[at]] - want) <= 2e-6f);
              }
            }
        CHECK(differ == 0);
        const auto js = run_json(t / "k");
        CHECK(js["top_k"] == K);
        CHECK(js["shapes"]["topk_indices"] == nlohmann::json(want_shape));
        CHECK(js["dtypes"]["topk_indices"] == "int64");
      }
    // A rerun without --top-k leaves no stale top-k files behind.
    REQUIRE(run(base + q(t / "k")).exit_code == 0);
    CHECK(!fs::exists(t / "k/topk_values.npy"));
    CHECK(!fs::exists(t / "k/topk_indices.npy"));
  }
}

TEST_CASE("cli_maps: --top-k past the keys, 0, or without an output folder is exit 64") {
  attn::test::TempDir t;
  const std::string base = bin() + " --config " + cfg("raschka_mha_causal.json");
  check_cli_failure(run(base + " -o " + q(t / "o") + " --top-k 7"), 64, {"--top-k", "6"});
  check_cli_failure(run(base + " -o " + q(t / "o") + " --top-k 0"), 64, {"--top-k"});
  check_cli_failure(run(base + " --top-k 2"), 64, {"--top-k", "--out-dir"});
  CHECK(!fs::exists(t / "o"));
}

TEST_CASE("cli_maps: --summary equals the reductions of the full maps") {
  attn::test::TempDir t;
  for (const char* config : {"raschka_mha_causal.json", "warner_multi.json"}) {
    CAPTURE(config);
    const std::string base = bin() + " -q --config " + cfg(config) + " --out-dir ";
    fs::remove_all(t / "full");
    REQUIRE(run(base + q(t / "full")).exit_code == 0);
    attn::Tensor full = npy(t / "full/attention.npy");
    const bool batched = full.ndim() == 4;
    if (!batched) full.shape.insert(full.shape.begin(), 1);
    const std::size_t B = full.shape[0], H = full.shape[1], L = full.shape[2], T = full.shape[3];
    for (const std::string extra : {"", " --recent 2 --heads 1 --queries 4,0 --no-attn"}) {
      CAPTURE(extra);
      fs::remove_all(t / "s");
      REQUIRE(run(base + q(t / "s") + " --summary" + extra).exit_code == 0);
      const bool picked = !extra.empty();
      const std::size_t W = picked ? 2 : 64;
      const std::vector<std::size_t> hs =
          picked ? std::vector<std::size_t>{1} : attn::selected_or_all({}, H);
      const std::vector<std::size_t> qs =
          picked ? std::vector<std::size_t>{4, 0} : attn::selected_or_all({}, L);
      const attn::Tensor got = npy(t / "s/summary.npy");
      std::vector<std::size_t> want_shape = {B, hs.size(), qs.size(), 5};
      if (!batched) want_shape.erase(want_shape.begin());
      REQUIRE(got.shape == want_shape);
      std::size_t at = 0, bad = 0;
      std::vector<double> hist0(8, 0.0);  // the first selected head's weight per distance bin
      for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h : hs)
          for (std::size_t i : qs) {
            const float* p = full.ptr() + ((b * H + h) * L + i) * T;
            double total = 0, ent = 0, recent = 0, dist = 0;
            std::size_t am = 0;
            for (std::size_t j = 0; j < T; ++j) {
              total += p[j];
              if (p[j] > 0) ent -= p[j] * std::log(double(p[j]));
              if (j <= i && j + W > i) recent += p[j];
              const std::size_t d = i > j ? i - j : j - i;
              dist += p[j] * double(d);
              if (p[j] > p[am]) am = j;
              std::size_t bin = 0;
              while (d >= (std::size_t(1) << bin)) ++bin;
              if (h == hs[0]) hist0[bin] += p[j];
            }
            const float* v = got.ptr() + at;
            at += 5;
            // With --no-attn the streaming pass's summary (attn/digest.h): within float
            // rounding, the argmax another key only where the weights tie within rounding.
            const std::size_t am_got = std::size_t(v[4]);
            bad += std::abs(v[0] - ent) > 1e-5;
            bad += picked ? !(std::abs(v[1] - p[0]) <= 2e-6f) : v[1] != p[0];
            bad += std::abs(v[2] - recent) > 1e-6;
            bad += std::abs(v[3] - dist / total) > 1e-5;
            bad +=
                picked ? !(am_got < T && std::abs(p[am_got] - p[am]) <= 2e-6f) : v[4] != float(am);
          }
      CHECK(bad == 0);
      const std::string csv = attn::test::read_text(t / "s/summary.csv");
      CHECK(csv.rfind("batch,head,query,entropy,first_key,recent,mean_distance,argmax\n", 0) == 0);
      CHECK(attn::test::count_of(csv, "\n") == 1 + B * hs.size() * qs.size());
      if (picked) CHECK(csv.find("\n0,1,4,") != std::string::npos);  // the model's numbers
      const auto js = attn::test::read_json(t / "s/summary.json");
      CHECK(js["recent"] == W);
      CHECK(js["heads"].size() == hs.size());
      CHECK(js["heads"][0]["head"] == hs[0]);
      const auto& weight = js["heads"][0]["weight"];
      REQUIRE(weight.size() <= hist0.size());
      for (std::size_t k = 0; k < weight.size(); ++k)
        CHECK(std::abs(weight[k].get<double>() - hist0[k]) <= 1e-5);
      const auto run = run_json(t / "s");
      CHECK(run["shapes"]["summary"] == nlohmann::json(want_shape));
      CHECK(run["summary"]["recent"] == W);
    }
    // A rerun without --summary leaves no stale summary behind.
    REQUIRE(run(base + q(t / "s")).exit_code == 0);
    for (const char* f : {"s/summary.npy", "s/summary.csv", "s/summary.json"})
      CHECK(!fs::exists(t / f));
  }
}

TEST_CASE("cli_maps: --summary without an output folder, or --recent alone, is exit 64") {
  attn::test::TempDir t;
  const std::string base = bin() + " --config " + cfg("raschka_mha_causal.json");
  check_cli_failure(run(base + " --summary"), 64, {"--summary", "--out-dir"});
  check_cli_failure(run(base + " -o " + q(t / "o") + " --recent 3"), 64, {"--recent", "--summary"});
  check_cli_failure(run(base + " -o " + q(t / "o") + " --summary --recent 0"), 64, {"--recent"});
  CHECK(!fs::exists(t / "o"));
}

TEST_CASE("cli_maps: --show's head view numbers queries and keys as the model does") {
  const std::string base = "COLUMNS=100 " + bin() + " --config " + cfg("raschka_mha_causal.json") +
                           " --show --heads 1 --queries 2-4 --keys 1-3";
  auto r = run(base + " --show-query 4");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("query 4 \"one\"") != std::string::npos);
  CHECK(r.out.find("\n  1 journey") != std::string::npos);  // key 1, drawn as column 0
  CHECK(r.out.find("\n  0 ") == std::string::npos);
  check_cli_failure(run(base + " --show-query 0"), 64, {"--show-query", "--queries"});
}

TEST_CASE("cli_maps: --input-list writes each input's selection, top-k and summary") {
  attn::test::TempDir t;
  // Two inputs of the raschka layer: (2, 6, 3) and (6, 3), each checked on its own length.
  attn::test::write_text(t / "list.txt", attn::test::source_path("data/sentence_batch.npy") + "\n" +
                                             attn::test::source_path("data/sentence.npy") + "\n");
  const std::string base = bin() + " -q --config " + cfg("raschka_mha_causal.json");
  REQUIRE(run(base + " --input-list " + q(t / "list.txt") + " -o " + q(t / "all")).exit_code == 0);
  auto r = run(base + " --input-list " + q(t / "list.txt") + " -o " + q(t / "sel") +
               " --heads 0 --queries last:2 --top-k 2 --summary");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  for (const char* name : {"sentence_batch", "sentence"}) {
    CAPTURE(name);
    const std::string all = t / ("all/" + std::string(name));
    const std::string sel = t / ("sel/" + std::string(name));
    attn::Tensor full = npy(all + "/attention.npy");
    const bool batched = full.ndim() == 4;
    if (!batched) full.shape.insert(full.shape.begin(), 1);
    attn::Tensor want = slice(full, {0}, {4, 5}, attn::selected_or_all({}, 6));
    if (!batched) want.shape.erase(want.shape.begin());
    CHECK(npy(sel + "/attention.npy").data == want.data);
    std::vector<std::size_t> topk_shape = want.shape, summary_shape = want.shape;
    topk_shape.back() = 2;
    summary_shape.back() = 5;
    CHECK(npy(sel + "/topk_values.npy").shape == topk_shape);
    CHECK(npy(sel + "/summary.npy").shape == summary_shape);
    CHECK(fs::exists(sel + "/summary.csv"));
    CHECK(run_json(sel)["selection"]["queries"] == nlohmann::json({4, 5}));
  }
}
