// Helpers shared by the tests: comparing tensors with a useful message,
// fixtures paths, temporary folders, running the built binary.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/tensor.h"

namespace attn {

// Tensor data (FloatBuffer) against plain float vectors in CHECKs (found by
// ADL through attn::BufferAllocator).
inline bool operator==(const FloatBuffer& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}
inline bool operator==(const std::vector<float>& a, const FloatBuffer& b) { return b == a; }
inline bool operator!=(const FloatBuffer& a, const std::vector<float>& b) { return !(a == b); }

}  // namespace attn

namespace attn::test {

// Folder of the source tree (for fixtures under tests/ and configs/).
std::string source_dir();
std::string source_path(const std::string& rel);

// max |a - b| / max(max |b|, tiny); 0 when equal. Shapes must match.
struct Diff {
  double max_abs = 0.0;
  double scale = 0.0;     // max |expected|
  std::size_t where = 0;  // flat index of the largest difference
  bool shape_ok = true;
  double relative() const { return max_abs / (scale > 1e-30 ? scale : 1.0); }
};
Diff compare(const Tensor& actual, const Tensor& expected);
// "maxdiff = 3.1e-07 at index 17 (scale 0.51)"
std::string describe(const Diff& d);

// A fresh empty folder under the system temp dir, removed by the destructor.
struct TempDir {
  TempDir();
  ~TempDir();
  std::string path;
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

// Run a shell command; capture stdout and stderr separately.
struct RunResult {
  int exit_code = -1;
  std::string out, err;
};
RunResult run(const std::string& command, const std::string& stdin_data = "");
// Path of the built attn-run.
std::string binary();
// The same and a shipped config (configs/<name>), single-quoted for a shell command.
std::string quoted_binary();
std::string quoted_config(const std::string& name);

std::string read_text(const std::string& path);

// `s` single-quoted for a shell command (the tests' paths hold no quote).
inline std::string q(const std::string& s) { return "'" + s + "'"; }
// Shell: wait until process $<var> has stopped itself (ATTN_TEST_PAUSE_AT's
// SIGSTOP) or is gone.
inline std::string until_stopped(const std::string& var) {
  return "until grep -q '^State:[[:space:]]*T' /proc/$" + var +
         "/status 2>/dev/null; do kill -0 $" + var + " 2>/dev/null || break; sleep 0.01; done; ";
}
// How often `what` occurs in `s` (non-overlapping).
std::size_t count_of(const std::string& s, const std::string& what);

// The values of a .npy image held in memory (e.g. captured stdout).
Tensor npy_values(const std::string& bytes, const std::string& name);

// Every entry of a folder with its bytes ("<not a file>" for others), to
// prove that a failed run changed nothing.
std::map<std::string, std::string> snapshot(const std::string& dir);
void write_text(const std::string& path, const std::string& text);

// Deterministic pseudo-random tensor for tests (values in [-1, 1)).
Tensor random_tensor(std::vector<std::size_t> shape, unsigned seed);

// t keeping indices `keep` of axis `axis`, in that order (numpy's take); an
// empty `keep` keeps every index.
Tensor take_indices(const Tensor& t, std::size_t axis, const std::vector<std::size_t>& keep);

// Forwards rows only: its default digest_request asks for rows, so the
// forward pass takes the maps path and `next` (top-k, summary) reduces the
// exact softmax rows, not the streaming pass's digests (attn/digest.h).
class RowsOnly : public AttentionSink {
 public:
  explicit RowsOnly(AttentionSink& next) : next_(next) {}
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* rows) override {
    next_.write_rows(b, h, i0, n, rows);
  }

 private:
  AttentionSink& next_;
};

}  // namespace attn::test
