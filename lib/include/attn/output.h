// All-or-nothing output into a folder (CONTRACT.md "Outputs"): every file is
// written under a temporary name inside the target folder and renamed only by
// commit(), after all of them are complete. Until then existing files stay
// byte-for-byte; on failure, destruction or SIGINT/SIGTERM the temporaries are
// removed.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace attn {

class OutputDir {
 public:
  // Creates the folder (and parents) when absent. Exit::cant_create when it
  // cannot be created or a file is in the way.
  explicit OutputDir(std::string dir);
  ~OutputDir();  // removes every temporary not committed
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  const std::string& dir() const { return dir_; }

  // Stage `name` with these bytes. Exit::cant_create / Exit::io on failure.
  void add(const std::string& name, const std::string& bytes);

  // Stage a float32 .npy of this shape whose data is filled in place through
  // the returned pointer (a shared memory map of the temporary file), so
  // large attention maps never need to fit in memory at once.
  float* add_mapped_npy(const std::string& name, const std::vector<std::size_t>& shape);

  // Flush and rename every staged file to its final name. Exit::io on failure.
  void commit();

 private:
  struct Staged {
    std::string final_path;
    std::string temp_path;
    void* map = nullptr;
    std::size_t map_size = 0;
  };
  std::string dir_;
  std::vector<Staged> staged_;
  bool committed_ = false;
  std::string temp_name(const std::string& name) const;
  void discard();
};

// Install SIGINT/SIGTERM handlers that remove live temporaries, then exit
// with 128+signal. Call once from main.
void install_cleanup_signal_handlers();

}  // namespace attn
