"""The plan: how the clips to render become chunks of work, one render process each.

A whole clip is one chunk. A clip whose plays (animations and waits) are known from an earlier render (its plan,
media/.cache/plans/, see manifest.save_plan) may be split into contiguous ranges of plays rendered at once
(pool_chunks, split_ranges, by their costs: play_costs, part_costs); a lone clip without a plan is split while it
renders, at the play split_live picks. split_timeline makes the timeline of a clip joined from its parts.

The planner never renders and never starts or stops a process: it counts costs and picks split points, from plans
on disk and the progress a running part reports; run() acts on them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .recipe import Job

@dataclass
class Chunk:
    """The work of one render process: a whole clip (part None), or one contiguous range of a clip's plays."""
    job: Job
    part: dict | None
    cost: float
    number: int = 0   # the part's place in its clip


SPLIT_FORMATS = ("mp4", "mov", "webm")   # joined without re-encoding (a gif is re-encoded as a whole)
PLAY_OVERHEAD = 0.05   # cost of a play beyond its seconds of video, when no measured cost is known
SPLIT_GAIN = 0.05   # a clip gets one more part only if that shortens the pool's estimated finish by 5 %


def splittable(job: Job, media: Path) -> bool:
    """A whole clip in a format that joins without re-encoding, whose plays are known from an earlier render
    (see save_plan) or worth a planning pass before it starts (above preview quality, where drawing the frames
    dominates; at preview that pass would cost about what splitting saves). On the local cores a lone clip
    without a plan is counted while it renders instead (run(), split_live); this is the rule for a Dask cluster."""
    if job.section is not None or job.format not in SPLIT_FORMATS:
        return False
    return job.quality != "preview" or load_plan(media, job) is not None


def plan_path(media: Path, job: Job) -> Path:
    return media / ".cache" / "plans" / f"{job.name}.json"


