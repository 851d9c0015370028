// BlockWriter (attn/output.h): blocks handed over by several threads at
// offsets that are not page-aligned (the .npy header is 128 bytes, rows are
// any length) land byte for byte where write_bytes_at would put them, with
// O_DIRECT and through the page cache alike.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>
#include <thread>
#include <vector>

#include "attn/output.h"
#include "test_util.h"

namespace {

// The data part of a committed .npy (after its header).
std::vector<float> npy_data(const std::string& path, std::size_t count) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() >= count * sizeof(float));
  std::vector<float> v(count);
  std::memcpy(v.data(), bytes.data() + bytes.size() - count * sizeof(float), count * sizeof(float));
  return v;
}

// Rows of `row` floats (a size that puts most block edges mid-page), blocks
// of `block_rows` rows; thread t writes blocks t, t + threads, ... in
// reverse order, so neighbouring blocks arrive in no particular order.
void write_blocks(attn::BlockWriter& w, const std::vector<float>& data, std::size_t row,
                  std::size_t block_rows, std::size_t threads) {
  const std::size_t rows = data.size() / row, blocks = (rows + block_rows - 1) / block_rows;
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::size_t b = blocks; b-- > 0;) {
        if (b % threads != t) continue;
        const std::size_t r0 = b * block_rows, n = std::min(block_rows, rows - r0);
        w.write(r0 * row * sizeof(float), data.data() + r0 * row, n * row * sizeof(float));
      }
    });
  for (auto& th : pool) th.join();
}

}  // namespace

TEST_CASE("BlockWriter: blocks from several threads at unaligned offsets read back exactly") {
  // 1531 floats a row (6124 bytes: not a page multiple), 700 rows = 4.3 MB,
  // more than the writer's buffers hold at once, and blocks of 1 row (all
  // partial pages), 37 rows, and 400 rows (split into several pieces); and
  // 300 rows = 1.8 MB, a small file that write() writes itself.
  const std::size_t row = 1531;
  for (std::size_t rows : {std::size_t(700), std::size_t(300)}) {
    std::vector<float> data(row * rows);
    std::iota(data.begin(), data.end(), 0.5f);
    for (bool direct : {true, false})
      for (std::size_t block_rows : {std::size_t(1), std::size_t(37), std::size_t(400)}) {
        CAPTURE(rows);
        CAPTURE(direct);
        CAPTURE(block_rows);
        attn::test::TempDir tmp;
        {
          attn::OutputDir out(tmp.path);
          const int h = out.add_streamed_npy("attention.npy", {rows, row});
          attn::BlockWriter w(out, h, direct);
          // O_DIRECT only where asked, for a large file (and where the file system takes it).
          if (!direct || rows == 300) CHECK_FALSE(w.direct());
          write_blocks(w, data, row, block_rows, 3);
          w.finish();
          out.commit();
        }
        const std::vector<float> back = npy_data(tmp / "attention.npy", data.size());
        CHECK(back == data);
      }
  }
}

TEST_CASE("BlockWriter: a writer dropped before finish() commits nothing") {
  attn::test::TempDir tmp;
  {
    attn::OutputDir out(tmp.path);
    const int h = out.add_streamed_npy("attention.npy", {4, 1000});
    std::vector<float> block(1000, 1.0f);
    attn::BlockWriter w(out, h);
    w.write(0, block.data(), block.size() * sizeof(float));
    // the run fails here: no finish(), no commit
  }
  std::ifstream f(tmp / "attention.npy");
  CHECK_FALSE(f.good());
}
