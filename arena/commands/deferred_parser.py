"""A sub-command parser that asks for its arguments only when it is used.

``arena --help`` and ``arena bench --help`` list every command and benchmark by the name and
help text the plugin index remembers; importing each plugin to learn its arguments would cost
more than half a second. A :class:`DeferredParser` calls its ``add_arguments`` the first time it
parses (argparse hands a sub-command's words to its parser), so only the chosen command's
plugin is imported.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable


class DeferredParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` completed by ``add_arguments(self)`` on first use."""

    def __init__(
        self, *args: Any, add_arguments: Callable[[argparse.ArgumentParser], None] | None = None, **kw: Any
    ) -> None:
        super().__init__(*args, **kw)
        self._add_arguments = add_arguments

    def complete(self) -> DeferredParser:
        """Add the deferred arguments now (once); returns the parser."""
        if self._add_arguments is not None:
            add, self._add_arguments = self._add_arguments, None
            add(self)
        return self

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:  # argparse's overloads, unchanged
        self.complete()
        return super().parse_known_args(args, namespace)
