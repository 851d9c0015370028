// All-or-nothing output into a folder (CONTRACT.md "Outputs"): every file is
// written under a temporary name inside the target folder and renamed only by
// commit(), after all of them are complete. Until then existing files stay
// byte-for-byte; on failure, destruction or any terminating signal the
// temporaries are removed. commit() holds an exclusive lock on the folder, so
// concurrent runs into one folder leave one run's complete set; a run that
// writes into several folders (an --out-dir and a --plot elsewhere) commits
// them together with commit_together().
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace attn {

class OutputDir;

// A run's output folder (CONTRACT.md "Output safety rules"): an existing
// folder (checked writable) stages its files inside; an absent one is
// created only when its files commit (its parents now, its temporaries in
// its parent), so a run that dies or fails leaves no empty folder behind.
// Exit::cant_create as OutputDir's.
std::unique_ptr<OutputDir> open_output_dir(const std::string& dir);

class OutputDir {
 public:
  // Creates the folder (and parents) when absent. Exit::cant_create when it
  // cannot be created or a file is in the way.
  explicit OutputDir(std::string dir);
  // A folder created only when its files commit (an --input-list result, so
  // a run that dies leaves no folder that looks like a result): its files
  // are staged in a hidden folder inside `staging_dir`, an existing folder
  // on the same file system (the folder's parent), and commit() renames that
  // folder to `dir` (an existing `dir` is swapped for it whole, its files
  // that this commit neither writes nor removes carried over), so `dir`
  // never holds part of its files, whatever kills the run. Exit::cant_create
  // when a file is in the way. With `replace` false, a `dir` that exists by
  // the commit (made meanwhile by another commit) gets the files one by one
  // instead, beside what it holds (open_output_dir's folders).
  OutputDir(std::string dir, std::string staging_dir, bool replace = true);
  ~OutputDir();  // removes every temporary not committed
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  const std::string& dir() const { return dir_; }
  // Where its temporaries live: the folder itself, or the staging folder.
  const std::string& staging() const { return staging_; }
  // The names of the files staged so far, in the order added ("context.npy").
  std::vector<std::string> names() const;
  // Where the staged file `name` is until the commit (its temporary's path;
  // "" when nothing of that name is staged): a reader of the staged bytes,
  // such as --pack appending an input's files to its shard's, opens it here.
  std::string staged_path(const std::string& name) const;

  // Stage `name` with these bytes: written now, made durable with the other
  // files at the commit. Exit::cant_create / Exit::io on failure.
  void add(const std::string& name, const std::string& bytes);

  // Stage a float32 .npy of this shape whose data is written later, piece by
  // piece, with write_at (so large attention maps never sit in memory).
  // Returns a handle for write_at.
  int add_streamed_npy(const std::string& name, const std::vector<std::size_t>& shape);
  // Write floats at element offset `first` of a streamed .npy's data.
  // Thread-safe (pwrite). Exit::io on failure.
  void write_at(int handle, std::size_t first, const float* values, std::size_t count);
  // The same for another element type: descr as .npy spells it ("<i8" for
  // int64), item_size its bytes; written with write_bytes_at.
  int add_streamed_npy(const std::string& name, const std::vector<std::size_t>& shape,
                       const std::string& descr, std::size_t item_size);
  // Write `bytes` bytes at byte offset `first_byte` of a streamed .npy's data.
  void write_bytes_at(int handle, std::size_t first_byte, const void* data, std::size_t bytes);

  // A streamed .npy as BlockWriter writes it: this folder's descriptor (open
  // until the commit), the data's byte offset, the final path for messages,
  // and with `direct` a second descriptor of the file opened with O_DIRECT
  // (the caller closes it; -1 where the file system refuses O_DIRECT).
  struct StreamedFile {
    int fd = -1;
    int direct_fd = -1;
    std::size_t data_offset = 0;
    std::size_t data_bytes = 0;  // the array's bytes after the header
    std::string path;
  };
  StreamedFile streamed_file(int handle, bool direct) const;

  // Delete `name` from the folder at commit (a stale result of an earlier
  // run that this run does not produce, e.g. attention.npy under --no-attn).
  void remove_on_commit(const std::string& name) { stale_.push_back(dir_ + "/" + name); }

  // Exit::cant_create when `name` cannot be a file in this folder because it
  // is longer than the file system allows (checked before any work, so a run
  // never computes results it cannot name).
  void check_name(const std::string& name) const;

  // Stage files in anonymous memory (memfd), up to `budget` bytes in all,
  // rather than in the folder: for a folder that is never committed, whose
  // files a reader takes through staged_path (--pack stages each input's
  // results so before appending them to its shard's files; in a hidden
  // folder that was a folder and three files made and removed an input).
  // A file past what is left of the budget is staged in the folder as
  // before; so is every file where memfd or /proc is missing. commit()
  // refuses a folder holding any (Exit::software).
  void stage_in_memory(std::size_t budget);

  // Flush and rename every staged file to its final name. Exit::io on failure.
  void commit();

 private:
  struct Staged {
    std::string final_path;
    std::string temp_path;
    int fd = -1;                  // open while streamed writes are pending (add_streamed_npy)
    bool unsynced = false;        // written and closed, not yet fsynced (add)
    std::size_t data_offset = 0;  // header size of a streamed .npy
    std::size_t data_bytes = 0;   // its array's bytes
    void* live = nullptr;         // its slot in the signal handler's list
    bool in_memory = false;       // a memfd (stage_in_memory): fd open until discarded
  };
  std::string dir_;
  std::string staging_;    // where the temporaries live: dir_, or its parent until the commit
  bool deferred_ = false;  // dir_ is created at the commit
  bool replace_ = true;    // deferred: an existing dir_ is swapped whole (else merged into)
  std::vector<Staged> staged_;
  std::vector<std::string> stale_;
  bool committed_ = false;
  std::size_t memory_left_ = 0;  // stage_in_memory's budget not yet taken
  friend void commit_together(const std::vector<OutputDir*>& dirs);
  friend void flush_together(const std::vector<OutputDir*>& dirs);
  // A deferred folder's files are staged under their own names in a hidden
  // folder (".attn-run-tmp-<pid>-<n>" in staging_), which the commit renames
  // to dir_: one rename, so no folder ever holds part of its files.
  std::string hidden_;
  void* hidden_live_ = nullptr;  // its slot in the signal handler's list
  std::string temp_name(const std::string& name);
  void commit_deferred();  // hidden_ becomes dir_ (commit_together, signals held off)
  // fsync every staged file not yet on the disk and close it; Exit::io on failure.
  void flush_staged();
  // Register a temporary of `bytes` bytes and open it (in memory where the budget allows).
  Staged& stage(const std::string& name, std::size_t bytes);
  void discard();
};

// Writes the blocks of one streamed .npy as compute threads hand them over,
// without making those threads wait on the page cache: write() copies a
// block into one of a few page-aligned buffers and returns; a writer thread
// writes the block's whole pages with O_DIRECT (straight from the buffer:
// copying hundreds of MB into fresh page-cache pages costs, on a VM, about
// as much CPU as the attention that made the maps) and its partial end pages
// through the page cache. Where O_DIRECT is refused (tmpfs, some FUSE) or
// `direct` is false, every byte goes through the page cache as
// write_bytes_at does. A small file (its array within one buffer's piece,
// under 2 MiB: a short input's context) is written by write() itself
// through the page cache, with no thread and no buffers: for one block
// there is nothing to overlap, and they cost more than its bytes. Call
// finish() before the folder's commit.
class BlockWriter {
 public:
  BlockWriter(OutputDir& out, int handle, bool direct = true);
  ~BlockWriter();  // stops the writer thread; blocks not yet written are dropped
  BlockWriter(const BlockWriter&) = delete;
  BlockWriter& operator=(const BlockWriter&) = delete;

  // Queue `bytes` bytes for byte offset `first_byte` of the file's data.
  // Thread-safe; waits while every buffer is queued for the disk. Throws the
  // writer's error (Exit::io naming the file) once a write has failed.
  void write(std::size_t first_byte, const void* data, std::size_t bytes);
  // Wait until every queued block is written. Exit::io when one failed.
  void finish();
  // Whole pages bypass the page cache (false: O_DIRECT refused or not asked).
  bool direct() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Commit several folders' staged files as one set: every file is flushed
// first (the step that can fail on a full disk), then each folder is locked
// (once, however many OutputDirs name it; in one fixed order, so two runs
// never wait on each other), then every rename happens with the cleanup
// signals held off. Nothing is renamed unless everything was written.
void commit_together(const std::vector<OutputDir*>& dirs);

// commit_together's first step alone: every staged file of these folders on
// the disk and closed (Exit::io on failure). It may run on another thread
// while this one stages other folders, if nothing touches these folders
// until it returns; their commit_together then only locks and renames.
void flush_together(const std::vector<OutputDir*>& dirs);

// Install handlers for every terminating signal of CONTRACT.md ("Output
// safety rules": HUP INT QUIT TERM USR1 USR2 ALRM XCPU VTALRM PROF) that
// remove live temporaries, then exit with 128+signal; ignore SIGXFSZ so a
// file-size limit is a write error (EFBIG, exit 74); lower a soft CPU limit
// equal to the hard one (`ulimit -t N`) by a second, so SIGXCPU comes before
// the kernel's SIGKILL. Call once from main.
void install_cleanup_signal_handlers();

// Test hook: when the environment holds ATTN_TEST_PAUSE_AT=<where>, the
// process stops itself (SIGSTOP) at that point, so a test can deliver a
// signal at a known moment (sent while stopped, before SIGCONT). Points:
// "compute" (the attention temporary reserved, before the forward pass),
// "commit" (temporaries written, nothing renamed yet) and "rename" (inside a
// commit, after each rename: a file into its folder, or a whole folder
// created at the commit). "<point>:N" stops the Nth time the run reaches the
// point (an --input-list run's Nth commit, a commit's Nth rename). "pack-commit":
// a --pack group's files and index written, its manifest not yet.
void test_pause_point(const char* where);

}  // namespace attn
