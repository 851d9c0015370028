#include <attn/api.h>

#include <cstdio>
#include <iostream>
#include <xtensor/xio.hpp>
#include <xtensor/xview.hpp>

int main(int argc, char** argv) {
  try {
    // A config's layer, input (B, S, C) and padding mask, loaded as attn-run loads them.
    attn::Example ex = attn::load_example(argc > 1 ? argv[1] : "configs/raschka_mha_causal.json");

    attn::RunSpec spec;
    spec.key_padding = ex.key_padding;
    spec.maps = true;
    auto [context, maps, masked] = attn::run_attention(ex.layer, ex.x, spec);

    auto first = xt::view(context, 0);  // (S, O): the first sequence
    for (std::size_t i = 0; i < first.shape(0); ++i)
      for (std::size_t o = 0; o < first.shape(1); ++o)
        std::printf(o + 1 < first.shape(1) ? "%.4f " : "%.4f\n", first(i, o));
    std::cout << "maps shape " << xt::adapt(maps->shape()) << ", head 0 of sequence 0:\n"
              << xt::view(*maps, 0, 0) << "\n";
  } catch (const attn::Error& e) {
    std::cerr << "client: error: " << e.what() << "\n";
    return e.exit_code();
  }
}
