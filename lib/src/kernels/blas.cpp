// OpenBLAS control and what the build runs on (blas_info): the thread-count
// guard that keeps BLAS single-threaded inside our workers (ARCHITECTURE.md: one threading layer)
// and lets the projection GEMMs use every thread. No-ops in builds whose own kernels replace every
// OpenBLAS call (kernels/micro.h's kCallsBlas).
//
// Note on speed: Debian's OpenBLAS 0.3.21 (DYNAMIC_ARCH) treats AMD Zen 4/5
// as "Haswell" (AVX2 kernels). Where the CPU executes AVX-512 at full width,
// OPENBLAS_CORETYPE=SkylakeX in the environment selects OpenBLAS's AVX-512
// sgemm (measured about 2x on the projections here). That is the user's
// choice: the library does not override OpenBLAS's kernel selection.
#include <cblas.h>
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "attn/error.h"
#include "attn/linear.h"
#include "kernels/kernels.h"
#include "kernels/micro.h"

// OpenBLAS's pthread build exports this (driver/others/blas_server.c): it
// stops the library's own worker threads; a later threaded call would start
// them again (never made here: every call runs with one OpenBLAS thread).
extern "C" int blas_thread_shutdown_(void);

namespace attn {
namespace {

// OpenBLAS starts (cores - 1) threads when it is loaded, and each spins on
// sched_yield for about 0.1 s before it sleeps: at the start of a short
// process that steals a core from the forward pass (a B=4, S=1024
// GPT-2-small layer: cold compute 215 ms with them, 165 ms without).
void stop_threads(void (*set_threads)(int), int (*shutdown)()) {
  if (set_threads) set_threads(1);
  if (shutdown) shutdown();
}

// Builds whose own kernels make every float32 product (kCallsBlas false)
// call OpenBLAS only for --check-f64's float64 products (gemm_f64_nt), so
// they load it then, not at every process's start: with libgfortran beside
// it, 33 MB of kernels mapped and initialised took about 6 ms of a 13 ms
// start on the Zen 5 VM, for a library most runs never call.
struct LoadedBlas {
  decltype(&cblas_dgemm) dgemm = nullptr;
  std::string error;  // why it could not be loaded
};

template <class F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(::dlsym(lib, name));
}

// stop_threads for an OpenBLAS opened with dlopen.
void stop_threads_of(void* lib) {
  stop_threads(symbol<void (*)(int)>(lib, "openblas_set_num_threads"),
               symbol<int (*)()>(lib, "blas_thread_shutdown_"));
}

// Unused in builds that call OpenBLAS directly (kCallsBlas).
[[maybe_unused]] const LoadedBlas& loaded_blas() {
  static LoadedBlas blas;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = nullptr;
    for (const char* name : {"libopenblas.so.0", "libopenblas.so"})
      if ((lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      const char* why = ::dlerror();
      blas.error = why ? why : "libopenblas.so.0 not found";
      return;
    }
    stop_threads_of(lib);
    blas.dgemm = symbol<decltype(&cblas_dgemm)>(lib, "cblas_dgemm");
    if (!blas.dgemm) blas.error = "libopenblas.so.0 has no cblas_dgemm";
  });
  return blas;
}

}  // namespace

void use_own_threads_only() {
  if constexpr (kernels::micro::kCallsBlas) {
    stop_threads(openblas_set_num_threads, blas_thread_shutdown_);
  } else if (void* lib = ::dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD)) {
    // Loaded all the same (a program that links it for itself): its threads stopped.
    stop_threads_of(lib);
    ::dlclose(lib);
  }
}

std::string blas_info() {
  if constexpr (kernels::micro::kCallsBlas) {
    const char* config = openblas_get_config();
    return config ? config : "unknown BLAS";
  }
  // The depth slices chosen for this CPU (kernels.h depth_slicing), so a
  // report of a slow machine says which cut it ran.
  const kernels::DepthSlicing cut = kernels::depth_slicing();
  const std::string long_tasks =
      cut.long_tasks_above == kernels::DepthSlicing::kNever
          ? ""
          : "; projections past " + std::to_string(cut.long_tasks_above) + " in long tasks";
  return std::string("not used: attn-run's own GEMM kernels (") +
         kernels::micro::Batch::arch_type::name() + ", " + std::to_string(kernels::micro::kLanes) +
         " float lanes; depths past " + std::to_string(cut.above) + " in slices of " +
         std::to_string(cut.slice) + long_tasks + ")";
}

}  // namespace attn

namespace attn::kernels {

BlasThreads::BlasThreads(int n) : saved_(n) {
  if constexpr (micro::kCallsBlas) {
    saved_ = openblas_get_num_threads();
    if (n != saved_) openblas_set_num_threads(n);
  }
}

BlasThreads::~BlasThreads() {
  if constexpr (micro::kCallsBlas)
    if (openblas_get_num_threads() != saved_) openblas_set_num_threads(saved_);
}

void gemm_f64_nt(std::size_t M, std::size_t N, std::size_t K, const double* a, std::size_t lda,
                 const double* b, std::size_t ldb, double* c, std::size_t ldc) {
  if (M == 0 || N == 0) return;
  decltype(&cblas_dgemm) dgemm = nullptr;
  if constexpr (micro::kCallsBlas) {
    dgemm = &cblas_dgemm;
  } else {
    const LoadedBlas& blas = loaded_blas();
    if (!blas.dgemm)
      throw Error(
          Exit::unavailable,
          "--check-f64: its float64 products need OpenBLAS, which cannot be loaded: " + blas.error);
    dgemm = blas.dgemm;
  }
  dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(M), static_cast<int>(N),
        static_cast<int>(K), 1.0, a, static_cast<int>(lda), b, static_cast<int>(ldb), 0.0, c,
        static_cast<int>(ldc));
}

}  // namespace attn::kernels
