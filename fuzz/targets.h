// The bodies of the fuzz targets, shared by the libFuzzer binaries (fuzz/fuzz_*.cpp,
// built with clang by scripts/fuzz.sh) and the plain replay test
// (tests/hostile/test_fuzz_replay.cpp, built with the normal suite), so every seed and
// every past crash in fuzz/corpus/<target>/ and fuzz/regressions/<target>/ is
// replayed by ctest through exactly the code the fuzzer ran.
//
// Each target feeds one input to a reader. attn::Error is the documented way
// to refuse bad bytes and is swallowed; anything else (another exception, a
// crash, a sanitizer report, a huge allocation) escapes and is a finding.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "attn/config.h"
#include "attn/error.h"
#include "attn/npy.h"
#include "attn/state_dict.h"
#include "attn/tensor.h"

namespace attn::fuzz {

// Every conversion a caller may apply to an array that parsed: values (with
// and without the non-finite check) and masks.
inline void convert_all(const RawArray& a, const std::string& name) {
  try {
    (void)to_float32(a, name, false);
  } catch (const Error&) {
  }
  try {
    (void)to_float32(a, name, true);
  } catch (const Error&) {
  }
  try {
    (void)to_mask(a, name);
  } catch (const Error&) {
  }
}

// Every tensor of an opened source read both ways; Errors are refusals.
inline void read_all(const StateDict& sd) {
  for (const std::string& key : sd.keys()) {
    try {
      (void)sd.read_f32(key, false);
    } catch (const Error&) {
    }
    try {
      convert_all(sd.read_raw(key), key);
    } catch (const Error&) {
    }
  }
}

// The .npz and .safetensors readers only take paths (state_dict.h has no
// from-memory entry point), so each input goes through a per-process file,
// on /dev/shm when there is one so the fuzzer is not slowed by a disk.
inline std::string scratch_path(const char* ext) {
  const char* dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : nullptr;
  if (dir == nullptr) dir = std::getenv("TMPDIR");
  if (dir == nullptr || *dir == '\0') dir = "/tmp";
  return std::string(dir) + "/attn-fuzz-" + std::to_string(::getpid()) + ext;
}

inline void write_scratch(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();  // the harness cannot work: not a finding in the reader
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  if (std::fclose(f) != 0) std::abort();
}

template <typename Reader>
void fuzz_state_dict_file(const std::uint8_t* data, std::size_t size, const char* ext,
                          Reader read) {
  const std::string path = scratch_path(ext);
  write_scratch(path, data, size);
  try {
    read_all(read(path));
  } catch (const Error&) {
  }
  ::unlink(path.c_str());
}

// A per-process folder holding two fixed shards (a.safetensors: "h.0.w" F32
// (2,); b.safetensors: "h.1.w" F32 (2,), "h.1.b" BF16 (1,)) for the index
// target's inputs to name; removed at exit.
inline std::string index_folder() {
  static const std::string dir = [] {
    std::string d = scratch_path("-index");
    ::mkdir(d.c_str(), 0700);
    auto shard = [&](const char* name, const std::string& header, const std::string& data) {
      std::string h = header;
      while (h.size() % 8) h += ' ';
      std::string img;
      for (int i = 0; i < 8; ++i) img += char((h.size() >> (8 * i)) & 0xff);
      img += h + data;
      write_scratch(d + "/" + name, reinterpret_cast<const std::uint8_t*>(img.data()), img.size());
    };
    const std::string two_floats("\0\0\x80\x3f\0\0\0\x40", 8);  // 1.0f, 2.0f
    shard("a.safetensors", R"({"h.0.w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})",
          two_floats);
    shard("b.safetensors",
          R"({"h.1.w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
          R"( "h.1.b": {"dtype": "BF16", "shape": [1], "data_offsets": [8, 10]}})",
          two_floats + std::string("\x80\x3f", 2));
    std::atexit([] {
      const std::string base = scratch_path("-index");
      ::unlink((base + "/a.safetensors").c_str());
      ::unlink((base + "/b.safetensors").c_str());
      ::rmdir(base.c_str());
    });
    return d;
  }();
  return dir;
}

}  // namespace attn::fuzz

// parse_npy on the bytes, then every conversion of what parsed.
inline int fuzz_npy(const std::uint8_t* data, std::size_t size) {
  try {
    const attn::RawArray a = attn::parse_npy(data, size, "fuzz");
    attn::fuzz::convert_all(a, "fuzz");
  } catch (const attn::Error&) {
  }
  return 0;
}

// The .npz reader (ZIP directory, ZIP64, inflate, CRC, member .npy images).
inline int fuzz_npz(const std::uint8_t* data, std::size_t size) {
  attn::fuzz::fuzz_state_dict_file(data, size, ".npz", attn::read_npz);
  return 0;
}

// The .safetensors reader (header length, JSON header, offsets tiling the data).
inline int fuzz_safetensors(const std::uint8_t* data, std::size_t size) {
  attn::fuzz::fuzz_state_dict_file(data, size, ".safetensors", attn::read_safetensors);
  return 0;
}

// The sharded-checkpoint reader (*.safetensors.index.json: weight_map, shard
// names kept inside the folder, shards opened on demand and checked against
// the index), over two fixed shards beside the fuzzed index.
inline int fuzz_index(const std::uint8_t* data, std::size_t size) {
  const std::string path = attn::fuzz::index_folder() + "/m.safetensors.index.json";
  attn::fuzz::write_scratch(path, data, size);
  try {
    attn::fuzz::read_all(attn::open_state_dict(path));
  } catch (const attn::Error&) {
  }
  ::unlink(path.c_str());
  return 0;
}

// The strict JSON config parser (and resolve_config, which it calls).
inline int fuzz_config(const std::uint8_t* data, std::size_t size) {
  try {
    const std::string text(reinterpret_cast<const char*>(data), size);
    (void)attn::parse_config(text, "fuzz.json");
  } catch (const attn::Error&) {
  }
  return 0;
}
