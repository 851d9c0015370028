#include "family/gguf_kv_b.h"

#include <cstring>
#include <vector>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/tensor.h"

namespace attn::family {

namespace {

// DeepSeek's kv_b_proj (H*(Dn + Dv), Rkv) from the halves the converter
// writes instead (DeepseekV2Model.modify_tensors: kv_b viewed (H, Dn + Dv,
// Rkv), split, the k part transposed): attn_k_b (H, Rkv, Dn) and attn_v_b
// (H, Dv, Rkv). Assembled as float32 when the layer is read.
class KvBRegion : public detail::Region {
 public:
  KvBRegion(std::shared_ptr<const detail::Stored> k_b, std::shared_ptr<const detail::Stored> v_b,
            std::string k_name, std::string v_name)
      : k_b_(std::move(k_b)),
        v_b_(std::move(v_b)),
        k_name_(std::move(k_name)),
        v_name_(std::move(v_name)) {}

  detail::ByteView bytes(const std::string&) const override {
    const Tensor k = detail::read_stored_f32(*k_b_, false, k_name_);  // (H, Rkv, Dn)
    const Tensor v = detail::read_stored_f32(*v_b_, false, v_name_);  // (H, Dv, Rkv)
    const std::size_t H = k.shape[0], R = k.shape[1], Dn = k.shape[2], Dv = v.shape[1];
    auto out = std::make_shared<std::vector<float>>(H * (Dn + Dv) * R);
    float* o = out->data();
    for (std::size_t h = 0; h < H; ++h) {
      for (std::size_t i = 0; i < Dn; ++i, o += R)
        for (std::size_t r = 0; r < R; ++r) o[r] = k.data[(h * R + r) * Dn + i];
      for (std::size_t i = 0; i < Dv; ++i, o += R)
        std::memcpy(o, &v.data[(h * Dv + i) * R], R * sizeof(float));
    }
    detail::ByteView b;
    b.p = reinterpret_cast<const std::uint8_t*>(out->data());
    b.n = out->size() * sizeof(float);
    b.hold = out;
    return b;
  }

 private:
  std::shared_ptr<const detail::Stored> k_b_, v_b_;
  std::string k_name_, v_name_;
};

}  // namespace

std::shared_ptr<const detail::Stored> kv_b_of(const std::string& path, const std::string& blk,
                                              const std::shared_ptr<const detail::Stored>& k,
                                              const std::shared_ptr<const detail::Stored>& v) {
  const std::vector<std::size_t>& ks = k->info.shape;
  const std::vector<std::size_t>& vs = v->info.shape;
  if (ks.size() != 3 || vs.size() != 3 || ks[0] != vs[0] || ks[1] != vs[2])
    throw Error(Exit::data, printable(path) + ":" + blk +
                                "attn_k_b.weight / attn_v_b.weight: expected (H, Rkv, Dn) and "
                                "(H, Dv, Rkv), found " +
                                shape_str(ks) + " and " + shape_str(vs));
  auto s = std::make_shared<detail::Stored>();
  s->info.dtype = DType::f4;
  s->info.shape = {ks[0] * (ks[2] + vs[1]), ks[1]};
  s->info.gguf_type = k->info.gguf_type == v->info.gguf_type
                          ? k->info.gguf_type
                          : k->info.gguf_type + "+" + v->info.gguf_type;
  s->info.stored_bytes = k->info.stored_bytes + v->info.stored_bytes;
  s->region = std::make_shared<KvBRegion>(k, v, path + ":" + blk + "attn_k_b.weight",
                                          path + ":" + blk + "attn_v_b.weight");
  return s;
}

}  // namespace attn::family
