"""Questions asked of the model, answered in NumPy from its traces and its own weights.

Scenes call these instead of doing model maths themselves.

heads        which head looks back, what a head writes, what it promotes, LayerNorm step by step, word order
patching     activation patching, ROME-style causal tracing, mean-ablation (NumpyGPT.trace's `patch` hook)
attribution  direct logit attribution per component, head and MLP neuron; a neuron's top-activating contexts
directions   attribute directions in the stream at the last name; semantic directions in the embedding
circuits     where a person's sport is looked up (causal tracing over the language's templates)
lens         the logit lens: the prediction read after every block
context      why context matters: the same last word after different words, the largest change in the prediction;
             the next word predicted at every position in one pass
factpath     how one prompt recalls a fact: the path (ablation, logit attribution, the attention that carries it),
             held-out sport directions with a shuffled null, an AND neuron by rule and its input split by name
             (import model.analysis.factpath)
head_jobs    a head's job: its top key over 200 prompts of the chapter's form, by one rule; the swap test that alone
             may call a head idle (import model.analysis.head_jobs)
query_key    why queries and keys: one query's keys ranked by x̂·x̂ against q·k; dot products of random vectors
             growing like √d (import model.analysis.query_key)
factmap      the fact's map: the sites whose mean-ablation drops P(answer) by 25 points or more, and what an
             attention site reads (import model.analysis.factmap)
superposition  the embeddings' angles vs random directions, a polysemantic neuron by rule, a fact's neuron shares
               (import model.analysis.superposition)
"""

from .attribution import (direct_logit_attribution, distinct_contexts, logit_direction, neuron_direction_attribution, neuron_top_contexts,
                          neurons_for_share, push_share, top_k_shares, top_neurons)
from .circuits import person_causal_trace
from .context import largest_context_effect, next_word_predictions, total_variation
from .directions import (contrast_direction, neuron_attribute_profile, projections, semantic_directions,
                         stream_attribute_directions)
from .heads import (ablation_effect, best_lookback_head, head_contribution, head_delta_sizes, head_update,
                    head_write_sizes, heads_ablation_effect, heads_delta, later_weights, layer_norm_steps,
                    lookback_blocked, lookback_scores, no_position_attn_change, order_prediction, order_sensitivity, promoted_words,
                    query_key_geometry)
from .lens import attention_lens, lens_points, lens_read, logit_lens
from .mlp import ACTIVE, gelu_curve, mlp_steps, neuron_readout, vector_readout
from .patching import (causal_trace, mean_ablation, mean_states, noised_ids_patch, patch_effect, sample_states,
                       state)

__all__ = ["ablation_effect", "best_lookback_head", "head_contribution", "head_delta_sizes", "head_update",
           "head_write_sizes", "heads_ablation_effect", "heads_delta", "later_weights", "layer_norm_steps",
           "lookback_blocked", "query_key_geometry",
           "lookback_scores", "no_position_attn_change", "order_prediction", "order_sensitivity", "promoted_words", "causal_trace", "mean_ablation", "mean_states",
           "noised_ids_patch", "patch_effect", "sample_states", "state", "direct_logit_attribution",
           "logit_direction", "neuron_top_contexts", "distinct_contexts", "top_neurons", "semantic_directions",
           "stream_attribute_directions", "largest_context_effect", "next_word_predictions", "total_variation", "lens_points", "logit_lens", "attention_lens", "lens_read",
           "ACTIVE", "gelu_curve", "mlp_steps", "neuron_readout", "vector_readout", "neuron_direction_attribution",
           "top_k_shares", "push_share", "neurons_for_share", "person_causal_trace", "contrast_direction",
           "neuron_attribute_profile", "projections"]
