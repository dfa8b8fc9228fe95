"""values_update, what one head carries to the token in focus: a package. numbers.py reads the numbers from the trace
and model.analysis, layout.py holds the measures and the pieces several beats draw, beats.py is the scene (each
beat's build, rule and play together), words.toml holds its words.

    manim render -ql scenes/values_update/beats.py ValuesUpdate
    python render.py values_update --lang zh --set focus=3

The scene class is handed on when first asked for (`from scenes.values_update import ValuesUpdate`; scenes.package.hand_on).
"""

from scenes.package import hand_on

__all__ = ["ValuesUpdate"]
__getattr__ = hand_on(__name__, "ValuesUpdate")
