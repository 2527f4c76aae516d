"""The tables commands print (rich, imported only when a table is printed: ``arena --help`` and
``--json`` runs never pay for it)."""

from __future__ import annotations

from typing import Any, Sequence

from arena.cli_api import console


def print_table(
    title: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    styles: Sequence[Any] = (),
    figures: bool = False,
) -> None:
    """A titled table on stdout; long cells fold. ``styles``: one rich style (or None) per row;
    ``figures``: every column after the first holds numbers, aligned right."""
    from rich.table import Table

    table = Table(title=title)
    for i, col in enumerate(columns):
        table.add_column(col, justify="right" if figures and i else "left", overflow="fold")
    for i, row in enumerate(rows):
        table.add_row(*row, style=styles[i] if styles else None)
    console().print(table)
