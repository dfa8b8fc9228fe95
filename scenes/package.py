"""What a scene package's __init__.py needs (scenes/<name>/: numbers.py, beats.py, words.toml; docs/adding-a-scene.md)."""

import importlib


def hand_on(package: str, cls: str):
    """The module `__getattr__` of a scene package: it hands on `cls`, the scene class defined in the package's
    beats.py, when it is first asked for (`from scenes.mlp_fact import MlpFact`), not at import: `manim render` loads
    beats.py by its path, and beats.py imports its package first; an import of beats.py from the package's
    __init__.py would find it half loaded."""

    def __getattr__(name: str):
        if name == cls:
            return getattr(importlib.import_module(f"{package}.beats"), cls)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
