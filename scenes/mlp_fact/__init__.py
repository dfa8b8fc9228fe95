"""mlp_fact, where a fact lives: a package. numbers.py reads the numbers from the model and model.analysis, beats.py is the
scene (each beat's build, rule and play together), words.toml holds its words.

    manim render -ql scenes/mlp_fact/beats.py MlpFact
    python render.py mlp_fact --lang zh

The scene class is loaded on first use (`from scenes.mlp_fact import MlpFact`), not here: `manim render` loads
beats.py by its path, and beats.py imports this package first; an import of beats.py from here would find it half
loaded.
"""

__all__ = ["MlpFact"]


def __getattr__(name: str):
    if name == "MlpFact":
        from scenes.mlp_fact.beats import MlpFact
        return MlpFact
    raise AttributeError(f"module 'scenes.mlp_fact' has no attribute {name!r}")
