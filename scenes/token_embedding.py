"""Tokens and embedding: the prompt becomes tokens with ids, and each id picks its row of W_E (drawn as a column).

    manim render -ql scenes/token_embedding.py TokenEmbedding
    python render.py token_embedding --lang zh --set focus=3

W_E is the model's token table (gpt.W_E, stored one row per word); on screen it is drawn
one COLUMN per word (64 numbers × 123 words), every entry a coloured cell. The looked-up vectors are
the trace's token_embeddings; all values shown are recorded at full precision in self.values.
"""

from __future__ import annotations

import re

import numpy as np
from manim import (DOWN, RIGHT, UP, Arrow, Create, GrowArrow, FadeIn, FadeOut, LaggedStart, Line, SurroundingRectangle, Transform,
                   TransformFromCopy, VGroup, config)

from model.bpe import SPACE_MARK
from scenes import style
from scenes.components import (ColourLegend, ColourScale, CompactTokenRow, Heatmap, Label, NumberText, PromptText,
                               VectorColumn, place_by_body)
from scenes.attention_chapter import FocusScene
from scenes.prompts import language_of, own_language
from scenes.style import MUTED, SHARED
from scenes.words import Words

WORDS = Words.beside(__file__)     # token_embedding.toml: the captions, their spoken forms, the beat titles

S = SHARED | WORDS["captions"]

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | WORDS["beat_titles"]

# --- layout (scene units; the frame is 14.2 × 8, title-safe is ±6.4 × ±3.6) --------
TABLE_LEFT, TABLE_WIDTH = -6.0, 9.2           # W_E, one column per word
TABLE_TOP, TABLE_HEIGHT = 1.6, 2.56           # 64 rows of 0.04
VECTOR_X = 5.0                                # the looked-up column, as numbers
STRIP_WIDTH = 0.3
ID_GAPS = (0.2, 0.12)                         # between two ids under neighbouring chips: two spaces, or a space and a
                                              # little where two would cost a token its place in the row
STEP, PAUSE = style.STEP, style.PAUSE


MAX_TABLE_COLUMNS = 1024   # a vocabulary up to this size is drawn whole, a column per word (ours: 318)
BYTE_TOKEN = re.compile(r"<0x[0-9A-F]{2}>")   # a byte-level BPE's single byte as drawn (model/bpe.py display)


def tokens_caption(gpt, prompt: str, shown: list[str]) -> tuple[str, dict]:
    """Which caption tells how the prompt became tokens, by rule: one token per word for our word-level tokenizer,
    and for a byte-level BPE that kept every pre-tokenized word of this prompt whole; else words in pieces, said
    with a byte when a single byte is among the shown tokens."""
    if own_language(gpt) or len(gpt.tokenizer.encode(prompt)) == len(gpt.tokenizer.pre_tokens(prompt)):
        return "tokens", {}
    byte = next((m.group() for t in shown for m in [BYTE_TOKEN.search(t)] if m), None)
    return ("tokens_bytes", {"byte": byte}) if byte else ("tokens_pieces", {})


