"""A small GPT, trained by this project, whose every intermediate can be read.

    from model import NumpyGPT, probabilities
    gpt = NumpyGPT.load()                 # the shipped weights in model/weights/
    trace = gpt.trace("michael jordan plays")
    probabilities(trace["logits"][-1], temperature=0.5)
"""

from .config import GPT2_SMALL, GPT3_175B, GPTConfig
from .errors import ModelError
from .numpy_gpt import HeadWeights, MLPWeights, NumpyGPT, check_temperature, probabilities, softmax_steps, to_jsonable
from .weights import DEFAULT_DIR, weights_sha256

__all__ = ["GPTConfig", "GPT2_SMALL", "GPT3_175B", "ModelError", "NumpyGPT", "HeadWeights", "MLPWeights", "probabilities", "check_temperature", "softmax_steps",
           "to_jsonable", "DEFAULT_DIR", "weights_sha256"]
