"""Every scene and its parameters, declared once.

A scene lives in scenes/<name>.py as the class named here. Its parameters are
declared below and nowhere else: render.py, `render.py list`, lecture.toml, the
scene (through LectureScene.params) and the tests all read this file.
"""

from __future__ import annotations

from .params import (AUTO, Choice, Int, Param, ParamError, SceneSpec, Temperature, Temperatures, Text, bounded_by,
                     check_prompt)

LANG = Param("lang", Choice("en", "zh"), "en", "language of all on-screen text and of the default prompt (for the same "
             "prompt, the same layout in both)")


def sweep_stops(temperatures) -> list[float]:
    """Where the temperature sweep pauses. The scene introduces T at 1, so a leading 1 is that moment."""
    stops = list(temperatures)
    return stops[1:] if stops and stops[0] == 1 else stops


def needs_training_language(scene: str, what: str, check=None):
    """A scene check: the scene draws our training language's world (`what`), which a checkpoint of one's own (a
    byte-level BPE tokenizer) does not have; refused in one line naming what to do, then `check` if given."""
    def run(values, model):
        if getattr(model.tokenizer, "kind", "word") == "bpe":
            raise ParamError(f"{scene} needs our model's training language ({what}), which this checkpoint does not "
                             f"have: render it with the lecture's model (leave out --model / the recipe's model)")
        if check is not None:
            check(values, model)
    return run


def _check_top_k(value, model):
    if value >= model.config.vocab_size:
        raise ParamError(f"must be smaller than the vocabulary ({model.config.vocab_size} words), got {value}")


def _generation_fits(values, model):
    """The prompt and the words generated after it must fit the model's context."""
    if values["prompt"] == AUTO:
        return
    n, room = len(model.encode(values["prompt"])), model.config.n_positions
    if n + values["steps"] - 1 > room:
        raise ParamError(f"{n} prompt tokens and {values['steps']} steps do not fit the model's context of {room}")


NEXT_TOKEN = SceneSpec(
    name="next_token",
    cls="NextToken",
    summary="The model's one job: a distribution over the next word; sampling from it, again and again, writes; "
            "the same last word after different words predicts differently.",
    params=(
        Param("prompt", Text(), AUTO,
              "the text the model continues (default: the softmax scene's rule, the most uncertain skewed choice "
              "in the scene's language; see scenes/prompts.py)", check_prompt),
        Param("temperature", Temperature(0.05, 100), 1.0, "the sampling temperature; 0 takes the most likely word",
              None),
        Param("seed", Int(0, 2**31 - 1), 0, "the seed of the sampler (numpy.random.default_rng): the same seed "
              "gives the same words", None),
        Param("steps", Int(1, 8), 4, "words generated, one at a time", None),
        Param("top_k", Int(1, 6), 5, "candidates shown as bars; the rest are summed as 'other'", _check_top_k),
        LANG,
    ),
    check=_generation_fits,
    sections=lambda p: ["title", "task", "distribution", "sample", *(["loop"] if p["steps"] > 1 else []),
                        "context", "summary"],
)


SOFTMAX_TEMPERATURE = SceneSpec(
    name="softmax_temperature",
    cls="SoftmaxTemperature",
    summary="From the model's logits to probabilities: softmax step by step, then temperature, and the text it writes at a low, a medium and a high temperature.",
    params=(
        Param("prompt", Text(), AUTO,
              "the text the model continues (default: the most uncertain skewed choice in the scene's language, "
              "see docs)",
              check_prompt),
        Param("temperatures", Temperatures(0.05, 100, 8), (1.0, 2.0, 5.0, 0.5, 0.1, 0.0),
              "the temperature sweep, in order; 0 is exactly argmax", None),
        Param("top_k", Int(1, 6), 5, "candidates shown as bars; the rest are summed as 'other'", _check_top_k),
        Param("seed", Int(0, 2**31 - 1), 0, "the seed of the sampler for the text it writes at T = 0.1, 1 and 3 "
              "(numpy.random.default_rng; the same seed for all three)", None),
        LANG,
    ),
    sections=lambda p: ["title", "prompt", "logits", "exp", "sum", "divide", "temperature",
                        *(["sweep"] if sweep_stops(p["temperatures"]) else []), "write", "summary"],
)

