"""The lecture's pace (docs/teaching.md §9), checked on a scene's "pace" record (the manifest's, scenes/pace.py)
from its raw spans, by code that does not call scenes/pace.py: each beat's share of speech from its lines, each
build's held silence from the builds and the lines, the title card's length from its start and end.

- share: in every content beat (not "title"), the lines' seconds over the beat's seconds, at most SHARE;
- held silence: after the last build before a line or before the beat's end, the silence until that line is said
  (its start) or the beat ends, counted from the later of the build's end and the end of every line said before it,
  at least HELD seconds;
- title card: the "title" beat, at most TITLE seconds.
"""

from __future__ import annotations

SHARE, HELD, TITLE = 0.8, 1.5, 6.0
TOLERANCE = 1e-3          # the record's rounding (milliseconds)


def shortest_holds(beat: dict) -> list[float]:
    """The silence held after each picture built in `beat` (a build followed by another build before the next line
    holds nothing of its own: the later one is held)."""
    lines, builds = beat["lines"], beat["builds"]
    holds = []
    for i, (_, built) in enumerate(builds):
        after = [start for start, _ in lines if start >= built - TOLERANCE]
        until = min(after[0] if after else beat["end"], beat["end"])
        if i + 1 < len(builds) and builds[i + 1][0] < until - TOLERANCE:
            continue                                  # built on before the next line: that build is held instead
        quiet = max([built] + [end for start, end in lines if start < built - TOLERANCE])
        holds.append(until - quiet)
    return holds


def pace_problems(record: list[dict]) -> list[str]:
    """Every breach of the pace in a scene's record, in words (empty: none)."""
    problems = []
    for beat in record:
        seconds = beat["end"] - beat["start"]
        speech = sum(end - start for start, end in beat["lines"])
        name = beat["section"]
        if abs(seconds - beat["seconds"]) > 2 * TOLERANCE or abs(speech - beat["speech"]) > 2 * TOLERANCE * max(
                1, len(beat["lines"])):     # each figure rounded on its own: a millisecond each way
            problems.append(f"{name}: its seconds or speech do not add up from its spans")
        if name == "title":
            if seconds > TITLE + TOLERANCE:
                problems.append(f"title card: {seconds:.2f} s, over {TITLE:g} s")
            continue
        if speech > SHARE * seconds + TOLERANCE:
            problems.append(f"{name}: speech {speech:.2f} s of {seconds:.2f} s ({speech / seconds:.0%}), over "
                            f"{SHARE:.0%}")
        short = [h for h in shortest_holds(beat) if h < HELD - TOLERANCE]
        if short:
            problems.append(f"{name}: a picture built is held silent {min(short):.2f} s, under {HELD:g} s")
        for start, end in beat["lines"]:
            if not (beat["start"] - TOLERANCE <= start <= end <= beat["end"] + TOLERANCE):
                problems.append(f"{name}: a line [{start}, {end}] runs outside its beat")
    return problems


def assert_paced(record: list[dict], where: str = "") -> None:
    assert record, f"{where}: no pace recorded"
    problems = pace_problems(record)
    assert not problems, f"{where}: " + "; ".join(problems)
