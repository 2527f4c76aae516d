"""tools/trust_split_reading.py: claims sorted by what the other's message would mean."""

from __future__ import annotations

import arena
from tools.trust_split_reading import claim_class, reading


def test_claim_classes_follow_rock_paper_scissors():
    assert claim_class("Now: you paper. Other said 'rock'.") == "upper_if_true"
    assert claim_class("Now: you rock. You said 'rock'. Other said 'Paper.' (if true, you lower).") == "lower_if_true"
    assert claim_class("Last: you rock, other said 'paper', you lower, claims 2/10. Now: you scissors.") == "other"
    assert claim_class("Now: you rock. Other said 'rock'.") == "other"  # my own hand's name: a lie
    assert claim_class("Now: you rock. Other said 'rsaissspa'.") == "other"


def test_reading_counts_every_claim_of_the_self_play_games(tmp_path):
    from omegaconf import OmegaConf

    from arena.tools.tiny_model import tiny_model_dir

    config = OmegaConf.create({"agent": {"mode": "scored", "temperature": 1, "chat": False, "max_text_tokens": 4}})
    out = reading(str(tiny_model_dir(1)), config, "trust_split(talk=true,text=hinted,horizon=2)", games=3, seed=0)
    assert sum(out[k]["n"] for k in ("upper_if_true", "lower_if_true", "other")) == 3 * 2 * 2
    assert arena.load_game("trust_split(talk=true,text=hinted,horizon=2)").spec.params["text"] == "hinted"