# --- attention chapter: tokens & embedding, positional encoding, add & norm (helper chapter-A) ---
class IndexOrAuto(Int):
    """An index (a token position, a layer), or "auto": a default computed by a documented rule at render time."""

    def parse(self, text):
        return AUTO if text.strip() == AUTO else super().parse(text)

    def coerce(self, value):
        return AUTO if value == AUTO else super().coerce(value)

    def show(self, value):
        return str(value)


@bounded_by("n_positions")
def _check_focus(value, model):
    """Within the context; that it is within the prompt is checked when the prompt is known (the scene)."""
    if not 0 <= value < model.config.n_positions:
        raise ParamError(f"the model's context has {model.config.n_positions} positions (0..{model.config.n_positions - 1}), "
                         f"got {value}")


def _focus_in_prompt(values, model):
    """The focus token must be one of the prompt's tokens (the default prompt's in the scene's language, if none
    is given)."""
    if values["focus"] == AUTO:
        return
    from scenes.prompts import lookback_prompt
    prompt = lookback_prompt(values.get("lang", "en"), model)["prompt"] if values["prompt"] == AUTO else values["prompt"]
    T = len(model.encode(prompt))
    if not 0 <= values["focus"] < T:
        raise ParamError(f"focus: the prompt has {T} tokens (positions 0..{T - 1}), got {values['focus']}")


@bounded_by("n_layer")
def _check_layer(value, model):
    if not 0 <= value < model.config.n_layer:
        raise ParamError(f"the model has {model.config.n_layer} layers (0..{model.config.n_layer - 1}), got {value}")


# The most positions a scene can index and draw (the position table, a focus token): a checkpoint with a longer
# context is refused when it is loaded for a render (pipeline/recipe.load_model), not cut short silently.
MAX_POSITIONS = 1024

LOOKBACK_PROMPT = Param("prompt", Text(), AUTO, "the prompt (default: the first story pair in the scene's language, "
                        "cut before its recall word; see scenes/prompts.py lookback_prompt)", check_prompt)
FOCUS = Param("focus", IndexOrAuto(0, MAX_POSITIONS - 1), AUTO, "position of the token in focus (default: the default prompt's "
              "recall token \"was\" (\u662f), else the last token)", _check_focus)

TOKEN_EMBEDDING = SceneSpec(
    name="token_embedding",
    cls="TokenEmbedding",
    summary="The prompt becomes tokens with ids; each id picks its column of W_E: a row of embedding vectors.",
    params=(LOOKBACK_PROMPT, FOCUS, LANG),
    check=_focus_in_prompt,
    sections=lambda p: ["title", "tokens", "ids", "table", "lookup", "vectors"],
)

POSITIONAL_ENCODING = SceneSpec(
    name="positional_encoding",
    cls="PositionalEncoding",
    summary="Does word order matter (the prompt reversed, the model's next word), the sin/cos position table, "
            "E = token embedding + position vector, and what the model does without the table.",
    params=(LOOKBACK_PROMPT, FOCUS, LANG),
    check=_focus_in_prompt,
    sections=lambda p: ["title", "question", "table", "prompt", "add", "all", "lab", "answer"],
)

ARCHITECTURE = SceneSpec(
    name="architecture",
    cls="Architecture",
    summary="The whole pipeline with our shapes and GPT-3's (a deep model's middle layers elided by rule), the "
            "residual stream, the unembedding (W_E turned) giving one logit per word, and a logit lens: one token's "
            "prediction read after every block.",
    params=(LOOKBACK_PROMPT, FOCUS, LANG),
    check=_focus_in_prompt,
    sections=lambda p: ["title", "pipeline", "stream", "gpt3", "unembed", "lens"],
)

