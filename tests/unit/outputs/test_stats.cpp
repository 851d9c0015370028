// stats: the per-head diagnostics of --stats (attn/stats.h) against a direct
// computation written out here, on closed-form rows and on random softmax
// maps streamed through StatsSink in scrambled block order from many threads.
//
// Letters: B batch, H heads, S sequence.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <thread>

#include "attn/stats.h"
#include "test_util.h"

namespace {

// Softmax maps (B, H, S, S) from random scores, causal, with a padding mask
// that hides keys 0..pad-1 of batch 1: with the causal mask its first `pad`
// rows have no key left and are all zeros (as the forward pass writes them).
attn::Tensor random_maps(std::size_t B, std::size_t H, std::size_t S, std::size_t pad,
                         unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> score(0.0, 2.0);
  attn::Tensor m({B, H, S, S});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < S; ++i) {
        float* row = m.ptr() + ((b * H + h) * S + i) * S;
        std::vector<double> e(S, 0.0);
        double sum = 0;
        for (std::size_t j = 0; j <= i; ++j) {
          if (b == 1 && j < pad) continue;
          e[j] = std::exp(score(rng));
          sum += e[j];
        }
        for (std::size_t j = 0; j < S; ++j) row[j] = sum > 0 ? float(e[j] / sum) : 0.0f;
      }
  return m;
}

struct Direct {
  double entropy = 0, max_w = 0, first = 0;
  long rows = 0, masked = 0;
};

// The definitions spelled out: means over rows that have any weight.
std::vector<Direct> direct(const attn::Tensor& m) {
  const std::size_t B = m.shape[0], H = m.shape[1], S = m.shape[2];
  std::vector<Direct> out(H);
  for (std::size_t h = 0; h < H; ++h) {
    Direct& d = out[h];
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t i = 0; i < S; ++i) {
        const float* row = m.ptr() + ((b * H + h) * S + i) * S;
        if (std::all_of(row, row + S, [](float p) { return p == 0.0f; })) {
          ++d.masked;
          continue;
        }
        double ent = 0;
        for (std::size_t j = 0; j < S; ++j)
          if (row[j] > 0) ent += -double(row[j]) * std::log(double(row[j]));
        d.entropy += ent;
        d.max_w += *std::max_element(row, row + S);
        d.first += row[0];
        ++d.rows;
      }
    d.entropy /= double(d.rows);
    d.max_w /= double(d.rows);
    d.first /= double(d.rows);
  }
  return out;
}

void check_same(const std::vector<attn::HeadStats>& got, const std::vector<Direct>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t h = 0; h < got.size(); ++h) {
    CAPTURE(h);
    CHECK(got[h].mean_entropy == doctest::Approx(want[h].entropy).epsilon(1e-9));
    CHECK(got[h].mean_max_weight == doctest::Approx(want[h].max_w).epsilon(1e-9));
    CHECK(got[h].first_token_share == doctest::Approx(want[h].first).epsilon(1e-9));
    CHECK(got[h].rows == want[h].rows);
    CHECK(got[h].fully_masked_rows == want[h].masked);
  }
}

}  // namespace

TEST_CASE("stats: closed-form rows (uniform, one-hot, masked)") {
  attn::HeadStats s;
  const std::vector<float> uniform(8, 0.125f);
  attn::add_row_stats(uniform.data(), 8, s);
  attn::finish_head_stats(s);
  CHECK(s.mean_entropy == doctest::Approx(std::log(8.0)));
  CHECK(s.mean_max_weight == doctest::Approx(0.125));
  CHECK(s.first_token_share == doctest::Approx(0.125));

  attn::HeadStats t;
  const std::vector<float> one_hot = {0, 0, 1, 0}, first = {1, 0, 0, 0}, masked = {0, 0, 0, 0};
  attn::add_row_stats(one_hot.data(), 4, t);
  attn::add_row_stats(first.data(), 4, t);
  attn::add_row_stats(masked.data(), 4, t);
  attn::finish_head_stats(t);
  CHECK(t.mean_entropy == 0.0);
  CHECK(t.mean_max_weight == doctest::Approx(1.0));
  CHECK(t.first_token_share == doctest::Approx(0.5));  // the masked row is not averaged
  CHECK(t.rows == 2);
  CHECK(t.fully_masked_rows == 1);
}

