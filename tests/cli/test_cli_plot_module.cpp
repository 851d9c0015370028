// cli_plot_module: cairo and fontconfig live in the picture module
// (attn-run-cairo.so, app/pictures/plot_module.h), not in the executable: attn-run
// does not link them, a run that draws no SVG or PNG never loads them, one
// that does loads them from the module beside the executable; and without
// the module (or with a broken one) --plot FILE.png/.svg fails with one line,
// exit 70, before any work and with no file written, while the other outputs
// (HTML page, context) still work.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "cli_checks.h"
#include "test_util.h"

using attn::test::q;
using attn::test::run;

namespace {

std::string cfg(const std::string& name) { return attn::test::quoted_config(name); }

std::string module_path() {
  return (std::filesystem::path(attn::test::binary()).parent_path() / "attn-run-cairo.so").string();
}

// The libraries the dynamic loader maps for `command` (glibc's LD_DEBUG=files
// trace on stderr), so it covers libraries pulled in indirectly too.
std::string loaded_libraries(const std::string& command) {
  return run("LD_DEBUG=files " + command + " 2>&1 >/dev/null").out;
}

// attn-run alone in a fresh folder: no module beside it, none in ../lib*/attn-run.
std::string lone_binary(const attn::test::TempDir& t) {
  std::filesystem::create_directory(t / "bin");
  std::filesystem::copy_file(attn::test::binary(), t / "bin/attn-run");
  return t / "bin/attn-run";
}

}  // namespace

TEST_CASE("cli_plot_module: the executable does not link cairo; only a picture loads it") {
  const std::string bin = attn::test::quoted_binary();
  const auto needed = run("readelf -d " + bin + " 2>&1");
  if (needed.exit_code == 0) {  // binutils' readelf, present wherever g++ is
    CHECK(needed.out.find("(NEEDED)") != std::string::npos);
    CHECK_MESSAGE(needed.out.find("libcairo") == std::string::npos, needed.out);
    CHECK_MESSAGE(needed.out.find("libfontconfig") == std::string::npos, needed.out);
    const auto module = run("readelf -d " + q(module_path()) + " 2>&1");
    CHECK_MESSAGE(module.out.find("[libcairo.so") != std::string::npos, module.out);
  }
  const std::string plain = loaded_libraries(bin + " -q --config " + cfg("warner_causal.json"));
  REQUIRE(plain.find("file=libspdlog") != std::string::npos);  // the trace works
  CHECK_MESSAGE(plain.find("libcairo") == std::string::npos, plain);
  CHECK_MESSAGE(plain.find("libfontconfig") == std::string::npos, plain);

  attn::test::TempDir t;
  const std::string drawn = loaded_libraries(bin + " -q --config " + cfg("warner_causal.json") +
                                             " --plot " + q(t / "w.png"));
  CHECK(drawn.find("attn-run-cairo.so") != std::string::npos);
  CHECK(drawn.find("file=libcairo.so") != std::string::npos);
  CHECK(std::filesystem::file_size(t / "w.png") > 1000);
}

TEST_CASE("cli_plot_module: without the module --plot PNG/SVG is one line, exit 70, no output") {
  attn::test::TempDir t;
  const std::string bin = lone_binary(t);
  for (const std::string name : {"w.png", "w.svg", "W.PNG"}) {
    CAPTURE(name);
    const auto r = run(q(bin) + " -q --config " + cfg("warner_causal.json") + " --out-dir " +
                       q(t / "out") + " --plot " + q(t / name));
    attn::test::check_cli_failure(
        r, 70,
        {"--plot: cannot load the picture module (", t / "bin/attn-run-cairo.so",
         "attn-run-cairo.so: cannot open shared object file"});
    // Nothing was written: no picture, no output folder, no temporary.
    const auto files = attn::test::snapshot(t.path);
    CHECK(files.size() == 1);
    CHECK(files.count("bin") == 1);
  }
  // Runs that draw no SVG or PNG do not need it.
  CHECK(run(q(bin) + " -q --config " + cfg("warner_causal.json")).exit_code == 0);
  CHECK(run(q(bin) + " -q --config " + cfg("warner_causal.json") + " --plot " + q(t / "w.html"))
            .exit_code == 0);
  CHECK(std::filesystem::exists(t / "w.html"));
}

TEST_CASE("cli_plot_module: a broken module beside the executable is named with its error") {
  attn::test::TempDir t;
  const std::string bin = lone_binary(t);
  attn::test::write_text(t / "bin/attn-run-cairo.so", std::string(4096, 'x'));
  const auto r =
      run(q(bin) + " -q --config " + cfg("warner_causal.json") + " --plot " + q(t / "w.png"));
  // The error of the file that is there (dlopen's "invalid ELF header"), not
  // "No such file" of the next place.
  attn::test::check_cli_failure(
      r, 70, {"cannot load the picture module", ": " + t / "bin/attn-run-cairo.so: "});
  CHECK(r.err.find("No such file") == std::string::npos);
  CHECK(!std::filesystem::exists(t / "w.png"));
}
