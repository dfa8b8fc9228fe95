#!/usr/bin/env python3
"""Render the lecture's scenes from their parameters: cached, parallel, with a manifest of every number.

    python render.py list
    python render.py softmax_temperature --lang zh --quality preview
    python render.py softmax_temperature --set temperatures=1,3,0 --format png --section t0
    python render.py --config lecture.toml

Outputs go to media/<quality>/<scene>[-<variant>].<ext>, each with its manifest
<scene>[-<variant>].<ext>.json beside it. A bad input is one line on stderr and exit 2; a failed render is reported
at the end with exit 1; Ctrl-C leaves every finished output intact (exit 130).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
import traceback
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO))

from scenes.catalog import SCENES, find  # noqa: E402  (light: no manim, no model)
from scenes.params import ParamError, SceneSpec, canonical_json, pick_section  # noqa: E402

RENDER_VERSION = "2"   # bump when render.py changes what it writes, to invalidate every cache entry
EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130

QUALITIES = {  # name: (manim quality, directory, width, height, fps)
    "preview": ("low_quality", 854, 480, 15),
    "medium": ("medium_quality", 1280, 720, 30),
    "high": ("high_quality", 1920, 1080, 60),
    "4k": ("fourk_quality", 3840, 2160, 60),
}
FORMATS = ("mp4", "webm", "gif", "mov", "png")
TRANSPARENT_FORMATS = ("mov", "webm", "png")
SHORTHANDS = {  # flag: the parameter names it may stand for, first match wins
    "prompt": ("prompt",), "temperature": ("temperature", "temperatures"), "layer": ("layer",),
    "head": ("head",), "lang": ("lang",), "seed": ("seed",),
}
RENDER_KEYS = {"quality", "format", "transparent", "jobs", "model"}   # [lecture] keys that are not parameters


class UsageError(Exception):
    """Bad input: printed as one line, exit 2."""


# --- jobs -------------------------------------------------------------------------------
@dataclass
class Job:
    spec: SceneSpec
    typed: dict                 # parameter values from the recipe (TOML types)
    text: dict                  # parameter values from the command line (text to parse)
    quality: str
    format: str
    transparent: bool
    section: str | None
    where: str = ""             # for error messages: "lecture.toml: scene[2]: "
    params: dict = field(default_factory=dict)
    name: str = ""
    output: Path = Path()
    key: str = ""

    @property
    def manifest(self) -> Path:
        return manifest_path(self.output)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.,+]+", "_", text.lower()).strip("_.") or "x"


def variant_name(job: Job) -> str:
    """<scene>[-<key>-<value>...]: readable, stable, and safe as a file name."""
    parts = [job.spec.name]
    for name, value in job.spec.non_defaults(job.params).items():
        kind = job.spec.param(name).kind
        parts += [name, slug(kind.show(value))]
    if job.section:
        parts += ["section", slug(job.section)]
    if job.transparent:
        parts.append("transparent")
    name = "-".join(parts)
    if len(name) > 100:  # keep names short; the hash keeps them distinct
        digest = hashlib.sha256(canonical_json({**job.params, "section": job.section}).encode()).hexdigest()[:10]
        name = f"{name[:80]}-{digest}"
    return name


def manifest_path(output: Path) -> Path:
    """The manifest beside a clip: its full name plus .json (a gif and an mp4 of one render differ)."""
    return output.with_name(output.name + ".json")


def output_path(media: Path, job: Job) -> Path:
    folder = (media / job.quality).resolve()
    path = (folder / f"{job.name}.{job.format}").resolve()
    if path.parent != folder:  # slug() already forbids separators; this is the belt to its braces
        raise UsageError(f"output name {job.name!r} would leave {folder}")
    return path


# --- the cache key ------------------------------------------------------------------------
def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def used_sources(root: Path = REPO) -> dict[str, str]:
    """sha256 of every file of this repository that the current process has imported (scenes/, model/).

    A worker calls this after its render: exactly the scene's own file, the shared
    scene modules and the model code it used, so an unrelated edit (another scene,
    the training code) does not invalidate it.
    """
    files = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if not path:
            continue
        path = Path(path).resolve()
        if path.suffix == ".py" and any(d in path.parents for d in (root / "scenes", root / "model")):
            files[path.relative_to(root).as_posix()] = file_digest(path)
    return dict(sorted(files.items()))


def sources_unchanged(sources: dict, root: Path = REPO) -> bool:
    try:
        return bool(sources) and all(file_digest(root / path) == digest for path, digest in sources.items())
    except OSError:
        return False


def model_digest(model_dir: Path) -> dict:
    from model import weights_sha256
    return {"weights_sha256": weights_sha256(model_dir),
            "config_sha256": file_digest(model_dir / "config.json"),
            "tokenizer_sha256": file_digest(model_dir / "tokenizer.json")}


def cache_key(job: Job, model: dict, manim_version: str) -> str:
    """Everything but the source files, which the manifest lists with their hashes (see used_sources)."""
    parts = {"render": RENDER_VERSION, "model": model, "manim": manim_version,
             "params": job.params, "quality": job.quality, "format": job.format,
             "transparent": job.transparent, "section": job.section}
    return hashlib.sha256(canonical_json(parts).encode()).hexdigest()


def up_to_date(job: Job) -> bool:
    try:
        manifest = json.loads(job.manifest.read_text())
    except (OSError, ValueError):
        return False
    return (manifest.get("cache_key") == job.key and job.output.is_file()
            and sources_unchanged(manifest.get("sources") or {}))


# --- reading the command line and the lecture recipe ---------------------------------------
class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not argparse's usage block
        raise UsageError(message)


def build_parser() -> Parser:
    p = Parser(prog="render.py", description=__doc__.splitlines()[0])
    p.add_argument("scenes", nargs="*", metavar="SCENE", help="scene names (see `render.py list`), or `list`")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="set a scene parameter")
    for flag in SHORTHANDS:
        p.add_argument(f"--{flag}", metavar="VALUE", help=f"shorthand for --set {'/'.join(SHORTHANDS[flag])}=VALUE")
    p.add_argument("--quality", choices=list(QUALITIES), help="preview 480p15, medium 720p30, high 1080p60, "
                                                              "4k 2160p60 (default: preview, or the recipe's)")
    p.add_argument("--format", choices=FORMATS, help="mp4 (default), webm, gif, mov, or png (a still)")
    p.add_argument("--transparent", action="store_true", default=None, help="transparent background (mov, webm, png)")
    p.add_argument("--section", help="only this beat (name or number; several with commas, or `all`): "
                                     "a clip, or with --format png its last frame")
    p.add_argument("--config", type=Path, help="a lecture recipe (TOML), e.g. lecture.toml")
    p.add_argument("--jobs", type=int, help="parallel renders (default: the number of cores)")
    p.add_argument("--force", action="store_true", help="render even if the output is up to date")
    p.add_argument("--dry-run", action="store_true", help="say what would be rendered or skipped, render nothing")
    p.add_argument("--model", type=Path, help="weights directory (default: $GPT_LECTURE_MODEL or model/weights)")
    p.add_argument("--media", type=Path, default=REPO / "media", help="output root (default: media/)")
    p.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    return p


def cli_params(args) -> dict:
    given = {}
    for item in args.set:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise UsageError(f"--set expects KEY=VALUE, got {item!r}")
        given[key.strip()] = value
    for flag in SHORTHANDS:
        value = getattr(args, flag)
        if value is not None:
            given[f"--{flag}"] = value
    return given


def apply_params(spec: SceneSpec, given: dict, strict: bool) -> dict:
    """Map shorthand flags to the scene's parameter names; unknown names are errors if strict."""
    out = {}
    for key, value in given.items():
        if key.startswith("--"):
            names = [n for n in SHORTHANDS[key[2:]] if n in {p.name for p in spec.params}]
            if not names:
                if strict:
                    raise ParamError(f"{spec.name} has no parameter for {key}; its parameters are: "
                                     f"{', '.join(p.name for p in spec.params)}")
                continue
            key = names[0]
        elif not strict and key not in {p.name for p in spec.params}:
            continue
        out[key] = value
    return out


