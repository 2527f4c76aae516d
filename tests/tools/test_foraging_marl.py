"""``python -m arena.tools.foraging_marl``: IPPO and MAPPO trained and measured on foraging."""

from __future__ import annotations

import json

import pytest

from arena.errors import ArenaError
from arena.tools.foraging_marl import main


def test_a_short_run_reports_team_returns(capsys):
    game = "foraging(size=4,coop=true,max_level=1,horizon=5)"
    args = ["--game", game, "--seeds", "0", "--games", "4", "--batch", "2", "--eval-games", "4", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    for m in ("ippo", "mappo"):
        (row,) = out[m]["seeds"]
        assert 0.0 <= row["team_return"] <= 1.0 and 1 <= row["rounds"] <= 5
        assert out[m]["team_return"]["n"] == 1
    with pytest.raises(ArenaError, match="methods are ippo, mappo"):
        main(["--methods", "qmix"])
