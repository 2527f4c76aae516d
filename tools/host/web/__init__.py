"""The browser client served by ``arena host``: static files, no build step."""
