"""CLI sub-commands provided as plugins (registered through the ``arena`` entry-point group)."""
