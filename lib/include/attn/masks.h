// The masks of CONTRACT.md "Scores, in order" (steps 6 and 7), resolved
// against the run's shapes before the kernels start: torch's attn_mask (bool:
// true = not allowed; float: added to the scores) in every shape torch and
// Hugging Face write, and Hugging Face's attention_mask (1 = attend) as a key
// padding mask.
//
// Letters: B batch, H heads, L queries, T keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/scores.h"
#include "attn/tensor.h"

namespace attn {

// attn_mask of shape (L, T), (B, L, T), (B*H, L, T) (torch MHA's 3-D form),
// (B, 1, L, T) or (B, H, L, T). Exit::data naming `name` for any other shape
// (listing these, with the run's numbers) and, for a float mask, for NaN or
// +inf (which would make a row NaN).
ScoreMask score_mask(const Mask& m, std::size_t B, std::size_t H, std::size_t L, std::size_t T,
                     const std::string& name);
ScoreMask score_mask(const Tensor& m, std::size_t B, std::size_t H, std::size_t L, std::size_t T,
                     const std::string& name);

ScoreMask score_mask(const AttnMask& m, std::size_t B, std::size_t H, std::size_t L, std::size_t T,
                     const std::string& name);

// Hugging Face's attention_mask (1 = attend, 0 = padded) as a key padding
// mask (1 = padded): every nonzero value keeps its key.
Mask padding_from_attention_mask(const Mask& attention_mask);

// Share of all keys a padding mask marks as padded (0 for an empty mask). A
// padding_mask above one half is likely a Hugging Face attention_mask passed
// with the opposite meaning: the caller warns.
double padded_share(const Mask& padding);

}  // namespace attn
