"""``arena.cli_api.emit_json``: what every ``--json`` flag prints is strict JSON."""

from __future__ import annotations

import json

from arena.cli_api import emit_json


def test_undefined_figures_are_null_so_strict_readers_accept_the_document(capsys):
    emit_json({"ratio": float("nan"), "curve": [1.5, float("inf")], "pair": (2, "x")})
    text = capsys.readouterr().out
    assert "NaN" not in text and "Infinity" not in text
    strict = json.loads(text, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))
    assert strict == {"ratio": None, "curve": [1.5, None], "pair": [2, "x"]}