EMBEDDING_SPACE = SceneSpec(
    name="embedding_space",
    cls="EmbeddingSpace",
    summary="The creatures' embeddings on two measured directions (water − land, big − small), one direction held "
            "out against shuffled labels, a parallelogram with its cosine, and a word's nearest neighbours.",
    params=(Param("prompt", Text(), AUTO, "its first creature is the word whose neighbours are shown, and its "
                  "language the words' (default: the attention chapter's prompt, see scenes/prompts.py "
                  "lookback_prompt)", check_prompt), LANG),
    check=needs_training_language("embedding_space", "its creatures and their habitats and sizes"),
    sections=lambda p: ["title", "words", "direction", "parallelogram", "neighbours", "summary"],
)

SUMMARY = SceneSpec(
    name="summary",
    cls="Summary",
    summary="The close: attention, parallel processing, where facts live and superposition, each answered with a "
            "number from our model (or GPT-3's config).",
    params=(LOOKBACK_PROMPT, LANG),
    sections=lambda p: ["title", "context", "parallel", "facts", "scaling"],
)

ADD_NORM = SceneSpec(
    name="add_norm",
    cls="AddNorm",
    summary="The residual add after attention, then LayerNorm with the real mean and variance before and after.",
    params=(LOOKBACK_PROMPT,
            Param("layer", IndexOrAuto(0, 63), AUTO, "the layer whose attention add and LayerNorm are shown "
                  "(default: the layer of the attention chapter's head, by scenes/prompts.py lookback_head)",
                  _check_layer),
            FOCUS, LANG),
    check=_focus_in_prompt,
    sections=lambda p: ["title", "residual", "statistics", "normalise", "scale", "placement", "why", "lab"],
)

# --- attention chapter: queries & keys, softmax & causal mask (helper chapter-B) ---
from .params import model_index  # noqa: E402

LOOKBACK_LAYER = Param("layer", IndexOrAuto(0, 63), AUTO, "the layer of the head shown (default: chosen with the "
                       "head, see head)", _check_layer)
LOOKBACK_HEAD = Param("head", IndexOrAuto(0, 63), AUTO, "the head shown (default: for the default prompt, the head "
                      "whose output most carries the adjective, else the one whose focus looks back hardest, by "
                      "scenes/prompts.py lookback_head; the manifest records its score)",
                      model_index("n_head", "heads"))

QUERIES_KEYS = SceneSpec(
    name="queries_keys",
    cls="QueriesKeys",
    summary="Why a word must look back (the model's prediction with and without looking back), then how: W_q and W_k "
            "turn each normalised embedding into a query and a key; the grid of K·Q scores, scaled by 1/√d_k.",
    params=(LOOKBACK_PROMPT, LOOKBACK_LAYER, LOOKBACK_HEAD, FOCUS, LANG),
    check=_focus_in_prompt,
    sections=lambda p: ["title", "question", "idea", "input", "weights", "query", "all_queries", "key", "scores",
                        "scale", "lab", "summary", "direct"],
)

CAUSAL_MASK = SceneSpec(
    name="causal_mask",
    cls="CausalMask",
    summary="One pass predicts the next word at every position, so no word may see its answer: the causal mask puts "
            "−∞ on future keys; softmax normalises each query's line to weights that sum to 1.",
    params=(LOOKBACK_PROMPT, LOOKBACK_LAYER, LOOKBACK_HEAD, FOCUS, LANG),
    check=_focus_in_prompt,
    sections=lambda p: ["title", "question", "scaled", "mask", "softmax", "all_queries", "zeros", "growth",
                        "lab", "summary"],
)

# --- attention chapter: values & ΔE, multi-head attention (helper chapter-C) ---
VALUES_UPDATE = SceneSpec(
    name="values_update",
    cls="ValuesUpdate",
    summary="The question (the logit lens at the focus before and after the head's layer's attention: what did it "
            "write?); V = LN(E) W_v; the focus token's weighted sum of values; the head's ΔE through W_O; E′ = E + ΔE; "
            "why a value is separate from a key (the answer word swapped in this head's key only, then in its value "
            "only); the answer: the chain, this head's ΔE alone and the layer's attention read by the lens.",
    params=(LOOKBACK_PROMPT, LOOKBACK_LAYER, LOOKBACK_HEAD, FOCUS, LANG),
    check=_focus_in_prompt,
    sections=lambda p: ["title", "question", "values", "all_values", "weights", "weighted", "sum", "delta", "update",
                        "meaning", "ablation", "summary"],
)

