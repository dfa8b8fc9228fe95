"""values_update, what one head carries to the token in focus: a package. numbers.py reads the numbers from the trace
and model.analysis, layout.py holds the measures and the pieces several beats draw, beats.py is the scene (each
beat's build, rule and play together), words.toml holds its words.

    manim render -ql scenes/values_update/beats.py ValuesUpdate
    python render.py values_update --lang zh --set focus=3

The scene class is loaded on first use (`from scenes.values_update import ValuesUpdate`), not here: `manim render`
loads beats.py by its path, and beats.py imports this package first; an import of beats.py from here would find it
half loaded.
"""

__all__ = ["ValuesUpdate"]


def __getattr__(name: str):
    if name == "ValuesUpdate":
        from scenes.values_update.beats import ValuesUpdate
        return ValuesUpdate
    raise AttributeError(f"module 'scenes.values_update' has no attribute {name!r}")
