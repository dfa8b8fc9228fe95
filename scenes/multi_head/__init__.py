"""multi_head, every head of one layer: a package. numbers.py reads the numbers from the trace, the weights and the
configs, layout.py sizes the grids, beats.py is the scene (each beat's build, rule and play together), words.toml
holds its words.

    manim render -ql scenes/multi_head/beats.py MultiHead
    python render.py multi_head --lang zh --layer 0

The scene class is handed on when first asked for (`from scenes.multi_head import MultiHead`; scenes.package.hand_on).
"""

from scenes.package import hand_on

__all__ = ["MultiHead"]
__getattr__ = hand_on(__name__, "MultiHead")