MULTI_HEAD = SceneSpec(
    name="multi_head",
    cls="MultiHead",
    summary="Every head of one layer side by side: which are idle (the swap test), which fetches the colour and which "
            "the texture (measured over 200 prompts), their outputs concatenated and projected by W_O.",
    params=(LOOKBACK_PROMPT,
            Param("layer", IndexOrAuto(0, 63), AUTO, "the layer whose heads are shown (default: the layer of the "
                  "attention chapter's head, by scenes/prompts.py lookback_head)", _check_layer),
            FOCUS, LANG),
    check=_focus_in_prompt,
    sections=lambda p: ["title", "question", "heads", "focus", "concat", "project", "jobs", "lab", "summary"],
)

# --- the MLP chapter (issue 10) ---
def _mlp_focus_in_prompt(values, model):
    """The focus token must be one of the prompt's tokens (the default fact prompt's in the scene's language)."""
    if values["focus"] == AUTO:
        return
    from scenes.prompts import fact_prompt
    prompt = fact_prompt(values.get("lang", "en"), model)["prompt"] if values["prompt"] == AUTO else values["prompt"]
    T = len(model.encode(prompt))
    if not 0 <= values["focus"] < T:
        raise ParamError(f"focus: the prompt has {T} tokens (positions 0..{T - 1}), got {values['focus']}")


MLP_STEPS = SceneSpec(
    name="mlp_steps",
    cls="MlpSteps",
    summary="What the MLP does to one token: W_in's questions, GELU, W_out's directions summed, the residual add, "
            "and every token at once.",
    params=(Param("prompt", Text(), AUTO, "the prompt (default: the language's first person sentence, cut after "
                  "the last name; see scenes/prompts.py fact_prompt)", check_prompt),
            Param("layer", IndexOrAuto(0, 63), AUTO, "the layer whose MLP is shown (default: the layer whose MLP "
                  "output at the focus token has the largest norm)", _check_layer),
            Param("focus", IndexOrAuto(0, MAX_POSITIONS - 1), AUTO, "position of the token in focus (default: the last token)",
                  _check_focus),
            LANG),
    check=_mlp_focus_in_prompt,
    sections=lambda p: ["title", "up", "contexts", "gelu", "down", "readout", "residual", "all_tokens", "lab",
                        "summary"],
)

def _fact_prompt_names_a_person(values, model):
    """A given prompt must name a person of the training language (the scene traces their sport)."""
    if values["prompt"] == AUTO:
        return
    from scenes.prompts import person_in
    tokens = list(model.tokenizer.decode(model.encode(values["prompt"])))
    if person_in(tokens) is None:
        raise ParamError("prompt: it names no person of the training language (a first name, then a last name)")


MLP_FACT = SceneSpec(
    name="mlp_fact",
    cls="MlpFact",
    summary="Where a person's sport lives in the model (Michael Jordan's, if the model knows it): causal tracing, the "
            "lookup MLP on held-out sport directions, the attention that carries the sport to the last word, how "
            "spread its neurons are, the AND of the two names and the search for an AND neuron, and the map of what mean-ablation finds needed.",
    params=(Param("prompt", Text(), AUTO, "the prompt; it must name a person (default: Michael Jordan's sport asked "
                  "as the language's seeded stream or else facts_known's template asks it, if the model's top-1 answer "
                  "is basketball; else the language's first sentence asking a person's sport, cut before the sport; "
                  "see scenes/prompts.py sport_fact_prompt)",
                  check_prompt),
            LANG),
    check=needs_training_language("mlp_fact", "its people and their sports", _fact_prompt_names_a_person),
    sections=lambda p: ["title", "where", "lookup", "readout", "carry", "spread", "and_gate",
                            "and_neuron", "summary"],
)

PARAMETERS = SceneSpec(
    name="parameters",
    cls="Parameters",
    summary="Where GPT-3's 175 B parameters are, counted from its shape (the MLPs about two thirds), beside our "
            "model's split from its own config.",
    params=(LANG,),
    sections=lambda p: ["title", "count", "split", "ours", "summary"],
)

