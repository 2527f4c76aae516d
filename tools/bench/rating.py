"""``arena bench rating`` (being written)."""
