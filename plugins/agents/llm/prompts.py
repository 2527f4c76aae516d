"""Prompts from observations: a per-game instruction plus the game's own text rendering and
the legal actions, wrapped in the model's chat template when it has one. With
``legal_moves=False`` the list is left out (the model must work out what is legal from the
rules and the situation, as in Kaggle's Game Arena harness); the answer is still checked.
With ``observation="json"`` the observation is the game's structured view
(``State.observation_struct``) as compact JSON instead of its text, for every game that has one
(the others keep their text): the legal moves stay in the actions list, and the event log keeps
its last :data:`JSON_LOG` entries, as the text views keep the recent events.

Templates are plain ``str.format`` strings with the fields ``{instruction}``,
``{observation}``, ``{actions}`` (labels joined by ", "), ``{game}`` and ``{max_chars}``.
A YAML file can override any of them per game::

    default:   {instruction: "...", choice: "...", text: "..."}
    kuhn_poker: {instruction: "You play Kuhn poker ..."}
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping

import yaml

from arena.agent import Observation
from arena.errors import ArenaError
from arena.game import parse_game_name

INSTRUCTIONS: dict[str, str] = {
    "default": "You are playing a game. Read the situation and choose your move.",
    "kuhn_poker": (
        "You are playing Kuhn poker: three cards (Jack < Queen < King), one card each, "
        "ante 1 chip, one betting round. The higher card wins the pot at showdown."
    ),
    "leduc_poker": (
        "You are playing Leduc hold'em: six cards (two suits of Jack, Queen, King), one private "
        "card each, one public card after the first betting round; a pair with the public card wins, "
        "otherwise the higher card."
    ),
    "liars_dice": (
        "You are playing Liar's dice: each player rolls hidden dice; bid on how many dice of a face "
        "all players hold together, or call 'liar' on the previous bid."
    ),
    "monopoly_deal": (
        "You are playing Monopoly Deal: be the first to complete the required number of property "
        "sets of different colours. Bank money, lay properties, charge rent; when someone demands "
        "payment, answer with Just Say No or pay one card at a time."
    ),
}

CHOICE = "{observation}\nLegal actions: {actions}\nAnswer with exactly one legal action.\nAction:"
CHOICE_UNLISTED = "{observation}\nAnswer with exactly one legal action.\nAction:"
TEXT = "{observation}\nWrite what you say to the other players (at most {max_chars} characters).\nMessage:"
FIELDS = {"instruction", "choice", "text"}
OBSERVATIONS = ("text", "json")
JSON_LOG = 8
"""Events of a structured view's ``log`` kept in a JSON prompt (the most recent)."""


@dataclass(frozen=True)
class PromptTemplate:
    instruction: str
    choice: str = CHOICE
    text: str = TEXT


def load_templates(path: str | None) -> dict[str, dict[str, str]]:
    """Per-game overrides from a YAML file (``None`` → no overrides)."""
    if not path:
        return {}
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text())
    except FileNotFoundError:
        raise ArenaError(f"llm agent: template file not found: {p}") from None
    except yaml.YAMLError as exc:
        raise ArenaError(f"llm agent: template file {p} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise ArenaError(f"llm agent: template file {p} must map game names to {{instruction, choice, text}}")
    for game, fields in data.items():
        if not isinstance(fields, dict) or set(fields) - FIELDS or not all(isinstance(v, str) for v in fields.values()):
            raise ArenaError(
                f"llm agent: template file {p}, key '{game}': expected a mapping with keys "
                f"{sorted(FIELDS)} and string values"
            )
    return data


def template_for(game_name: str, overrides: Mapping[str, Mapping[str, str]], instruction: str | None) -> PromptTemplate:
    """Built-in instruction for the game, then the file's ``default`` and game entries, then the
    ``instruction`` parameter."""
    base = parse_game_name(game_name)[0] if game_name else "default"
    tpl = PromptTemplate(INSTRUCTIONS.get(base, INSTRUCTIONS["default"]))
    for key in ("default", base, game_name):
        if key in overrides:
            tpl = replace(tpl, **overrides[key])
    if instruction:
        tpl = replace(tpl, instruction=instruction)
    return tpl


class PromptBuilder:
    """Builds the prompt for one observation; ``chat`` is the backend's chat renderer."""

    def __init__(
        self,
        overrides: Mapping[str, Mapping[str, str]] | None = None,
        instruction: str | None = None,
        chat: Callable[[list[dict[str, str]]], str | None] | None = None,
        use_chat: bool = True,
        legal_moves: bool = True,
        observation: str = "text",
    ) -> None:
        if observation not in OBSERVATIONS:
            raise ArenaError(f"llm agent: observation must be text or json, not {observation!r}")
        self.overrides = dict(overrides or {})
        self.legal_moves = legal_moves
        self.observation = observation
        self.instruction = instruction
        self.chat = chat if use_chat else None
        self._cache: dict[str, PromptTemplate] = {}
        self.chat_active: bool | None = None

    def template(self, game_name: str) -> PromptTemplate:
        if game_name not in self._cache:
            tpl = template_for(game_name, self.overrides, self.instruction)
            if not self.legal_moves:
                if tpl.choice != CHOICE and "{actions}" in tpl.choice:
                    raise ArenaError(
                        f"llm agent: legal_moves=false, but the choice template for '{game_name}' lists {{actions}}"
                    )
                tpl = replace(tpl, choice=CHOICE_UNLISTED if tpl.choice == CHOICE else tpl.choice)
            self._cache[game_name] = tpl
        return self._cache[game_name]

    def build(self, obs: Observation) -> str:
        tpl = self.template(obs.game_name)
        fields: dict[str, Any] = {
            "instruction": tpl.instruction,
            "observation": self.observation_of(obs),
            "game": obs.game_name,
            "actions": ", ".join(obs.action_labels) if obs.decision == "choice" else "",
            "max_chars": obs.max_text_length,
        }
        try:
            body = (tpl.text if obs.decision == "text" else tpl.choice).format(**fields)
        except (KeyError, IndexError) as exc:
            raise ArenaError(
                f"llm agent: prompt template for '{obs.game_name}' uses unknown field {exc}; "
                "fields: instruction, observation, actions, game, max_chars"
            ) from None
        if self.chat is not None:
            rendered = self.chat([{"role": "system", "content": tpl.instruction}, {"role": "user", "content": body}])
            self.chat_active = rendered is not None
            if rendered is not None:
                return rendered
        self.chat_active = False
        # A plain prompt never ends in spaces or tabs: a byte-level BPE makes them one token
        # that would merge with the label's leading-space token in the whole text ("Action: " +
        # " bet"), so the scored tokens would not be the ones the model reads. The label's own
        # leading space is the separator (see ``continuation``).
        return f"{tpl.instruction}\n\n{body}".rstrip(" \t")

    def observation_of(self, obs: Observation) -> str:
        """The observation as the prompt shows it: the text, or the structured view as JSON."""
        view = obs.struct if self.observation == "json" else None
        if view is None:
            return obs.text
        shown = {k: v for k, v in view.items() if k != "legal"}
        if isinstance(shown.get("log"), list):
            shown["log"] = shown["log"][-JSON_LOG:]
        return json.dumps(shown, ensure_ascii=False, separators=(",", ":"))

    def continuation(self, label: str) -> str:
        """The text scored for an action: after a chat header the label starts the reply; after
        a plain ``Action:`` it follows a space (the prompt's trailing spaces are dropped, so the
        tokens of ``prompt + label`` split exactly at the boundary). The newline ends it, so no
        label's score includes another label that starts with it."""
        return f"{label}\n" if self.chat_active else f" {label}\n"
