// bench_load: the lazy weights pipeline alone, in process: open a
// .safetensors, select one layer's prefix and read its four GPT-2 attention
// tensors as float32 (c_attn/c_proj transposed, as the gpt2 layout needs
// them) - against a plain pread of the same bytes into a buffer. Medians of
// REPS runs after one warm-up (page cache warm). Data: bench/bench_load.py.
// Usage: bench_load FILE.safetensors [prefix, default h.12.attn.] [reps, default 5]
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/state_dict.h"

namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

const char* const kKeys[] = {"c_attn.weight", "c_attn.bias", "c_proj.weight", "c_proj.bias"};

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_load FILE.safetensors [prefix] [reps]\n");
    return 64;
  }
  const std::string path = argv[1], prefix = argc > 2 ? argv[2] : "h.12.attn.";
  const int reps = argc > 3 ? std::atoi(argv[3]) : 5;
  std::vector<double> open_ms, read_ms, plain_ms;
  std::size_t bytes = 0;
  for (int r = 0; r <= reps; ++r) {
    auto t = std::chrono::steady_clock::now();
    const attn::StateDict layer = attn::open_state_dict(path).select(prefix);
    const double o = ms_since(t);
    t = std::chrono::steady_clock::now();
    std::size_t n = 0;
    for (const char* k : kKeys) {
      const attn::TensorInfo* info = layer.find(k);
      if (info == nullptr) throw attn::Error(attn::Exit::data, path + ": no key " + prefix + k);
      std::vector<float> dst(info->count());
      const bool matrix = info->shape.size() == 2;
      layer.read_rows(k, 0, matrix ? info->shape[1] : info->shape[0], matrix, dst.data(), false);
      n += dst.size() * sizeof(float);
    }
    const double rd = ms_since(t);
    bytes = n;
    if (r > 0) open_ms.push_back(o), read_ms.push_back(rd);
  }
  // The same spans read plainly into one buffer (their offsets from the
  // header, parsed here untimed).
  const int fd = ::open(path.c_str(), O_RDONLY);
  std::uint64_t hlen = 0;
  if (fd < 0 || ::pread(fd, &hlen, 8, 0) != 8) throw attn::Error(attn::Exit::no_input, path);
  std::string text(hlen, '\0');
  if (::pread(fd, &text[0], hlen, 8) != ssize_t(hlen)) throw attn::Error(attn::Exit::data, path);
  const auto header = nlohmann::json::parse(text);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
  std::uint64_t raw = 0;
  for (const char* k : kKeys) {
    const auto& o = header.at(prefix + k).at("data_offsets");
    spans.push_back({o[0].get<std::uint64_t>(), o[1].get<std::uint64_t>()});
    raw += spans.back().second - spans.back().first;
  }
  for (int r = 0; r <= reps; ++r) {
    const auto t = std::chrono::steady_clock::now();
    std::vector<char> buf(raw);
    std::size_t at = 0;
    for (const auto& [b, e] : spans)
      for (std::uint64_t off = b; off < e;) {
        const ssize_t k = ::pread(fd, buf.data() + at, e - off, off_t(8 + hlen + off));
        if (k <= 0) throw attn::Error(attn::Exit::data, path + ": short read");
        off += std::uint64_t(k), at += std::size_t(k);
      }
    if (r > 0) plain_ms.push_back(ms_since(t));
  }
  ::close(fd);
  std::printf("%s, prefix %s: %zu bytes of float32 out, medians of %d\n", path.c_str(),
              prefix.c_str(), bytes, reps);
  std::printf("  open + select (header only): %8.2f ms\n", median(open_ms));
  std::printf("  read_rows of the 4 tensors:  %8.2f ms (c_attn/c_proj transposed)\n",
              median(read_ms));
  std::printf("  plain pread of the spans:    %8.2f ms (%llu bytes)\n", median(plain_ms),
              static_cast<unsigned long long>(raw));
  return 0;
} catch (const attn::Error& e) {
  std::fprintf(stderr, "bench_load: %s\n", e.what());
  return e.exit_code();
}
