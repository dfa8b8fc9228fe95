"""mlp_fact, where a fact lives: a package. numbers.py reads the numbers from the model and model.analysis, beats.py is the
scene (each beat's build, rule and play together), words.toml holds its words.

    manim render -ql scenes/mlp_fact/beats.py MlpFact
    python render.py mlp_fact --lang zh

The scene class is handed on when first asked for (`from scenes.mlp_fact import MlpFact`; scenes.package.hand_on).
"""

from scenes.package import hand_on

__all__ = ["MlpFact"]
__getattr__ = hand_on(__name__, "MlpFact")
