#include "test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "attn/npy.h"

namespace attn::test {

std::string source_dir() { return ATTN_SOURCE_DIR; }
std::string source_path(const std::string& rel) { return source_dir() + "/" + rel; }
std::string binary() { return ATTN_BINARY; }
std::size_t count_of(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

std::string quoted_binary() { return "'" + binary() + "'"; }
std::string quoted_config(const std::string& name) {
  return "'" + source_path("configs/" + name) + "'";
}

Diff compare(const Tensor& actual, const Tensor& expected) {
  Diff d;
  if (actual.shape != expected.shape || actual.size() != expected.size()) {
    d.shape_ok = false;
    d.max_abs = INFINITY;
    return d;
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    double e = expected.data[i], a = actual.data[i];
    d.scale = std::max(d.scale, std::fabs(e));
    double diff = std::fabs(a - e);
    if (!(diff <= d.max_abs)) {  // also catches NaN
      d.max_abs = std::isnan(diff) ? INFINITY : diff;
      d.where = i;
    }
  }
  return d;
}

std::string describe(const Diff& d) {
  if (!d.shape_ok) return "shape mismatch";
  std::ostringstream s;
  s << "maxdiff = " << d.max_abs << " at index " << d.where << " (scale " << d.scale
    << ", relative " << d.relative() << ")";
  return s.str();
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "attn-test-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
  path = buf.data();
}
TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::permissions(path, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::add, ec);
  std::filesystem::remove_all(path, ec);
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

Tensor npy_values(const std::string& bytes, const std::string& name) {
  return to_float32(
      parse_npy(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), name), name,
      false);
}

std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    files[e.path().filename().string()] =
        e.is_regular_file() ? read_text(e.path().string()) : "<not a file>";
  return files;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

RunResult run(const std::string& command, const std::string& stdin_data) {
  TempDir t;
  std::string in = t / "stdin", out = t / "stdout", err = t / "stderr";
  write_text(in, stdin_data);
  std::string full = "(" + command + ") <'" + in + "' >'" + out + "' 2>'" + err + "'";
  int status = std::system(full.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

Tensor random_tensor(std::vector<std::size_t> shape, unsigned seed) {
  Tensor t(std::move(shape));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : t.data) v = dist(gen);
  return t;
}

Tensor take_indices(const Tensor& t, std::size_t axis, const std::vector<std::size_t>& keep) {
  if (keep.empty()) return t;
  std::size_t outer = 1, inner = 1;
  for (std::size_t a = 0; a < axis; ++a) outer *= t.shape[a];
  for (std::size_t a = axis + 1; a < t.shape.size(); ++a) inner *= t.shape[a];
  std::vector<std::size_t> shape = t.shape;
  shape[axis] = keep.size();
  Tensor r(shape);
  for (std::size_t o = 0; o < outer; ++o)
    for (std::size_t k = 0; k < keep.size(); ++k)
      std::copy_n(t.ptr() + (o * t.shape[axis] + keep[k]) * inner, inner,
                  r.ptr() + (o * keep.size() + k) * inner);
  return r;
}

}  // namespace attn::test
