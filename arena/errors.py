"""Errors a user can act on. The CLI prints them as one line and exits with status 2."""


class ArenaError(Exception):
    """Bad input (config, plugin name, game name, file): one clear message, no traceback."""


class ConfigError(ArenaError):
    """A config file or override that does not match its schema."""


class PluginError(ArenaError):
    """An unknown, conflicting or broken plugin."""
