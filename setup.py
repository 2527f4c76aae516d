"""Map the repo's top-level folders under the ``arena`` namespace.

``games/``, ``plugins/`` and ``tools/`` stay at the top of the repo (product layout) but install
as ``arena.games``, ``arena.plugins`` and ``arena.tools`` so nothing generic lands in
site-packages. Sub-packages are discovered, so a new plugin package needs no edit here.
"""

from setuptools import find_packages, setup

MAPPED = {"arena": "arena", "arena.games": "games", "arena.plugins": "plugins", "arena.tools": "tools"}

packages = []
for name, folder in MAPPED.items():
    packages += [name] + [f"{name}.{sub}" for sub in find_packages(folder)]

setup(packages=packages, package_dir=MAPPED)
