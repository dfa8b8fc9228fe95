"""Independent checks of the caption rules of mlp_fact and parameters (see tests/test_caption_rules.py): each
decides a rule's key again from the manifest's values (or the model), by code that does not call the scene's."""

from __future__ import annotations

import numpy as np
import pytest

# scene -> rule name -> (every key the rule may choose, check(values, rule, gpt) -> the key)
MLP_CHAPTER_CHECKS: dict = {}