def read_recipe(path: Path) -> tuple[dict, list[dict]]:
    """lecture.toml -> ([lecture] settings, [[scene]] entries), with errors that name the file and key."""
    where = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{where}: no such file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise UsageError(f"{where}: not valid TOML ({e})") from None
    unknown = set(data) - {"lecture", "scene"}
    if unknown:
        raise UsageError(f"{where}: unknown top-level key {sorted(unknown)[0]!r} (expected [lecture] and [[scene]])")
    lecture = data.get("lecture", {})
    if not isinstance(lecture, dict):
        raise UsageError(f"{where}: 'lecture' must be a table ([lecture])")
    scenes = data.get("scene")
    if not isinstance(scenes, list) or not scenes or not all(isinstance(s, dict) for s in scenes):
        raise UsageError(f"{where}: expected at least one [[scene]] table")
    for key, value, kind in (("quality", lecture.get("quality"), tuple(QUALITIES)),
                             ("format", lecture.get("format"), FORMATS)):
        if value is not None and value not in kind:
            raise UsageError(f"{where}: lecture.{key} must be one of {', '.join(kind)}, got {value!r}")
    if "transparent" in lecture and not isinstance(lecture["transparent"], bool):
        raise UsageError(f"{where}: lecture.transparent must be true or false")
    if "jobs" in lecture and (not isinstance(lecture["jobs"], int) or lecture["jobs"] < 1):
        raise UsageError(f"{where}: lecture.jobs must be a positive integer")
    if "model" in lecture and not isinstance(lecture["model"], str):
        raise UsageError(f"{where}: lecture.model must be a path")
    for i, entry in enumerate(scenes, 1):
        if not isinstance(entry.get("name"), str):
            raise UsageError(f"{where}: scene[{i}] needs name = \"<scene>\" (see `render.py list`)")
        if "section" in entry and not isinstance(entry["section"], (str, int)):
            raise UsageError(f"{where}: scene[{i}].section must be a name or a number")
    return lecture, scenes


