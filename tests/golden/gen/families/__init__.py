"""One file per family: its config.json reading (`settings`), its tensors under their real
names, the quirks its modeling code has beside reference.attention, and its cases (FOLDERS,
HELDOUT, GGUF, VARIANTS, PLAIN). See tests/golden/README.md."""
import importlib

NAMES = [
    "gpt2", "bert", "distilbert", "vit", "clip", "modernbert", "llama", "mistral", "qwen2",
    "qwen3", "gemma", "gemma2", "gemma3", "gemma4", "phi3", "phi", "gpt_neox", "falcon", "bloom",
    "mpt", "opt", "whisper", "olmo2", "gpt_oss", "gpt_bigcode", "starcoder2", "granite", "gptj",
    "internlm2", "smollm3", "qwen3_next", "cohere", "stablelm", "llama4", "deepseek", "t5",
    "torch_mha", "glm", "exaone4", "ernie", "seed_oss", "apertus", "qwen_moe", "olmo3",
    "gpt_neo", "esm", "dinov2", "siglip", "mistral3", "persimmon", "phimoe",
    "bart", "mbart", "marian", "m2m_100", "nllb_moe",
    "granitemoehybrid", "nemotron_h", "falcon_h1", "jamba", "rope_float32",
    "olmo", "olmoe", "hunyuan", "gemma3n", "qwen_vl", "dbrx", "deberta_v2", "codegen",
]


def all_families():
    return [importlib.import_module(f"{__name__}.{n}") for n in NAMES]
