// npy_input_length (attn/run.h): the query length an input holds, from a
// .npy header alone, as prefault_forward's hint; 0 for anything else, and
// never a read from what is not a regular file.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "attn/npy.h"
#include "attn/run.h"
#include "test_util.h"

using namespace attn;

namespace {

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace

TEST_CASE("npy_input_length: S from a .npy header, 0 for anything else") {
  test::TempDir dir;
  const std::vector<std::uint8_t> none;
  write(dir / "bsc.npy", encode_npy(Tensor({2, 7, 3})));
  write(dir / "sc.npy", encode_npy(Tensor({5, 3})));
  write(dir / "c.npy", encode_npy(Tensor({3})));
  write(dir / "x.json", "[[1, 2], [3, 4]]");
  CHECK(npy_input_length(dir / "bsc.npy", none) == 7);
  CHECK(npy_input_length(dir / "sc.npy", none) == 5);
  CHECK(npy_input_length(dir / "c.npy", none) == 0);  // not an input's shape
  CHECK(npy_input_length(dir / "x.json", none) == 0);
  CHECK(npy_input_length(dir / "missing.npy", none) == 0);
  CHECK(npy_input_length(dir.path, none) == 0);  // a folder
  CHECK(npy_input_length("", none) == 0);
  // A header cut short, or garbage after the magic: no hint, no error.
  const std::string whole = encode_npy(Tensor({1, 9, 4}));
  write(dir / "cut.npy", whole.substr(0, 20));
  CHECK(npy_input_length(dir / "cut.npy", none) == 0);
  write(dir / "bad.npy", "\x93NUMPY\x01\x00\x10\x00{'descr': 1}  \n");
  CHECK(npy_input_length(dir / "bad.npy", none) == 0);
  // Standard input: the bytes already read.
  const std::vector<std::uint8_t> bytes(whole.begin(), whole.end());
  CHECK(npy_input_length("-", bytes) == 9);
  CHECK(npy_input_length("-", none) == 0);
}

TEST_CASE("npy_input_length: a pipe is not read (its bytes belong to the real read)") {
  test::TempDir dir;
  const std::string fifo = dir / "fifo.npy";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Opening a FIFO with no writer would block: the call must not even open it.
  CHECK(npy_input_length(fifo, {}) == 0);
}