def plan(args) -> tuple[list[Job], dict]:
    """The jobs to run, and the render settings; every parameter is checked but not yet resolved."""
    given = cli_params(args)
    settings = {"quality": args.quality, "format": args.format, "transparent": args.transparent,
                "jobs": args.jobs, "model": args.model}
    jobs: list[Job] = []
    if args.config:
        lecture, entries = read_recipe(args.config)
        for key in RENDER_KEYS:
            if settings[key] is None and key in lecture:
                settings[key] = lecture[key] if key != "model" else (args.config.parent / lecture[key])
        shared = {k: v for k, v in lecture.items() if k not in RENDER_KEYS}
        for k in shared:
            if not any(k in {p.name for p in s.params} for s in SCENES.values()):
                raise UsageError(f"{args.config}: lecture.{k} is neither a render setting "
                                 f"({', '.join(sorted(RENDER_KEYS))}) nor a parameter of any scene")
        wanted = {find(n).name for n in args.scenes}
        for i, entry in enumerate(entries, 1):
            where = f"{args.config}: scene[{i}]: "
            try:
                spec = find(entry["name"])
            except ParamError as e:
                raise UsageError(f"{where}{e}") from None
            if wanted and spec.name not in wanted:
                continue
            typed = {**{k: v for k, v in shared.items() if k in {p.name for p in spec.params}},
                     **{k: v for k, v in entry.items() if k not in ("name", "section")}}
            for k in typed:
                try:
                    spec.param(k)
                except ParamError as e:
                    raise UsageError(f"{where}{e}") from None
            jobs.append(Job(spec, typed, apply_params(spec, given, strict=False), quality="", format="",
                            transparent=False,
                            section=str(entry["section"]) if "section" in entry else args.section, where=where))
        unused = [k for k in given if not any(apply_params(j.spec, {k: given[k]}, strict=False) for j in jobs)]
        if unused:
            raise UsageError(f"no scene in {args.config} has a parameter for {unused[0].lstrip('-')}")
    else:
        if not args.scenes:
            raise UsageError("name a scene (see `python render.py list`) or give --config lecture.toml")
        for name in args.scenes:
            spec = find(name)
            jobs.append(Job(spec, {}, apply_params(spec, given, strict=True), quality="", format="",
                            transparent=False, section=args.section))
    settings["quality"] = settings["quality"] or "preview"
    settings["format"] = settings["format"] or "mp4"
    settings["transparent"] = bool(settings["transparent"])
    if settings["transparent"] and settings["format"] not in TRANSPARENT_FORMATS:
        raise UsageError(f"--transparent needs --format {', '.join(TRANSPARENT_FORMATS)} "
                         f"(got {settings['format']}: it has no alpha channel)")
    if settings["jobs"] is not None and settings["jobs"] < 1:
        raise UsageError("--jobs must be at least 1")
    for job in jobs:
        job.quality, job.format, job.transparent = settings["quality"], settings["format"], settings["transparent"]
    return jobs, settings