class TokenEmbedding(FocusScene):
    name = "token_embedding"
    strings = S
    beat_titles = BEATS

    # --- the beats -------------------------------------------------------------------
    def beat_tokens(self):
        key, fields = self.tokens_rule
        self.say(key, **fields)
        if self.sentence is None:   # too long to write out on one line: straight to the tokens
            self.play(FadeIn(self.row), run_time=2 * STEP)
        else:
            self.play(FadeIn(self.sentence), run_time=STEP)
            self.wait(PAUSE)
            shown = self.sentence[self.row.first_shown:]
            self.play(*[Transform(word, chip) for word, chip in zip(shown, self.row.chips)],
                      FadeOut(self.sentence[:self.row.first_shown]), FadeIn(self.row.ellipsis), run_time=2 * STEP)
            self.remove(self.sentence, *shown)     # the words the chips came from, wherever the transform left them
            self.add(self.row)
        self.wait(PAUSE)

    def beat_ids(self):
        self.say("ids", vocab=self.vocab)
        self.play(LaggedStart(*[FadeIn(n, shift=DOWN * 0.1) for n in self.ids], lag_ratio=0.12),
                  run_time=STEP + 0.1 * len(self.ids))
        self.wait(PAUSE + 1)

    def beat_table(self):
        self.say("table", d=self.d, vocab=self.vocab)
        self.play(FadeIn(self.table), FadeIn(self.table_label), run_time=2 * STEP)
        self.play(FadeIn(VGroup(*self.legend)), run_time=STEP)
        self.wait(PAUSE + 1)

    def beat_lookup(self):
        self.say("lookup", id=self.token_ids[self.focus], word=self.tokens[self.focus])
        self.play(LaggedStart(*[Create(line) for line in self.lookup_lines], lag_ratio=0.15),
                  LaggedStart(*[Create(frame) for frame in self.column_frames], lag_ratio=0.15),
                  run_time=2 * STEP)
        self.play(Create(self.focus_frame), Create(self.focus_chip_frame), run_time=STEP)
        self.play(TransformFromCopy(self.focus_frame, self.vector_frame), run_time=STEP)
        self.play(FadeIn(self.focus_vector, shift=RIGHT * 0.2), run_time=STEP)
        self.wait(PAUSE + 2)

    def beat_vectors(self):
        repeated = self.repeated
        key = self.caption_rule(
            "vectors", "vectors_repeat" if repeated else "vectors",
            "vectors_repeat (its strips framed) if a token stands at two of the shown positions: the first token "
            "met a second time reading from the left, framed at its first two positions; else vectors", repeated=repeated,
            token_ids=[self.token_ids[p] for p in self.shown_positions], positions=self.shown_positions)
        self.say(key, n=len(self.tokens), d=self.d,
                 word=style.token_label(self.tokens[repeated[0]]) if repeated else "")
        for strip, position in zip(self.strips, self.shown_positions):   # each strip starts as its W_E column
            strip.stretch_to_fit_width(self.table.cell_width).move_to(
                [self.table.column_x(self.table_column[self.token_ids[position]]), self.table.box.get_center()[1], 0])
        self.play(FadeOut(VGroup(self.lookup_lines, self.column_frames, self.focus_frame, self.focus_vector,
                                 self.vector_frame,
                                 self.legend, self.table_label)), FadeIn(*self.strips), run_time=STEP)
        self.play(FadeOut(self.table), *[strip.animate.stretch_to_fit_width(STRIP_WIDTH).move_to(target)
                                         for strip, target in zip(self.strips, self.strip_targets)],
                  run_time=2 * STEP)
        self.play(LaggedStart(*[GrowArrow(a) for a in self.arrows], lag_ratio=0.08), FadeIn(self.strips_label),
                  run_time=STEP)
        if repeated:   # the same word's strips, framed where they now stand
            frames = VGroup(*[SurroundingRectangle(self.strips[self.shown_positions.index(p)], color=style.ACCENT,
                                                   buff=0.05, stroke_width=3) for p in repeated])
            self.play(Create(frames), run_time=STEP)
        self.wait(PAUSE + 2)

    # --- building the pieces, from the model's numbers --------------------------------
    def prepare(self):
        gpt, c = self.gpt, self.gpt.config
        trace = self.read_prompt()
        chosen = self.chosen
        self.focus, self.d, self.vocab = chosen["focus"], c.n_embd, c.vocab_size
        W_E = gpt.W_E                                               # (vocab, d): one row per word
        token_vectors = np.asarray(trace["token_embeddings"], dtype=np.float64)

        top = config.frame_height / 2 - style.safe_half_height() + 0.08   # room for the focus frame
        # each chip at least as wide as its id, less the gap between chips: the ids under them stay a space apart
        self.row = self.token_row()
        self.row.move_to([0, 0, 0]).to_edge(UP, buff=top)
        self.check_focus_shown(self.row)
        self.shown_positions = list(range(self.row.first_shown, self.row.first_shown + len(self.row.chips)))
        self.tokens_rule = tokens_caption(gpt, chosen["prompt"], self.tokens[self.row.first_shown:])
        self.sentence = self.sentence_words(self.tokens, spaced=own_language(gpt))
        self.ids = self.id_labels()

        scale = ColourScale.signed_for(W_E)
        # every word's column while the vocabulary is drawable; a larger one (GPT-2's 50,257) shows the prompt's
        # own columns, in id order, and says how many it leaves out
        self.table_ids = list(range(self.vocab)) if self.vocab <= MAX_TABLE_COLUMNS else sorted(set(self.token_ids))
        self.table_column = {t: i for i, t in enumerate(self.table_ids)}
        self.table = Heatmap(W_E[self.table_ids].T, scale, width=TABLE_WIDTH, height=TABLE_HEIGHT)
        self.table.move_to([TABLE_LEFT + TABLE_WIDTH / 2, TABLE_TOP - TABLE_HEIGHT / 2, 0])
        shape_text = (S("matrix_shape", self.lang, d=self.d, vocab=self.vocab) if self.vocab <= MAX_TABLE_COLUMNS
                      else S("matrix_part", self.lang, vocab=f"{self.vocab:,}", shown=len(self.table_ids)))
        self.table_label = Label(shape_text, font_size=style.SMALL, color=MUTED)
        self.table_label.next_to(self.table, DOWN, buff=0.22).align_to(self.table, np.array([-1, 0, 0]))
        self.legend = ColourLegend(scale, S("legend", self.lang), width=2.4)
        self.legend.shift([self.table.get_right()[0] - self.legend.bar.get_right()[0],   # placed by its bar
                           self.table.get_bottom()[1] - 0.55 - self.legend.bar.get_top()[1], 0])

        self.lookup_lines = VGroup(*[
            Line(self.ids[n].get_bottom() + DOWN * 0.06, [self.table.column_x(self.table_column[self.token_ids[p]]), TABLE_TOP, 0],
                 stroke_color=style.token_colour(self.tokens, p), stroke_width=2)
            for n, p in enumerate(self.shown_positions)])
        self.column_frames = VGroup(*[self.table.column_frame(self.table_column[self.token_ids[p]], style.token_colour(self.tokens, p), 1.5)
                                      for p in self.shown_positions])
        self.focus_frame = self.table.column_frame(self.table_column[self.token_ids[self.focus]], style.ACCENT, 3)
        # on the chip's own border (the row may reach the title-safe edge: a frame outside it would not fit)
        self.focus_chip_frame = SurroundingRectangle(self.row.chips[self.focus - self.row.first_shown],
                                                     color=style.ACCENT, buff=0, corner_radius=0.08)
        focus_values = token_vectors[self.focus]
        self.focus_vector = VectorColumn(focus_values, lang=self.lang, shown=7, pitch=0.4,
                                         label=S("column_label", self.lang, d=self.d))
        place_by_body(self.focus_vector, VECTOR_X, TABLE_TOP - TABLE_HEIGHT / 2 + 0.05)
        self.vector_frame = SurroundingRectangle(VGroup(self.focus_vector.entries, self.focus_vector.brackets),
                                                 color=style.ACCENT, buff=0.1, stroke_width=2)

        strip_top = TABLE_TOP + 0.1
        self.strips, self.strip_targets = [], []
        for p in self.shown_positions:
            strip = Heatmap(token_vectors[p][:, None], scale, width=STRIP_WIDTH, height=TABLE_HEIGHT)
            self.strips.append(strip)
            self.strip_targets.append([self.row.centre_x(p), strip_top - TABLE_HEIGHT / 2, 0])
        self.arrows = VGroup(*[Arrow([self.row.centre_x(p), self.ids[n].get_bottom()[1] - 0.04, 0],
                                    [self.row.centre_x(p), strip_top + 0.04, 0], buff=0, stroke_width=2,
                                    max_tip_length_to_length_ratio=0.3, color=MUTED)
                              for n, p in enumerate(self.shown_positions)])
        # the first token met a second time among the shown positions, reading from the left: its first two
        seen = {}
        self.repeated = []
        for p in self.shown_positions:
            if self.token_ids[p] in seen:
                self.repeated = [seen[self.token_ids[p]], p]
                break
            seen.setdefault(self.token_ids[p], p)
        if self.repeated:
            first = self.token_ids[self.repeated[0]]
            self.repeated = [q for q in self.shown_positions if self.token_ids[q] == first][:2]
        self.strips_label = Label(S("vectors_label", self.lang, n=len(self.tokens), d=self.d),
                                  font_size=style.SMALL, color=MUTED)
        self.strips_label.move_to([0, strip_top - TABLE_HEIGHT - 0.35, 0])

        shown_dims = [i for i in self.focus_vector.indices_shown if i is not None]
        self.values.update({
            "prompt": chosen["prompt"], "tokens": self.tokens, "token_ids": self.token_ids,
            "positions_shown": self.shown_positions, "focus": self.focus, "focus_rule": chosen["focus_rule"],
            "tokens_caption": {"key": self.tokens_rule[0], **self.tokens_rule[1],
                               "words": None if own_language(gpt) else len(gpt.tokenizer.pre_tokens(chosen["prompt"]))},
            "vocab_size": self.vocab, "d_model": self.d,
            "W_E": {"source": "wte.weight", "stored_shape": list(W_E.shape), "shown_as": "transposed: one column per word",
                    "shown_shape": [self.d, len(self.table_ids)], "every_entry_as_colour": True,
                    "columns_shown": "all" if len(self.table_ids) == self.vocab else self.table_ids,
                    "colour_limit": scale.limit},
            "focus_vector": {"token": self.tokens[self.focus], "token_id": self.token_ids[self.focus],
                             "dims": shown_dims, "values": [float(focus_values[i]) for i in shown_dims],
                             "labels": [style.signed(focus_values[i], self.focus_vector.decimals) for i in shown_dims]},
            "strips": {"token_ids": [self.token_ids[p] for p in self.shown_positions], "colour_limit": scale.limit},
        })

    def token_row(self) -> CompactTokenRow:
        """The prompt's chips, each at least as wide as its id less the gap between chips, so the ids under them stand
        apart: by the widest of ID_GAPS that shows as many tokens as the narrowest."""
        rows = []
        for gap in ID_GAPS:
            room = [NumberText(str(i), font_size=style.SMALL).width + gap - CompactTokenRow.GAP for i in self.token_ids]
            rows.append(CompactTokenRow(self.tokens, lang=self.lang, indices=False, min_widths=room))
        return next(r for r in rows if r.first_shown == rows[-1].first_shown)

    def sentence_words(self, tokens, spaced: bool = True) -> VGroup | None:
        """The prompt as it reads as text, centred: what the chips are cut from (None if too wide). Our words as their
        language writes them (PromptText: a space apart in English, a punctuation mark against its word, Chinese run
        together); a BPE's tokens abut, a space only where a token begins with one (drawn ␣ on its chip)."""
        if spaced:
            words = PromptText(tokens, language_of(tokens), font_size=style.LABEL)
        else:
            words = PromptText([w.removeprefix(SPACE_MARK) for w in tokens], font_size=style.LABEL,
                               spaces=[i > 0 and w.startswith(SPACE_MARK) for i, w in enumerate(tokens)])
        if words.width > 2 * style.safe_half_width():
            return None
        return words.shift([-words.get_center()[0], 0.9, 0])

    def id_labels(self) -> VGroup:
        """Each shown token's id centred under its chip, all on one baseline (the chips are wide enough for them)."""
        ids = VGroup()
        base = self.row.get_bottom()[1] - 0.36
        for p in self.shown_positions:
            label = NumberText(str(self.token_ids[p]), font_size=style.SMALL, color=style.TEXT, align="left")
            label.place(0, base)
            label.shift([self.row.centre_x(p) - label.get_center()[0], 0, 0])
            ids.add(label)
        return ids
