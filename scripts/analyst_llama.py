"""A checkpoint of the analyst run on llama.cpp: the adapter merged into SmolLM2 and
exported to GGUF Q8_0 (smollm2_demo.export_gguf), and a Writer (analyst_demo.play)
that samples or decodes greedily from the exact token ids GRPO trains on. TRL's
sampler settings are mirrored: no top-k, no top-p, no min-p, no repetition penalty."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from analyst_demo import Writer
from smollm2_demo import export_gguf, load_model


def merged_gguf(adapter: Path | None, tok: Any, folder: Path) -> Path:
    """GGUF of the base model with `adapter` merged in (None: the base model)."""
    model = load_model()
    if adapter is not None:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
    return export_gguf(model, tok, folder)


def open_llama(gguf: Path) -> Any:
    from llama_cpp import Llama

    return Llama(model_path=str(gguf), n_ctx=2048, n_threads=2, seed=0, verbose=False)


def episode_seed(*parts: object) -> int:
    """A sampling seed named by what it is for (never hash(): it is salted per process)."""
    text = ":".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


def llama_writer(llm: Any, eos: int, temperature: float, seed: int) -> Writer:
    """Each turn's ids from llama.cpp: greedy at temperature 0, else sampled."""
    turn = {"n": 0}

    def write(ids: list[int], budget: int) -> list[int]:
        llm.set_seed(seed + turn["n"])
        turn["n"] += 1
        out: list[int] = []
        for token in llm.generate(
            ids, temp=temperature, top_k=0, top_p=1.0, min_p=0.0, repeat_penalty=1.0
        ):
            out.append(int(token))
            if token == eos or len(out) >= budget:
                break
        return out

    return write