def model_directory(settings: dict) -> Path:
    from model import DEFAULT_DIR
    chosen = settings.get("model") or os.environ.get("GPT_LECTURE_MODEL") or DEFAULT_DIR
    return Path(chosen).resolve()


def resolve(jobs: list[Job], model_dir: Path, media: Path) -> None:
    """Validate every parameter against the model, then fix each job's output name."""
    from model import ModelError, NumpyGPT
    try:
        gpt = NumpyGPT.load(model_dir)
    except ModelError as e:
        raise UsageError(f"model: {e}") from None
    names = set()
    expanded = []
    for job in jobs:
        job.params = job.spec.resolve(job.typed, job.text, model=gpt, where=job.where)
        if job.section is None:
            expanded.append(job)
            continue
        sections = job.spec.section_names(job.params)
        wanted = sections if job.section == "all" else [w.strip() for w in job.section.split(",") if w.strip()]
        for w in wanted:
            try:
                section = sections[pick_section(w, sections)]
            except ParamError as e:
                raise UsageError(f"{job.where}{job.spec.name}: {e}") from None
            expanded.append(replace(job, section=section))
    jobs[:] = expanded
    for job in jobs:
        job.name = variant_name(job)
        job.output = output_path(media, job)
        if job.output in names:
            raise UsageError(f"{job.where}the same render is asked for twice: {job.output.name}")
        names.add(job.output)


