"""Terminal I/O for people playing: show an observation, read a move, re-prompt on bad input."""

from __future__ import annotations

import sys
from typing import Callable, TextIO

from arena.agent import Observation
from arena.game import Action


class TerminalIO:
    """Reads moves from ``inp`` and writes prompts to ``out`` (stdin/stdout by default)."""

    def __init__(self, inp: TextIO | None = None, out: TextIO | None = None) -> None:
        self.inp = inp or sys.stdin
        self.out = out or sys.stdout

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def ask(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        line = self.inp.readline()
        if line == "":
            raise EOFError("input closed")
        return line.rstrip("\n")

    def choose(self, obs: Observation, header: str = "") -> Action:
        """Show ``obs`` and ask until the person gives a legal move (label, prefix or number)."""
        if header:
            self.say(header)
        self.say(obs.text)
        if obs.decision == "text":
            while True:
                said = self.ask(f"Say something (at most {obs.max_text_length} characters): ")
                if len(said) <= obs.max_text_length:
                    return said
                self.say(f"Too long ({len(said)} characters); the limit is {obs.max_text_length}.")
        menu = "  ".join(f"[{i + 1}] {label}" for i, label in enumerate(obs.action_labels))
        while True:
            self.say(f"Moves: {menu}")
            typed = self.ask("Your move: ")
            action = obs.parse_action(typed)
            if action is not None:
                return action
            self.say(f"Invalid move {typed.strip()!r}. Type a move's name or its number.")


def confirm(io: TerminalIO, prompt: str, default: bool = False) -> bool:
    try:
        answer = io.ask(prompt).strip().lower()
    except EOFError:
        return False
    return answer in ("y", "yes") if answer else default


Chooser = Callable[[Observation], Action]
