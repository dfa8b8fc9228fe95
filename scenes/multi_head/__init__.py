"""multi_head, every head of one layer: a package. numbers.py reads the numbers from the trace, the weights and the
configs, layout.py sizes the grids, beats.py is the scene (each beat's build, rule and play together), words.toml
holds its words.

    manim render -ql scenes/multi_head/beats.py MultiHead
    python render.py multi_head --lang zh --layer 0

The scene class is loaded on first use (`from scenes.multi_head import MultiHead`), not here: `manim render` loads
beats.py by its path, and beats.py imports this package first; an import of beats.py from here would find it half
loaded.
"""

__all__ = ["MultiHead"]


def __getattr__(name: str):
    if name == "MultiHead":
        from scenes.multi_head.beats import MultiHead
        return MultiHead
    raise AttributeError(f"module 'scenes.multi_head' has no attribute {name!r}")
