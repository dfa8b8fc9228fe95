"""The scheduling loop. run() renders every job that is not up to date (pipeline.cache) as chunks (pipeline.plan)
on a runner (pipeline.runners: the local cores or a Dask cluster), longest first; follows a lone clip that is
split while it renders; joins a split clip's parts and installs it (finish_split); reports progress, failures and
the summary, and stops every render process on Ctrl-C.

The scheduler never draws a frame: every render happens in a render process (pipeline.worker). Here only job
specs and the files of work folders are written and read.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from .cache import hash_sources, up_to_date
from .manifest import install, save_plan, write_json
from .narration import say_failure
from .plan import SPLIT_FORMATS, Chunk, load_plan, plan_path, pool_chunks, split_live, split_timeline, splittable
from .recipe import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, QUALITIES, REPO, Job, relative
from .runners import DaskRunner, LocalRunner


def run(jobs: list[Job], n_jobs: int, media: Path, model_dir: Path, model: dict, env: dict,
        force: bool = False, dry_run: bool = False, client=None) -> int:
    """Render what is not up to date: every clip as one chunk or as several ranges of its plays (pool_chunks),
    all chunks in one pool, longest first, on the local cores (n_jobs processes) or on a Dask cluster (client)."""
    start = time.monotonic()
    work_root = media / ".work"
    clean_stale(work_root)
    todo, skipped, failed, done, uncached = [], [], [], [], []
    width = max(len(j.name) for j in jobs)
    for i, job in enumerate(jobs, 1):
        job.index = i
    for job in jobs:
        if not force and up_to_date(job):
            skipped.append(job)
            print(f"[{job.index}/{len(jobs)}] {job.name:<{width}}  skipped (up to date) {relative(job.output)}",
                  flush=True)
        else:
            todo.append(job)
    if dry_run:
        for job in todo:
            print(f"[{job.index}/{len(jobs)}] {job.name:<{width}}  would render -> {relative(job.output)}")
        print(f"{len(jobs)} scene(s): {len(todo)} to render, {len(skipped)} up to date")
        return 0

    def head(job: Job) -> str:
        return f"[{job.index}/{len(jobs)}] {job.name:<{width}}"

    runner = DaskRunner(client) if client is not None else LocalRunner(media)
    capacity = runner.capacity(n_jobs)
    plans = {job.name: load_plan(media, job) for job in todo if job.section is None and job.format in SPLIT_FORMATS}
    # One clip to render and no plan of it: on the local cores, one process draws it from its start while another
    # counts its plays (construct() only, nothing drawn); then the first is told where to stop and a second part
    # draws the rest (follow_live, split_live). On a Dask cluster, above preview, it is counted first.
    lone = todo[0] if capacity > 1 and len(todo) == 1 and plans.get(todo[0].name, 1) is None else None
    live = {"job": lone, "planner": None, "planned": False, "k": None, "settled": False} \
        if lone is not None and runner.follows else None
    could_split = capacity > 1 and (live is not None or any(splittable(job, media) for job in todo))
    runner.open(capacity if could_split else min(capacity, len(todo)))
    running: list[tuple[Chunk, object, Path, float, int]] = []   # chunk, process, work folder, start, slot
    groups: dict[str, dict] = {}      # clips in parts: their parts' specs and work folders, and what is done
    reported: dict[str, float] = {}   # job name -> when its progress was last printed

    def fail(job: Job, work: Path, started: float) -> None:
        reason = why(work)   # before keep_log, which removes the work folder
        failed.append((job, keep_log(work, media, job), reason))
        print(f"{head(job)}  FAILED after {time.monotonic() - started:.1f} s: {reason}", flush=True)

    def planning_spec(job: Job, slot: int, work: Path) -> dict:
        """A planning pass: construct() with every play skipped, to count the plays (plan.json)."""
        return job_spec(job, work, slot, media, model_dir, model, env, {"sources": {}, "hashed_at_ns": 0}, plan=True)

    def end_planner() -> None:
        """Stop the live clip's planning process, if it runs: its clip no longer needs it."""
        if live is not None and live["planner"] is not None:
            proc, work, slot = live["planner"]
            stop([(None, proc, work, None, slot)])
            runner.give_back(slot)
            live["planner"] = None

    def running_part(job: Job, number: int) -> tuple | None:
        return next((e for e in running if e[0].job is job and e[0].number == number), None)

    def settle(accepted: int | None) -> None:
        """The first part said where it stops (ack.json, or its part.json when it ended first): the second
        part's range starts after it. If the first ran past the split, the second is started again after it;
        if it drew the whole clip, the second is dropped."""
        job, group = live["job"], groups[live["job"].name]
        live["settled"] = True
        if accepted == live["k"] - 1:
            return
        entry = running_part(job, 1)
        if entry is not None:
            stop([entry])
            running.remove(entry)
            runner.give_back(entry[4])
        queue[:] = [c for c in queue if not (c.job is job and c.number == 1)]
        if 1 in group["works"]:   # a second part that already ran: its files go
            shutil.rmtree(group["works"].pop(1), ignore_errors=True)
        group["specs"].pop(1, None)
        group["finished"].discard(1)
        if accepted is None:
            group["n"] = 1
            print(f"{head(job)}  the first process drew it to the end: no second part", flush=True)
        else:
            queue.insert(0, Chunk(job, {"from": accepted + 1, "upto": -1}, 0.0, 1))
            print(f"{head(job)}  the first process stops at animation {accepted}: the second starts again after "
                  f"it", flush=True)

    def follow_live() -> None:
        """The lone clip split while it renders: its planning process started once its first part runs and a
        core is free; the split when the plan arrives; then where the first part stopped, once it says."""
        job = live["job"]
        first = running_part(job, 0)
        if first is None:
            return
        if not live["planned"] and runner.free():
            slot = runner.take()
            work = work_root / f"{job.name}-{os.getpid()}-{slot}"
            live["planner"], live["planned"] = (runner.start(planning_spec(job, slot, work)), work, slot), True
        if live["planner"] is not None and live["planner"][0].poll() is not None:
            proc, work, slot = live["planner"]
            live["planner"] = None
            runner.give_back(slot)
            try:
                plan = json.loads((work / "plan.json").read_text()) if proc.returncode == 0 else None
            except (OSError, ValueError):
                plan = None
            shutil.rmtree(work, ignore_errors=True)
            k = split_live(plan, read_progress(first[2])) if plan else None
            if plan and os.environ.get(SPLIT_AT_ENV):   # a test's split point (negative: from the end)
                k = max(1, int(os.environ[SPLIT_AT_ENV]) % len(plan["plays"]))
            if k is not None:
                write_json(first[2] / "limit.json", {"limit": k - 1})
                live["k"] = k
                groups[job.name]["n"] = 2
                queue.insert(0, Chunk(job, {"from": k, "upto": -1}, 0.0, 1))
                print(f"{head(job)}  {len(plan['plays'])} animations: 0-{k - 1} in this process, "
                      f"{k}-{len(plan['plays']) - 1} in a second", flush=True)
        if live["k"] is not None and not live["settled"] and (first[2] / "ack.json").is_file():
            settle(json.loads((first[2] / "ack.json").read_text())["limit"])

    try:
        if live is None and lone is not None and splittable(lone, media):
            # No earlier render of this clip: count its plays first (construct() only, nothing drawn).
            job, slot = todo[0], runner.take()
            print(f"{head(job)}  planning: counting its animations", flush=True)
            work = work_root / f"{job.name}-{os.getpid()}-{slot}"
            t0 = time.monotonic()
            proc = runner.start(planning_spec(job, slot, work))
            running.append((Chunk(job, None, 0.0), proc, work, t0, slot))
            proc.wait()
            running.clear()
            runner.give_back(slot)
            if proc.returncode != 0:
                fail(job, work, t0)
                todo.clear()
            else:
                plans[job.name] = json.loads((work / "plan.json").read_text())["plays"]
                shutil.rmtree(work, ignore_errors=True)
        queue = sorted(pool_chunks(todo, plans, capacity), key=lambda c: -c.cost)   # longest first
        if live is not None:
            queue = [Chunk(lone, {"from": 0, "upto": -1, "follow": True}, 0.0, 0)]
        for chunk in queue:
            if chunk.part is not None:
                groups.setdefault(chunk.job.name, {"n": 0, "specs": {}, "works": {}, "finished": set(),
                                                   "sources": None, "started": 0.0})["n"] += 1
        while queue or running:
            while queue and runner.free():
                chunk, slot = queue.pop(0), runner.take()
                job = chunk.job
                work = work_root / f"{job.name}-{os.getpid()}-{slot}"
                if chunk.part is None:
                    spec = job_spec(job, work, slot, media, model_dir, model, env, hash_sources(job))
                    print(f"{head(job)}  rendering ({job.quality}, {job.format})", flush=True)
                else:
                    group = groups[job.name]
                    if group["sources"] is None:   # its first part: hashed once, before any part starts
                        group["sources"], group["started"] = hash_sources(job), time.monotonic()
                        if chunk.part.get("follow"):
                            print(f"{head(job)}  rendering ({job.quality}, {job.format}) from its start, while "
                                  f"another process counts its animations to split it", flush=True)
                        else:
                            ranges = sorted((c.number, c.part) for c in queue + [chunk] if c.job is job)
                            last = len(plans[job.name]) - 1
                            shown = ", ".join(f"{p['from']}-{p['upto'] if p['upto'] >= 0 else last}"
                                              for _, p in ranges)
                            print(f"{head(job)}  rendering ({job.quality}, {job.format}) in {group['n']} parts, "
                                  f"animations {shown}", flush=True)
                    spec = job_spec(job, work, slot, media, model_dir, model, env, group["sources"], part=chunk.part)
                    group["specs"][chunk.number], group["works"][chunk.number] = spec, work
                running.append((chunk, runner.start(spec), work, time.monotonic(), slot))
            if live is not None:
                follow_live()
            time.sleep(0.05)
            for entry in list(running):
                if entry not in running:   # stopped with a failed part of its clip
                    continue
                chunk, proc, work, t0, slot = entry
                job = chunk.job
                if proc.poll() is None:
                    if chunk.part is None:
                        report_progress(job, len(jobs), width, work, t0, reported)
                    elif chunk.number == min(c.number for c, *_ in running if c.job is job):
                        works = [w for c, _, w, _, _ in running if c.job is job]
                        report_progress(job, len(jobs), width, works, groups[job.name]["started"], reported)
                    continue
                running.remove(entry)
                runner.give_back(slot)
                if chunk.part is None:
                    stale = work / "stale.txt"
                    if proc.returncode == 0 and stale.is_file() and job.output.is_file():
                        uncached.append(job)
                        print(f"{head(job)}  rendered but NOT cached: {stale.read_text().strip()} changed during "
                              f"the render, so the next run renders it again -> {relative(job.output)}", flush=True)
                        shutil.rmtree(work, ignore_errors=True)
                    elif proc.returncode == 0 and up_to_date(job):
                        done.append(job)
                        print(f"{head(job)}  done in {time.monotonic() - t0:.1f} s -> {relative(job.output)}",
                              flush=True)
                        shutil.rmtree(work, ignore_errors=True)
                    else:
                        fail(job, work, t0)
                    continue
                group = groups[job.name]
                if live is not None and live["job"] is job and chunk.number == 0:   # its first part ended
                    end_planner()
                    if proc.returncode == 0 and live["k"] is not None and not live["settled"]:
                        settle(json.loads((work / "part.json").read_text())["limit"])
                if proc.returncode != 0:   # one part failed: the clip failed; stop its other parts
                    fail(job, work, group["started"])
                    queue[:] = [c for c in queue if c.job is not job]
                    siblings = [e for e in running if e[0].job is job]
                    stop(siblings)
                    for e in siblings:
                        running.remove(e)
                        runner.give_back(e[4])
                    for other in group["works"].values():
                        shutil.rmtree(other, ignore_errors=True)
                    continue
                group["finished"].add(chunk.number)
                if len(group["finished"]) == group["n"]:
                    status = finish_split(job, group, head(job), media)
                    {"done": done, "uncached": uncached}.get(status, []).append(job)
                    if status == "failed":
                        failed.append((job, group["log"], group["reason"]))
    except KeyboardInterrupt:
        stop(running)
        end_planner()
        for group in groups.values():
            for work in group["works"].values():
                shutil.rmtree(work, ignore_errors=True)
        print(f"interrupted: stopped {len(running)} render process(es); finished outputs are intact",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    total = time.monotonic() - start
    not_cached = f", {len(uncached)} rendered but not cached" if uncached else ""
    print(f"{len(jobs)} scene(s): {len(done)} rendered{not_cached}, {len(skipped)} skipped, {len(failed)} failed "
          f"in {total:.1f} s", flush=True)
    usage = [say_failure(reason) for _, _, reason in failed]   # a bad recording: one line, as bad input is
    for (job, log, reason), said in zip(failed, usage):
        if not said:
            print(f"failed: {job.name}: {reason} (log: {relative(log)})", file=sys.stderr)
    if failed and all(usage):
        return EXIT_USAGE
    return EXIT_FAILED if failed else 0


SPLIT_AT_ENV = "GPT_LECTURE_SPLIT_AT"   # tests: the play where a live split starts its second part


def read_progress(work: Path) -> dict | None:
    """How far a followed part is (its progress.json), or None before its first play."""
    try:
        return json.loads((work / "progress.json").read_text())
    except (OSError, ValueError):
        return None


def finish_split(job: Job, group: dict, head: str, media: Path) -> str:
    """Join a clip's finished parts in order and install it with its manifest and plan: its status."""
    works = [group["works"][i] for i in range(group["n"])]
    try:
        parts = [json.loads((work / "part.json").read_text()) for work in works]
        for part, work in zip(parts, works):   # a part from a Dask worker names its files inside its work folder
            part["files"] = [f if os.path.isabs(f) else str(work / f) for f in part["files"]]
        record = parts[-1]["record"]
        record["timeline"], rendered = split_timeline(parts, QUALITIES[job.quality][3])
        produced = works[-1] / f"joined.{job.format}"
        join_movies([f for part in parts for f in part["files"]], produced, job.quality, job.format, job.transparent)
    except Exception as e:  # noqa: BLE001 - one line, like a failed render
        (works[-1] / "error.txt").write_text(f"joining the parts failed: {type(e).__name__}: {e}\n")
        group["reason"] = why(works[-1])
        print(f"{head}  FAILED after {time.monotonic() - group['started']:.1f} s: {group['reason']}", flush=True)
        group["log"] = keep_log(works[-1], media, job)
        for work in works:
            shutil.rmtree(work, ignore_errors=True)
        return "failed"
    changed = sorted({rel for part in parts for rel in part["changed"]})
    used = {rel: digest for part in parts for rel, digest in part["sources"].items()}
    seconds = time.monotonic() - group["started"]
    last = group["specs"][group["n"] - 1]
    install(last, produced, record, seconds, dict(sorted(used.items())), changed)
    save_plan(last, rendered)
    for work in works:
        shutil.rmtree(work, ignore_errors=True)
    if changed:
        print(f"{head}  rendered but NOT cached: {', '.join(changed)} changed during the render, so the next "
              f"run renders it again -> {relative(job.output)}", flush=True)
        return "uncached"
    print(f"{head}  done in {seconds:.1f} s -> {relative(job.output)}", flush=True)
    return "done"


def join_movies(files: list[str], output: Path, quality: str, fmt: str, transparent: bool) -> None:
    """Join partial movie files in order without re-encoding, with manim's own join (the one a single-process
    render uses), so the packets are the same; written with faststart (pipeline.encoder)."""
    from manim import config, tempconfig
    from manim.scene.scene_file_writer import SceneFileWriter

    from . import encoder
    encoder.install_faststart()      # the clip's mp4 with moov first
    with tempconfig({"quality": QUALITIES[quality][0], "verbosity": "WARNING", "progress_bar": "none"}):
        config.transparent = transparent
        config.format = fmt
        SceneFileWriter.combine_files(SimpleNamespace(partial_movie_directory=output.parent), files, output)


def job_spec(job: Job, work: Path, slot: int, media: Path, model_dir: Path, model: dict, env: dict,
             sources: dict, **extra) -> dict:
    """What a render process needs (it reads <work>/job.json); makes the empty work folder."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    return {"scene": job.spec.name, "params": job.params, "quality": job.quality, "format": job.format,
            "transparent": job.transparent, "clean": job.clean, "section": job.section, "output": str(job.output),
            "model_dir": str(model_dir), "model": model, "environment": env, **sources, "cache_key": job.key,
            "work": str(work), "slot_dir": str(media / ".cache" / f"slot-{slot}"), "repo": str(REPO),
            "plan_file": str(plan_path(media, job)), "voice": job.narration.get("env"), **extra}


def stop(entries: list) -> None:
    """Stop these render processes (SIGTERM, then SIGKILL after 10 s) and remove their work folders."""
    for _, proc, _, _, _ in entries:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for _, proc, work, _, _ in entries:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(work, ignore_errors=True)


def why(work: Path) -> str:
    try:
        return (work / "error.txt").read_text().strip().splitlines()[0]
    except (OSError, IndexError):
        return "the render process stopped without a result (see its log)"


def keep_log(work: Path, media: Path, job: Job) -> Path:
    logs = media / ".logs"
    logs.mkdir(parents=True, exist_ok=True)
    dest = logs / f"{job.name}.{job.quality}.{job.format}.log"
    try:
        shutil.copyfile(work / "log.txt", dest)
    except OSError:
        dest.write_text("(no log)\n")
    shutil.rmtree(work, ignore_errors=True)
    return dest


def clean_stale(work_root: Path) -> None:
    """Remove work folders left by a render.py that no longer runs (crash, kill -9)."""
    if not work_root.is_dir():
        return
    for d in work_root.iterdir():
        m = re.search(r"-(\d+)-\d+$", d.name)
        if m and not pid_alive(int(m.group(1))):
            shutil.rmtree(d, ignore_errors=True)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


PROGRESS_EVERY = 30.0   # seconds between "still rendering" lines for a long render


def report_progress(job: Job, n_jobs: int, width: int, work: Path | list[Path], started: float,
                    reported: dict) -> None:
    """Every PROGRESS_EVERY seconds of a render: how far it is, counted in animations written so far (in every
    work folder of its running parts)."""
    now = time.monotonic()
    if now - reported.get(job.name, started) < PROGRESS_EVERY:
        return
    reported[job.name] = now
    works = work if isinstance(work, list) else [work]
    done = sum(1 for w in works if (w / "partial").is_dir() for _ in (w / "partial").glob("*.mp4"))
    elapsed = int(now - started)
    print(f"[{job.index}/{n_jobs}] {job.name:<{width}}  still rendering: {done} animation(s) written, "
          f"{elapsed // 60}m{elapsed % 60:02d}s", flush=True)