def load_plan(media: Path, job: Job) -> list | None:
    try:
        plays = json.loads(plan_path(media, job).read_text())["plays"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    ok = isinstance(plays, list) and plays and all(isinstance(p, list) and len(p) in (3, 4) for p in plays)
    return plays if ok else None


def pool_chunks(jobs: list[Job], plans: dict, n: int) -> list[Chunk]:
    """Every clip to render as chunks for a pool of n workers.

    A clip with a plan (the plays of an earlier render, see save_plan) costs what split_ranges counts: its
    plays' measured wall time, or their seconds of video plus PLAY_OVERHEAD; a clip without one is estimated
    as long as the longest clip that has one (1 when none has), so that it starts early. Starting with one
    chunk per clip, the clip with the longest chunk gets one more part (up to n, split by split_ranges) while
    that shortens the estimated finish of the pool, longest chunk first onto the least loaded worker, by more
    than SPLIT_GAIN; a part also pays for skipping the plays before its range, where the plan measured it."""
    known = {j.name: sum(part_costs(plans[j.name], [(0, -1)])) for j in jobs if plans.get(j.name)}
    guess = max(known.values(), default=1.0)

    def chunks_of(job: Job, k: int) -> list[Chunk]:
        plays = plans.get(job.name)
        if k == 1 or not plays:
            return [Chunk(job, None, known.get(job.name, guess))]
        ranges = split_ranges(plays, k)
        return [Chunk(job, {"from": a, "upto": b}, cost, i)
                for i, ((a, b), cost) in enumerate(zip(ranges, part_costs(plays, ranges)))]

    def finish(chunks: list[Chunk]) -> float:
        loads = [0.0] * max(1, n)
        for c in sorted(chunks, key=lambda c: -c.cost):
            loads[loads.index(min(loads))] += c.cost
        return max(loads)

    current = {job.name: chunks_of(job, 1) for job in jobs}
    while True:
        best = finish([c for cs in current.values() for c in cs])
        candidates = sorted((j for j in jobs if plans.get(j.name) and len(current[j.name]) < min(n, len(plans[j.name]))),
                            key=lambda j: -max(c.cost for c in current[j.name]))
        for job in candidates:
            trial = {**current, job.name: chunks_of(job, len(current[job.name]) + 1)}
            if finish([c for cs in trial.values() for c in cs]) < best * (1 - SPLIT_GAIN):
                current = trial
                break
        else:
            break
    return [c for job in jobs for c in current[job.name]]


def split_ranges(plays: list, n: int) -> list[tuple[int, int]]:
    """Contiguous ranges of play numbers, (from, upto) with upto inclusive, one per part, that make the
    slowest part as fast as possible; the last part runs to the end (upto -1), so a plan that is out of date
    is never wrong, only less balanced.

    A play's cost is the wall time it took in an earlier render (when every play of the plan was drawn),
    else its seconds of video plus PLAY_OVERHEAD. A part also pays for skipping every play before its range
    (construct() runs whole): the measured time of skipping each play, where the plan has it (its 4th field),
    else nothing."""
    costs, skips = play_costs(plays)
    n = max(1, min(n, len(costs)))
    cost_before, skip_before = [0.0], [0.0]
    for cost, skip in zip(costs, skips):
        cost_before.append(cost_before[-1] + cost)
        skip_before.append(skip_before[-1] + skip)

    def part(a: int, b: int) -> float:   # plays a..b inclusive
        return skip_before[a] + cost_before[b + 1] - cost_before[a]

    def cuts_within(limit: float) -> list[int] | None:
        cuts, a = [], 0
        for k in range(n - 1):
            b = a
            while b + 1 < len(costs) - (n - 1 - k) and part(a, b + 1) <= limit:
                b += 1
            if part(a, b) > limit:
                return None
            cuts.append(b + 1)
            a = b + 1
        return cuts if part(a, len(costs) - 1) <= limit else None

    lo, hi = max(costs), cost_before[-1] + skip_before[-1]
    best = cuts_within(hi) or list(range(1, n))
    for _ in range(60):   # bisect the slowest part's cost
        mid = (lo + hi) / 2
        found = cuts_within(mid)
        if found is None:
            lo = mid
        else:
            hi, best = mid, found
    starts = [0, *best]
    return [(a, b - 1) for a, b in zip(starts, best)] + [(starts[-1], -1)]


def play_costs(plays: list) -> tuple[list[float], list[float]]:
    """Per play, the cost of drawing it and of skipping it, as split_ranges counts them."""
    measured = all(p[0] for p in plays)
    costs = [p[2] if measured else p[1] + PLAY_OVERHEAD for p in plays]
    skips = [(p[3] or 0.0) if measured and len(p) > 3 else 0.0 for p in plays]
    return costs, skips


def part_costs(plays: list, ranges: list[tuple[int, int]]) -> list[float]:
    """The estimated cost of each range of plays (upto -1: to the end): drawing its plays and skipping the
    plays before it."""
    costs, skips = play_costs(plays)
    return [sum(skips[:a]) + sum(costs[a:(b + 1 if b >= 0 else None)]) for a, b in ranges]


def split_live(plan: dict, progress: dict | None) -> int | None:
    """Where to split a clip that one process is drawing from its start: the play k where a second process takes
    over (the first draws up to k - 1), or None when a split would not finish sooner by more than SPLIT_GAIN.

    The first process has drawn progress["plays"] plays; the rest of its plays cost their seconds of video times
    the wall time per second of video it has measured so far (1 before a second of video is drawn), plus
    PLAY_OVERHEAD. The second process pays what the planning pass took to reach play k with every play before
    it skipped (plan["reached"]: its startup, construct() and the skipping) and then draws plays k.. at the
    same rate."""
    plays, reached = plan["plays"], plan.get("reached") or []
    n = len(plays)
    done = int(progress["plays"]) if progress else 0
    rate = progress["drawing"] / progress["video"] if progress and progress["video"] >= 1.0 else 1.0
    if len(reached) != n or n - done < 2:
        return None
    costs = [rate * p[1] + PLAY_OVERHEAD for p in plays]
    after = [0.0] * (n + 1)   # after[i]: the cost of plays i..n-1
    for i in range(n - 1, -1, -1):
        after[i] = after[i + 1] + costs[i]
    alone = after[done]
    best, best_k = alone, None
    for k in range(done + 1, n):
        finish = max(alone - after[k], reached[k - 1] + after[k])
        if finish < best:
            best, best_k = finish, k
    return best_k if best_k is not None and best < alone * (1 - SPLIT_GAIN) else None


def split_timeline(parts: list[dict], fps: int) -> tuple[list[dict], list]:
    """The timeline of the joined clip, from the frames each part rendered (a play's frames come from the part
    that rendered it) and the beats (manim sections) of the last part, which ran construct() to its end, with
    their titles from that part's record. Also every play as rendered, for the plan of the next render."""
    last = parts[-1]
    plays: list = [None] * len(last["plays"])
    skipped: dict[int, float] = {}   # the time a part took to skip a play before its range
    for part in parts:
        for i, play in enumerate(part["plays"][:len(plays)]):
            if play[0]:
                plays[i] = play[:3]
            else:
                skipped[i] = play[2]
    if any(p is None for p in plays):
        raise RuntimeError(f"play {plays.index(None)} was rendered by no part")
    names = [name for name, _ in last["sections"]]
    counts = [count for _, count in last["sections"]]
    beats = last["record"]["sections"]
    extra = len(names) - len(beats)   # 1 if manim's automatic first section holds plays before the first beat
    if extra not in (0, 1) or names[extra:] != beats or sum(counts) != len(plays):
        raise RuntimeError(f"the last part's sections {names} and {sum(counts)} plays do not match the scene's "
                           f"beats {beats} and {len(plays)} plays")
    frames = [round(p[1] * fps) for p in plays]
    edges, played = [], sum(counts[:extra])
    for count in counts[extra:]:
        edges.append(sum(frames[:played]))
        played += count
    edges.append(sum(frames))
    titles = {b["section"]: b["title"] for b in last["record"].get("timeline", []) if "title" in b}
    timeline = [{"section": name, **({"title": titles[name]} if name in titles else {}), "start": round(a / fps, 3),
                 "end": round(b / fps, 3)} for name, a, b in zip(beats, edges, edges[1:])]
    for c in last["record"].get("captions", []):   # a narration line: from the frames of the plays before it
        c["start"], c["end"] = (round(sum(frames[:n]) / fps, 3) for n in c["plays"])
        if c.get("speech"):   # a spoken line's cue is its speech (it is held on screen a little longer)
            c["end"] = round(min(c["end"], c["start"] + c["speech"]["seconds"]), 3)
    return timeline, [[*p, skipped.get(i)] for i, p in enumerate(plays)]