# --- the superposition chapter (issue 11): numbers from the lab's recorded runs (model/superposition_record.py) ---
NEAR_ORTHOGONAL = SceneSpec(
    name="near_orthogonal",
    cls="NearOrthogonal",
    summary="d dimensions hold d perpendicular directions, and one more drawn at its best; the histogram of every "
            "pairwise angle of 10,000 vectors in 100-d over a real optimisation; how the room within 89-91 degrees "
            "grows (too slowly: the strict band is too strict) and within 85-95 degrees (exponentially); the "
            "Johnson-Lindenstrauss lemma beside a random projection of 10,000 perpendicular directions, and its "
            "promise as an angle.",
    params=(LANG,),
    sections=lambda p: ["title", "exact", "histogram", "pair", "where", "lemma"],
)

TOY_SUPERPOSITION = SceneSpec(
    name="toy_superposition",
    cls="ToySuperposition",
    summary="Superposition defined on the toy model of Elhage et al. (2022), five features in two dimensions: W's "
            "five columns in the plane over training at four sparsities, each feature's D_i and the loss, and the "
            "geometry (two orthogonal features to a pentagon) by rule; then why sparsity allows it: two features on together "
            "in the sparsest run's own data, and how rare that is.",
    params=(LANG,),
    sections=lambda p: ["title", "define", "model", "train", "dims", "geometry", "collide", "rare"],
)

def _ends_with_a_person(values, model):
    """The prompt must end with a person's first and last name (in either language)."""
    if values["prompt"] == AUTO:
        return
    from model.language import LANGUAGES, Language
    words = [model.tokenizer.words[i] for i in model.encode(values["prompt"])]
    language = Language()
    if len(words) < 2 or not any(tuple(words[-2:]) in language.grammar(lang).person for lang in LANGUAGES):
        raise ParamError(f"prompt: it must end with a person's first and last name, got {' '.join(words[-2:])!r}")


SUPERPOSITION_IN_GPT = SceneSpec(
    name="superposition_in_gpt",
    cls="SuperpositionInGpt",
    summary="Our model's word embeddings against random directions and the most perpendicular packing (the crowding "
            "318 words in 64 dimensions force); a polysemantic MLP neuron found by rule; the running example's fact "
            "spread over many neurons (direct logit attribution); why superposition matters: how models scale, and "
            "why no single neuron is the unit to read.",
    params=(Param("prompt", Text(), AUTO, "ends with the person whose sport is read per neuron (default: the MLP "
                  "chapter's running example, its person; see scenes/prompts.py sport_fact_prompt)",
                  check_prompt),
            LANG),
    check=needs_training_language("superposition_in_gpt", "its people and their sports", _ends_with_a_person),
    sections=lambda p: ["title", "embeddings", "neuron", "spread", "summary"],
)

SCENES: dict[str, SceneSpec] = {s.name: s for s in (    # in lecture order
    NEXT_TOKEN, ARCHITECTURE, SOFTMAX_TEMPERATURE, TOKEN_EMBEDDING, EMBEDDING_SPACE, POSITIONAL_ENCODING,
    QUERIES_KEYS, CAUSAL_MASK, VALUES_UPDATE, MULTI_HEAD, ADD_NORM, MLP_STEPS, MLP_FACT, TOY_SUPERPOSITION,
    NEAR_ORTHOGONAL, SUPERPOSITION_IN_GPT, PARAMETERS, SUMMARY)}


# The scenes a checkpoint of one's own (GPT-2's kind, any size up to MAX_POSITIONS) can draw: they need no training
# language (its prompts follow scenes/prompts.py checkpoint_prompt). The others refuse it (needs_training_language)
# or draw recorded runs (near_orthogonal, toy_superposition).
CHECKPOINT_SCENES = ("next_token", "architecture", "softmax_temperature", "token_embedding", "positional_encoding",
                     "queries_keys", "causal_mask", "values_update", "multi_head", "add_norm", "mlp_steps",
                     "parameters", "summary")


def find(name: str) -> SceneSpec:
    """A scene by its name or its class name."""
    for spec in SCENES.values():
        if name in (spec.name, spec.cls):
            return spec
    raise ParamError(f"unknown scene {name!r}; known scenes: {', '.join(SCENES)}")