TEST_CASE("stats: attention_stats matches the direct computation, (B, H, S, S) and (H, S, S)") {
  const attn::Tensor m = random_maps(3, 4, 17, 5, 7);
  check_same(attn::attention_stats(m), direct(m));
  CHECK(direct(m)[0].masked == 5);  // batch 1's first five rows

  attn::Tensor one = m;
  one.shape = {4, 17, 17};
  one.data.resize(4 * 17 * 17);
  attn::Tensor one_b = one;
  one_b.shape = {1, 4, 17, 17};
  check_same(attn::attention_stats(one), direct(one_b));
}

TEST_CASE(
    "stats: StatsSink fed blocks from many threads in any order equals the direct result "
    "and forwards every row") {
  const std::size_t B = 2, H = 3, S = 40;
  const attn::Tensor m = random_maps(B, H, S, 7, 11);
  attn::TensorSink copy(B, H, S);
  attn::StatsSink sink(H, S, &copy);
  // Blocks of 1..6 rows, shuffled, handed to 4 threads.
  struct Block {
    std::size_t b, h, i0, n;
  };
  std::vector<Block> blocks;
  std::mt19937 rng(3);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i0 = 0; i0 < S;) {
        const std::size_t n = std::min<std::size_t>(S - i0, 1 + rng() % 6);
        blocks.push_back({b, h, i0, n});
        i0 += n;
      }
  std::shuffle(blocks.begin(), blocks.end(), rng);
  std::vector<std::thread> workers;
  for (std::size_t t = 0; t < 4; ++t)
    workers.emplace_back([&, t] {
      for (std::size_t k = t; k < blocks.size(); k += 4) {
        const Block& x = blocks[k];
        sink.write_rows(x.b, x.h, x.i0, x.n, m.ptr() + ((x.b * H + x.h) * S + x.i0) * S);
      }
    });
  for (auto& w : workers) w.join();
  check_same(sink.result(), direct(m));
  CHECK(copy.maps.data == m.data);
}

TEST_CASE("stats: JSON and table carry one entry per head") {
  const attn::Tensor m = random_maps(1, 3, 5, 0, 1);
  const auto s = attn::attention_stats(m);
  const nlohmann::json j = attn::stats_to_json(s);
  REQUIRE(j.size() == 3);
  CHECK(j[2]["head"] == 2);
  CHECK(j[1]["mean_entropy"].get<double>() == doctest::Approx(s[1].mean_entropy));
  CHECK(j[0]["rows"] == 5);
  const std::string table = attn::format_stats_table(s);
  CHECK(std::count(table.begin(), table.end(), '\n') == 4);  // header + 3 heads
}

TEST_CASE("stats: rows with a sink sum to less than 1: entropy of the keys' share, row sum kept") {
  // Two rows of 4 keys (L = 2, T = 4): the first gives 0.25 to two keys (the
  // sink took 0.5), the second is an ordinary softmax row.
  attn::Tensor maps({1, 1, 2, 4});
  const float rows[] = {0.25f, 0.25f, 0.0f, 0.0f, 0.1f, 0.2f, 0.3f, 0.4f};
  std::copy(rows, rows + 8, maps.ptr());
  const auto st = attn::attention_stats(maps);
  REQUIRE(st.size() == 1);
  const double second =
      -(0.1 * std::log(0.1) + 0.2 * std::log(0.2) + 0.3 * std::log(0.3) + 0.4 * std::log(0.4));
  CHECK(st[0].mean_entropy == doctest::Approx((std::log(2.0) + second) / 2).epsilon(1e-6));
  CHECK(st[0].mean_row_sum == doctest::Approx(0.75).epsilon(1e-6));
  CHECK(st[0].mean_max_weight == doctest::Approx((0.25 + 0.4) / 2).epsilon(1e-6));
  const std::string table = attn::format_stats_table(st);
  CHECK(table.find("row sum") != std::string::npos);
  CHECK(table.find("0.7500") != std::string::npos);
  CHECK(attn::stats_to_json(st)[0]["mean_row_sum"].get<double>() == doctest::Approx(0.75));
  // Without sinks the table keeps its columns.
  attn::Tensor plain({1, 1, 1, 4});
  std::copy(rows + 4, rows + 8, plain.ptr());
  CHECK(attn::format_stats_table(attn::attention_stats(plain)).find("row sum") ==
        std::string::npos);
}