# --- running the renders ---------------------------------------------------------------------
def relative(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def run(jobs: list[Job], n_jobs: int, media: Path, model_dir: Path, model: dict, manim_version: str,
        force: bool = False, dry_run: bool = False) -> int:
    start = time.monotonic()
    work_root = media / ".work"
    clean_stale(work_root)
    todo, skipped, failed, done = [], [], [], []
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
    running: dict[int, tuple[Job, subprocess.Popen, Path, float, int]] = {}
    reported: dict[str, float] = {}      # job name -> when its progress was last printed
    free_slots = acquire_slots(media, min(n_jobs, len(todo))) if todo else []
    try:
        while todo or running:
            while todo and free_slots:
                job, slot = todo.pop(0), free_slots.pop(0)
                work = work_root / f"{job.name}-{os.getpid()}-{slot}"
                shutil.rmtree(work, ignore_errors=True)
                work.mkdir(parents=True)
                spec_file = work / "job.json"
                spec_file.write_text(json.dumps({
                    "scene": job.spec.name, "params": job.params, "quality": job.quality, "format": job.format,
                    "transparent": job.transparent, "section": job.section, "output": str(job.output),
                    "model_dir": str(model_dir), "model": model, "manim_version": manim_version,
                    "cache_key": job.key, "work": str(work), "slot_dir": str(media / ".cache" / f"slot-{slot}"),
                    "repo": str(REPO),
                }, ensure_ascii=False))
                log = open(work / "log.txt", "w")
                proc = subprocess.Popen([sys.executable, str(REPO / "render.py"), "--worker", str(spec_file)],
                                        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=REPO)
                log.close()
                running[proc.pid] = (job, proc, work, time.monotonic(), slot)
                print(f"[{job.index}/{len(jobs)}] {job.name:<{width}}  rendering ({job.quality}, {job.format})",
                      flush=True)
            time.sleep(0.05)
            for pid, (job, proc, work, t0, slot) in list(running.items()):
                if proc.poll() is None:
                    report_progress(job, len(jobs), width, work, t0, reported)
                    continue
                del running[pid]
                free_slots.append(slot)
                seconds = time.monotonic() - t0
                if proc.returncode == 0 and up_to_date(job):
                    done.append(job)
                    print(f"[{job.index}/{len(jobs)}] {job.name:<{width}}  done in {seconds:.1f} s "
                          f"-> {relative(job.output)}", flush=True)
                    shutil.rmtree(work, ignore_errors=True)
                else:
                    failed.append((job, keep_log(work, media, job), why(work)))
                    print(f"[{job.index}/{len(jobs)}] {job.name:<{width}}  FAILED after {seconds:.1f} s: "
                          f"{failed[-1][2]}", flush=True)
    except KeyboardInterrupt:
        for job, proc, work, _, _ in running.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for job, proc, work, _, _ in running.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            shutil.rmtree(work, ignore_errors=True)
        print(f"interrupted: stopped {len(running)} render(s); finished outputs are intact", file=sys.stderr)
        return EXIT_INTERRUPTED
    total = time.monotonic() - start
    print(f"{len(jobs)} scene(s): {len(done)} rendered, {len(skipped)} skipped, {len(failed)} failed "
          f"in {total:.1f} s", flush=True)
    for job, log, reason in failed:
        print(f"failed: {job.name}: {reason} (log: {relative(log)})", file=sys.stderr)
    return EXIT_FAILED if failed else 0


_slot_locks: list = []


def acquire_slots(media: Path, n: int) -> list[int]:
    """n cache slots (LaTeX and text caches) that no other running render.py holds; kept until exit."""
    import fcntl
    slots, i = [], 0
    while len(slots) < n:
        folder = media / ".cache" / f"slot-{i}"
        folder.mkdir(parents=True, exist_ok=True)
        lock = open(folder / ".lock", "w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
        else:
            _slot_locks.append(lock)
            slots.append(i)
        i += 1
    return slots


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


def report_progress(job: Job, n_jobs: int, width: int, work: Path, started: float, reported: dict) -> None:
    """Every PROGRESS_EVERY seconds of a render: how far it is, counted in animations written so far."""
    now = time.monotonic()
    if now - reported.get(job.name, started) < PROGRESS_EVERY:
        return
    reported[job.name] = now
    done = sum(1 for _ in (work / "partial").glob("*.mp4")) if (work / "partial").is_dir() else 0
    elapsed = int(now - started)
    print(f"[{job.index}/{n_jobs}] {job.name:<{width}}  still rendering: {done} animation(s) written, "
          f"{elapsed // 60}m{elapsed % 60:02d}s", flush=True)


# --- one render, in its own process -------------------------------------------------------------
def worker(job_file: Path) -> int:
    """Render one job into its work folder, then move the result into place atomically."""
    job = json.loads(job_file.read_text())
    work = Path(job["work"])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(EXIT_INTERRUPTED))
    try:
        started = time.monotonic()
        produced, scene = render_scene(job, work)
        write_outputs(job, produced, scene, time.monotonic() - started)
        return 0
    except BaseException as e:  # noqa: BLE001 - every failure becomes one line for the parent
        if isinstance(e, SystemExit) and e.code == EXIT_INTERRUPTED:
            raise
        traceback.print_exc()
        message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        (work / "error.txt").write_text(f"{type(e).__name__}: {message}\n")
        return EXIT_FAILED


def render_scene(job: dict, work: Path):
    from scenes.lecture import ENV_MODEL, ENV_PARAMS, ENV_SECTION
    os.environ[ENV_MODEL] = job["model_dir"]
    os.environ[ENV_PARAMS] = json.dumps(job["params"])
    os.environ[ENV_SECTION] = job["section"] or ""
    import importlib

    from manim import config, tempconfig
    slot = Path(job["slot_dir"])
    still = job["format"] == "png"
    settings = {
        "quality": QUALITIES[job["quality"]][0], "media_dir": str(work / "media"),
        "video_dir": str(work / "video"), "images_dir": str(work / "images"),
        "partial_movie_dir": str(work / "partial"), "tex_dir": str(slot / "Tex"), "text_dir": str(slot / "texts"),
        "output_file": "render", "disable_caching": True, "progress_bar": "none", "verbosity": "WARNING",
        "write_to_movie": not still, "save_last_frame": still, "format": None if still else job["format"],
        "notify_outdated_version": False,
    }
    spec = SCENES[job["scene"]]
    module = importlib.import_module(spec.module)
    with tempconfig(settings):
        config.transparent = job["transparent"]
        if not still:
            config.format = job["format"]
        scene = getattr(module, spec.cls)()
        scene.render()
        writer = scene.renderer.file_writer
        if still:
            produced = Path(writer.image_file_path)
        elif job["format"] == "gif":
            produced = Path(writer.gif_file_path)
        else:
            produced = Path(writer.movie_file_path)
    if not produced.is_file():
        raise RuntimeError(f"manim wrote no {job['format']} file")
    return produced, scene


def write_outputs(job: dict, produced: Path, scene, seconds: float) -> None:
    """Old manifest out, new clip in (one rename), new manifest in (one rename): never half-written."""
    from model import to_jsonable
    output = Path(job["output"])
    manifest = manifest_path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    manifest.unlink(missing_ok=True)
    os.replace(produced, output)
    quality = QUALITIES[job["quality"]]
    model_dir = Path(job["model_dir"])
    try:
        model_dir_shown = str(model_dir.relative_to(Path(job["repo"])))
    except ValueError:
        model_dir_shown = str(model_dir)
    record = {
        "scene": job["scene"], "class": SCENES[job["scene"]].cls,
        "params": to_jsonable(scene.params),
        "output": output.name, "quality": job["quality"], "resolution": [quality[1], quality[2]],
        "fps": quality[3], "format": job["format"], "transparent": job["transparent"], "section": job["section"],
        "sections": scene.section_names,
        "timeline": scene.timeline() if job["format"] != "png" else [],
        "model": {"dir": model_dir_shown, **job["model"], "config": scene.gpt.config.as_dict()},
        "manim_version": job["manim_version"], "cache_key": job["cache_key"],
        "sources": used_sources(Path(job["repo"])),
        "render_seconds": round(seconds, 2),
        "values": to_jsonable(scene.values),
    }
    tmp = manifest.with_name(f".{manifest.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, manifest)


# --- list ---------------------------------------------------------------------------------------
def list_scenes() -> None:
    for spec in SCENES.values():
        print(f"{spec.name}  ({spec.path}, class {spec.cls})")
        print(f"  {spec.summary}")
        width = max(len(p.name) for p in spec.params)
        kinds = max(len(p.kind.name) for p in spec.params)
        for p in spec.params:
            print(f"    {p.name:<{width}}  {p.kind.name:<{kinds}}  default {p.show_default():<20}  {p.help}")
        print(f"  sections (default parameters): {', '.join(spec.section_names(spec.defaults()))}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = build_parser().parse_args(argv)
        if args.worker:
            return worker(args.worker)
        if args.scenes[:1] == ["list"]:
            if len(args.scenes) > 1:
                raise UsageError("`list` takes no scene names")
            list_scenes()
            return 0
        jobs, settings = plan(args)
        if not jobs:
            raise UsageError("nothing to render: no scene in the recipe matches")
        media = args.media.resolve()
        model_dir = model_directory(settings)
        resolve(jobs, model_dir, media)
        try:
            model = model_digest(model_dir)
        except OSError as e:
            raise UsageError(f"model: cannot read {e.filename}") from None
        manim_version = metadata.version("manim")
        for job in jobs:
            job.key = cache_key(job, model, manim_version)
        n_jobs = settings["jobs"] or os.cpu_count() or 1
        return run(jobs, min(n_jobs, len(jobs)), media, model_dir, model, manim_version, force=args.force,
                   dry_run=args.dry_run)
    except (UsageError, ParamError) as e:
        print(f"render.py: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
