"""Independent checks of the caption rules of near_orthogonal, toy_superposition and superposition_in_gpt (see tests/test_caption_rules.py): each
decides a rule's key again from the manifest's values (or the model), by code that does not call the scene's."""

from __future__ import annotations

import numpy as np
import pytest

# scene -> rule name -> (every key the rule may choose, check(values, rule, gpt) -> the key)
SUPERPOSITION_CHECKS: dict = {}
