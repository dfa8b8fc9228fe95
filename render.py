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
import ast
import hashlib
import json
import os
import platform
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

RENDER_VERSION = "5"   # bump when render.py changes what it writes, to invalidate every cache entry
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
RENDER_KEYS = {"quality", "format", "transparent", "clean", "slides", "jobs", "model"}


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
    clean: bool = False         # captions left out (drawn transparent): a clip for voice-over
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


# --- the cache key ------------------------------------------------------------------------
def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def module_file(name: str, root: Path = REPO) -> Path | None:
    """The project file that `import name` loads from root (a module or a package's __init__), else None."""
    parts = name.split(".")
    if not all(p.isidentifier() for p in parts):
        return None
    base = root.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def module_name(path: Path, root: Path = REPO) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(path: Path, root: Path = REPO) -> set[str]:
    """Every module name that the file could import, wherever the import statement is.

    A static walk of the whole syntax tree: module-level imports, imports inside functions, methods, `if` and
    `try` blocks (whether or not that code runs), relative imports, `from package import submodule`, and
    `importlib.import_module("literal")` / `__import__("literal")`.
    """
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError, OSError):
        return set()   # the render's import of it fails, and that failure is reported
    here = module_name(path, root)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                parts = parts[:len(parts) - (node.level - 1)] if node.level > 1 else parts
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base:
                names.add(base)
            names.update(f"{base}.{a.name}" if base else a.name for a in node.names if a.name != "*")
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("import_module", "__import__"):
                names.add(node.args[0].value)
    return names


def declared_data(path: Path, root: Path = REPO) -> list[Path]:
    """The data files a module declares it reads: a module-level `DATA_FILES = ("docs/x.json", ...)` of string
    literals, paths relative to the project's root (a recorded benchmark, the lab's snapshots)."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError, OSError):
        return []
    found = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "DATA_FILES"
                                                for t in node.targets) \
                and isinstance(node.value, (ast.Tuple, ast.List)):
            found += [root / e.value for e in node.value.elts
                      if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return found


def source_closure(entries: list[Path], root: Path = REPO) -> list[Path]:
    """The project files reachable from `entries` through imports at any depth (see imported_names), with the
    __init__.py of every package on the way, and the data files each of them declares (declared_data). Names
    that do not resolve to a file under root (numpy, manim, the standard library) are not followed."""
    seen: set[Path] = set()
    todo = [p.resolve() for p in entries]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        if path.suffix == ".py":
            todo += [d.resolve() for d in declared_data(path, root) if d.is_file()]
        else:
            continue
        for name in imported_names(path, root):
            parts = name.split(".")
            for i in range(1, len(parts) + 1):   # importing a.b.c runs a/__init__.py and a/b/__init__.py too
                found = module_file(".".join(parts[:i]), root)
                if found is not None and found.resolve() not in seen:
                    todo.append(found.resolve())
    return sorted(seen)


def digests(paths, root: Path = REPO) -> dict[str, str]:
    out = {}
    for p in sorted(paths):
        try:
            out[p.relative_to(root).as_posix()] = file_digest(p)
        except OSError:   # gone since the walk: the render's import of it fails, and that failure is reported
            pass
    return out


def loaded_project_files(root: Path = REPO) -> set[Path]:
    """The project's .py files in this process's sys.modules (the installed packages in .venv excluded)."""
    files = set()
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if not path or not path.endswith(".py") or not os.path.isabs(path):
            continue   # a relative __file__ is no file of ours (torch.classes says "_classes.py")
        path = Path(path).resolve()
        if not path.is_file():
            continue
        try:
            rel = path.relative_to(root)
        except ValueError:
            continue
        if not any(part.startswith(".") or part == "site-packages" for part in rel.parts):
            files.add(path)
    return files


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


# The Python distributions whose code draws, encodes or computes what a clip shows.
RENDER_DISTRIBUTIONS = ("manim", "numpy", "scipy", "pycairo", "ManimPango", "av", "pillow", "tokenizers",
                        "safetensors")
# The Debian packages of scripts/setup.sh that end up in the pixels: LaTeX and dvisvgm (formulas and numbers),
# the CJK fonts (Chinese text), cairo and pango (drawing and text layout). Not the compilers (build-essential,
# python3-dev, pkg-config). tests/test_render.py keeps this list in step with setup.sh.
RENDER_DEBIAN_PACKAGES = ("texlive-latex-base", "texlive-latex-extra", "texlive-fonts-recommended", "dvisvgm",
                          "fonts-noto-cjk", "libcairo2-dev", "libpango1.0-dev")
NO_DPKG_TOOLS = ("latex", "dvisvgm")   # without dpkg: the first line of each one's --version


def debian_versions(packages=RENDER_DEBIAN_PACKAGES) -> dict:
    """{package: version, or "not installed"} from dpkg-query; without dpkg, the LaTeX tools' own versions."""
    try:
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Package}\t${Status}\t${Version}\n", *packages],
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        tools = {}
        for tool in NO_DPKG_TOOLS:
            try:
                out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=30).stdout
                tools[tool] = (out.strip().splitlines() or ["unknown"])[0]
            except (OSError, subprocess.TimeoutExpired):
                tools[tool] = "not found"
        return {"dpkg": "absent", "tools": tools}
    versions = {p: "not installed" for p in packages}
    for line in r.stdout.splitlines():
        name, status, version = (line.split("\t") + ["", ""])[:3]
        if name in versions and status.endswith(" installed"):
            versions[name] = version
    return versions


def environment() -> dict:
    """Everything outside the project that a render's output depends on, as versions."""
    versions = {}
    for dist in RENDER_DISTRIBUTIONS:
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return {"python": platform.python_version(), "distributions": versions, "debian": debian_versions()}


def cache_key(job: Job, model: dict, env: dict) -> str:
    """Everything known before the render; the project's source files are checked separately, against the
    sha256 of each one that the manifest lists (see source_closure)."""
    parts = {"render": RENDER_VERSION, "model": model, "environment": env,
             "params": job.params, "quality": job.quality, "format": job.format,
             "transparent": job.transparent, "clean": job.clean, "section": job.section}
    return hashlib.sha256(canonical_json(parts).encode()).hexdigest()


def up_to_date(job: Job) -> bool:
    try:
        manifest = json.loads(job.manifest.read_text())
    except (OSError, ValueError):
        return False
    return (bool(manifest.get("cache_key")) and manifest.get("cache_key") == job.key and job.output.is_file()
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
    for key in ("transparent", "clean", "slides"):
        if key in lecture and not isinstance(lecture[key], bool):
            raise UsageError(f"{where}: lecture.{key} must be true or false")
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
                "clean": args.clean, "slides": args.slides, "jobs": args.jobs, "model": args.model}
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
    settings["clean"] = bool(settings["clean"])
    settings["slides"] = bool(settings["slides"])
    if settings["slides"] and settings["format"] != "mp4":
        raise UsageError(f"--slides needs --format mp4 (got {settings['format']})")
    if settings["transparent"] and settings["format"] not in TRANSPARENT_FORMATS:
        raise UsageError(f"--transparent needs --format {', '.join(TRANSPARENT_FORMATS)} "
                         f"(got {settings['format']}: it has no alpha channel)")
    if settings["jobs"] is not None and settings["jobs"] < 1:
        raise UsageError("--jobs must be at least 1")
    for job in jobs:
        job.quality, job.format, job.transparent = settings["quality"], settings["format"], settings["transparent"]
        job.clean = settings["clean"]
    return jobs, settings


def model_directory(settings: dict) -> Path:
    from model import DEFAULT_DIR
    chosen = settings.get("model") or os.environ.get("GPT_LECTURE_MODEL") or DEFAULT_DIR
    return Path(chosen).resolve()


def load_model(model_dir: Path):
    from model import ModelError, NumpyGPT
    try:
        return NumpyGPT.load(model_dir)
    except ModelError as e:
        raise UsageError(f"model: {e}") from None


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


# --- running the renders ---------------------------------------------------------------------
def relative(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


@dataclass
class Chunk:
    """The work of one render process: a whole clip (part None), or one contiguous range of a clip's plays."""
    job: Job
    part: dict | None
    cost: float
    number: int = 0   # the part's place in its clip


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
    for job, log, reason in failed:
        print(f"failed: {job.name}: {reason} (log: {relative(log)})", file=sys.stderr)
    return EXIT_FAILED if failed else 0


SPLIT_AT_ENV = "GPT_LECTURE_SPLIT_AT"   # tests: the play where a live split starts its second part


def read_progress(work: Path) -> dict | None:
    """How far a followed part is (its progress.json), or None before its first play."""
    try:
        return json.loads((work / "progress.json").read_text())
    except (OSError, ValueError):
        return None


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


SPLIT_GAIN = 0.05   # a clip gets one more part only if that shortens the pool's estimated finish by 5 %


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


# --- one clip on several cores ----------------------------------------------------------------------
SPLIT_FORMATS = ("mp4", "mov", "webm")   # joined without re-encoding (a gif is re-encoded as a whole)
PLAY_OVERHEAD = 0.05   # cost of a play beyond its seconds of video, when no measured cost is known


def splittable(job: Job, media: Path) -> bool:
    """A whole clip in a format that joins without re-encoding, whose plays are known from an earlier render
    (see save_plan) or worth a planning pass before it starts (above preview quality, where drawing the frames
    dominates; at preview that pass would cost about what splitting saves). On the local cores a lone clip
    without a plan is counted while it renders instead (run(), split_live); this is the rule for a Dask cluster."""
    if job.section is not None or job.format not in SPLIT_FORMATS:
        return False
    return job.quality != "preview" or load_plan(media, job) is not None


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


def load_plan(media: Path, job: Job) -> list | None:
    try:
        plays = json.loads(plan_path(media, job).read_text())["plays"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    ok = isinstance(plays, list) and plays and all(isinstance(p, list) and len(p) in (3, 4) for p in plays)
    return plays if ok else None


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
    return timeline, [[*p, skipped.get(i)] for i, p in enumerate(plays)]


def join_movies(files: list[str], output: Path, quality: str, fmt: str, transparent: bool) -> None:
    """Join partial movie files in order without re-encoding, with manim's own join (the one a single-process
    render uses), so the packets are the same."""
    from types import SimpleNamespace

    from manim import config, tempconfig
    from manim.scene.scene_file_writer import SceneFileWriter
    with tempconfig({"quality": QUALITIES[quality][0], "verbosity": "WARNING", "progress_bar": "none"}):
        config.transparent = transparent
        config.format = fmt
        SceneFileWriter.combine_files(SimpleNamespace(partial_movie_directory=output.parent), files, output)


def hash_sources(job: Job) -> dict:
    """The job's sources and their sha256, taken now, before any render process of it starts."""
    hashed_at = time.time_ns()
    return {"sources": digests(source_closure([REPO / "render.py", REPO / job.spec.path])), "hashed_at_ns": hashed_at}


def job_spec(job: Job, work: Path, slot: int, media: Path, model_dir: Path, model: dict, env: dict,
             sources: dict, **extra) -> dict:
    """What a render process needs (it reads <work>/job.json); makes the empty work folder."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    return {"scene": job.spec.name, "params": job.params, "quality": job.quality, "format": job.format,
            "transparent": job.transparent, "clean": job.clean, "section": job.section, "output": str(job.output),
            "model_dir": str(model_dir), "model": model, "environment": env, **sources, "cache_key": job.key,
            "work": str(work), "slot_dir": str(media / ".cache" / f"slot-{slot}"), "repo": str(REPO),
            "plan_file": str(plan_path(media, job)), **extra}


def plan_path(media: Path, job: Job) -> Path:
    return media / ".cache" / "plans" / f"{job.name}.json"


def start_worker(spec: dict) -> ForkedWorker:
    work = Path(spec["work"])
    (work / "job.json").write_text(json.dumps(spec, ensure_ascii=False))
    return ForkedWorker(work / "job.json", work / "log.txt")


# Render processes are forked from one server process that has imported these libraries (multiprocessing's
# forkserver), so each render starts without paying their import (about 0.7 s of CPU: manim alone is 0.6 s).
# Only third-party libraries: the project's own modules (scenes/, model/, render.py) are imported afresh by
# every render process, so an edit made during a run is rendered, and hashed, as it is on disk.
PRELOAD = ("numpy", "scipy", "cairo", "manimpango", "av", "PIL.Image", "manim")
_forkserver = None


def render_processes():
    """multiprocessing's forkserver context, its server started (once) in REPO with PRELOAD imported: the same
    working folder, hence the same manim.cfg lookup, as a render process started in REPO."""
    global _forkserver
    if _forkserver is None:
        import multiprocessing
        from multiprocessing import forkserver
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(list(PRELOAD))
        here = os.getcwd()
        os.chdir(REPO)
        try:
            forkserver.ensure_running()
        finally:
            os.chdir(here)
        _forkserver = context
    return _forkserver


def end_render_processes() -> None:
    """Stop the forkserver, if one was started, and wait for it: no process is left behind, and the CPU time
    of the render processes (which the server reaped) counts to render.py's own children (getrusage), as when
    they were its children. Python's forkserver has no public stop (its _stop is the one its tests use);
    without it the server ends by itself when render.py exits."""
    global _forkserver
    if _forkserver is not None:
        from multiprocessing import forkserver
        stop = getattr(getattr(forkserver, "_forkserver", None), "_stop", None)
        if stop is not None:
            stop()
        _forkserver = None


def forked_render(job_file: str, log: str) -> None:
    """A render process's body: its output and errors to its log, its working folder REPO, then worker()."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    os.chdir(REPO)
    sys.exit(worker(Path(job_file)))


class ForkedWorker:
    """A render process forked from the server (render_processes), with the methods of subprocess.Popen that
    run() and stop() use; its returncode follows Popen's: the exit status, or minus the signal that ended it."""

    def __init__(self, job_file: Path, log: Path):
        self.process = render_processes().Process(target=forked_render, args=(str(job_file), str(log)))
        self.process.start()
        self.pid = self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.exitcode

    def poll(self) -> int | None:
        return self.process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self.process.join(timeout)
        if self.process.exitcode is None:
            raise subprocess.TimeoutExpired("render process", timeout)
        return self.process.exitcode

    def send_signal(self, sig: int) -> None:
        if self.process.exitcode is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


# --- where the render processes run: the local cores, or a Dask cluster --------------------------------
class LocalRunner:
    """Render processes on this machine, one per cache slot (see acquire_slots)."""
    follows = True   # a render process here reads what render.py writes into its work folder as it runs

    def __init__(self, media: Path):
        self.media, self.slots = media, []

    def capacity(self, n_jobs: int) -> int:
        return n_jobs

    def open(self, n: int) -> None:
        self.slots = acquire_slots(self.media, n) if n else []

    def free(self) -> bool:
        return bool(self.slots)

    def take(self) -> int:
        return self.slots.pop(0)

    def give_back(self, slot: int) -> None:
        self.slots.append(slot)

    def start(self, spec: dict) -> ForkedWorker:
        return start_worker(spec)


CONNECT_TIMEOUT = 10   # seconds to reach a Dask scheduler and find a worker there


def connect(address: str):
    """A Dask client of the scheduler at address, with at least one worker; else a UsageError (one line)."""
    import logging
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("--scheduler needs dask[distributed]: pip install 'dask[distributed]'") from None
    for name in ("distributed", "tornado", "asyncio"):   # their retries and tracebacks: we say it in one line
        logging.getLogger(name).setLevel(logging.CRITICAL)
    from distributed.comm.addressing import parse_address, parse_host_port
    try:   # a malformed address: said before a client exists (a half-made one hangs at exit)
        scheme, location = parse_address(address)
        if scheme in ("tcp", "tls"):
            parse_host_port(location)
    except Exception as e:  # noqa: BLE001
        detail = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise UsageError(f"--scheduler {address}: cannot connect to a Dask scheduler there ({detail})") from None
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except Exception as e:  # noqa: BLE001 - OSError, TimeoutError, ValueError (a malformed address), ...
        detail = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise UsageError(f"--scheduler {address}: cannot connect to a Dask scheduler there ({detail})") from None
    try:
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
    except Exception:  # noqa: BLE001
        client.close()
        raise UsageError(f"--scheduler {address}: the scheduler has no workers "
                         f"(none joined within {CONNECT_TIMEOUT} s)") from None
    return client


class DaskRunner:
    """Render processes on the workers of a Dask cluster: each chunk is a task (remote_render) that runs
    `render.py --worker` in the worker's copy of the project and returns the files it made, as bytes."""
    follows = False   # a task reads nothing from render.py once it runs

    def __init__(self, client):
        import cloudpickle
        module = sys.modules[remote_render.__module__]
        if module.__name__ != "__main__":   # sent by value: the workers need not import render.py
            cloudpickle.register_pickle_by_value(module)
        self.client, self.count, self.limit, self.busy = client, 0, 1, 0

    def capacity(self, n_jobs: int) -> int:
        return max(1, sum(self.client.nthreads().values()))

    def open(self, n: int) -> None:
        self.limit = max(1, n)

    def free(self) -> bool:
        return self.busy < self.limit

    def take(self) -> int:
        self.count += 1
        self.busy += 1
        return self.count

    def give_back(self, slot: int) -> None:
        self.busy -= 1

    def start(self, spec: dict) -> DaskTask:
        return DaskTask(self.client, spec)


class DaskTask:
    """A render on a Dask worker, with the methods of a subprocess.Popen that run() uses. When it ends, its
    files land in its local work folder as a local render would leave them; a whole clip is installed here."""

    def __init__(self, client, spec: dict):
        self.spec, self.work, self.returncode = spec, Path(spec["work"]), None
        (self.work / "log.txt").write_text("(the render runs on a Dask worker; its log arrives when it ends)\n")
        self.future = client.submit(remote_render, spec, str(REPO), pure=False)

    def poll(self) -> int | None:
        if self.returncode is None and self.future.done():
            self.returncode = self.collect()
        return self.returncode

    def collect(self) -> int:
        try:
            result = self.future.result()
        except Exception as e:  # noqa: BLE001 - the worker died, or the task could not run
            detail = (str(e).strip().splitlines() or [""])[0]
            (self.work / "error.txt").write_text(f"the Dask task failed: {type(e).__name__}: {detail}\n")
            return EXIT_FAILED
        for rel, data in result["files"].items():
            path = (self.work / rel).resolve()
            if self.work.resolve() not in path.parents:
                continue   # only files inside the work folder
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        if result["returncode"] == 0 and (self.work / "result.json").is_file():   # a whole clip: install it
            try:
                r = json.loads((self.work / "result.json").read_text())
                install(self.spec, self.work / r["produced"], r["record"], r["seconds"], r["sources"], r["changed"])
                save_plan(self.spec, r["plays"])
            except Exception as e:  # noqa: BLE001
                (self.work / "error.txt").write_text(f"installing the clip failed: {type(e).__name__}: {e}\n")
                return EXIT_FAILED
        return result["returncode"]

    def send_signal(self, sig) -> None:
        self.future.cancel()
        if self.returncode is None:
            self.returncode = EXIT_INTERRUPTED

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("dask task", timeout)
            time.sleep(0.05)
        return self.returncode


def remote_render(spec: dict, client_repo: str) -> dict:
    """Run on a Dask worker: render one chunk with the worker's copy of the project (GPT_LECTURE_REPO, else the
    same path as on the machine that runs render.py) and its Python, in a temporary folder, and return the files
    the parent needs, as bytes: {"returncode", "files": {path inside the work folder: bytes}}.

    Self-contained (it is sent to the worker by value). The render process checks that the worker's
    environment and model are the ones in the cache key, and that its sources have the hashes render.py took;
    LaTeX and text caches are kept per slot under GPT_LECTURE_DASK_CACHE (default <project>/media/.cache),
    a slot locked while a render uses it."""
    import fcntl
    import json
    import os
    import shutil
    import socket
    import subprocess
    import sys
    import tempfile
    from pathlib import Path
    repo = Path(os.environ.get("GPT_LECTURE_REPO") or client_repo)
    if not (repo / "render.py").is_file():
        message = (f"RuntimeError: no project at {repo} on the Dask worker {socket.gethostname()} "
                   f"(set GPT_LECTURE_REPO there)\n")
        return {"returncode": 1, "files": {"error.txt": message.encode()}}
    cache = Path(os.environ.get("GPT_LECTURE_DASK_CACHE") or repo / "media" / ".cache")
    i = 0
    while True:   # a cache slot no other render on this machine holds
        slot = cache / f"dask-slot-{i}"
        slot.mkdir(parents=True, exist_ok=True)
        lock = open(slot / ".lock", "w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError:
            lock.close()
            i += 1
    work = Path(tempfile.mkdtemp(prefix="gpt-lecture-"))
    try:
        model_dir = Path(spec["model_dir"])
        try:   # the model inside the project: the worker's copy of it
            model_dir = repo / model_dir.relative_to(client_repo)
        except ValueError:
            pass
        job = {**spec, "work": str(work), "slot_dir": str(slot), "repo": str(repo), "model_dir": str(model_dir),
               "plan_file": None, "deliver": True}
        (work / "job.json").write_text(json.dumps(job, ensure_ascii=False))
        with open(work / "log.txt", "w") as log:
            returncode = subprocess.run([sys.executable, str(repo / "render.py"), "--worker", str(work / "job.json")],
                                        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        cwd=repo).returncode
        names = ["log.txt", "error.txt", "stale.txt", "plan.json", "part.json", "result.json"]
        for name, key in (("part.json", "files"), ("result.json", "produced")):
            if (work / name).is_file():
                listed = json.loads((work / name).read_text())[key]
                names += listed if isinstance(listed, list) else [listed]
        return {"returncode": returncode,
                "files": {name: (work / name).read_bytes() for name in names if (work / name).is_file()}}
    finally:
        shutil.rmtree(work, ignore_errors=True)
        lock.close()


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


# --- one render, in its own process -------------------------------------------------------------
def worker(job_file: Path) -> int:
    """Render one job into its work folder, then move the result into place atomically."""
    PROCESS_STARTED[0] = time.perf_counter()
    job = json.loads(job_file.read_text())
    work = Path(job["work"])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(EXIT_INTERRUPTED))
    try:
        started = time.monotonic()
        if job.get("deliver"):   # on a Dask worker: the same environment and model as the cache key says
            check_remote(job)
        produced, scene, plays = render_scene(job, work)
        if job.get("plan"):
            write_json(work / "plan.json", {"plays": plays, "reached": scene.reached})
            return 0
        sources, changed = sources_after_render(job, Path(job["repo"]))
        if job.get("part"):
            last = job["part"]["upto"] < 0 and scene.part_limit is None
            files = [str(f) for f in scene.renderer.file_writer.partial_movie_files if f is not None]
            if job.get("deliver"):   # sent back as bytes: named inside the work folder
                files = [os.path.relpath(f, work) for f in files]
            write_json(work / "part.json", {
                "files": files,
                "plays": plays, "sources": sources, "changed": changed,
                "sections": [[sec.name, len(sec.partial_movie_files)] for sec in scene.renderer.file_writer.sections],
                "limit": scene.part_limit, "record": manifest_record(job, scene) if last else None})
            return 0
        if changed:
            (work / "stale.txt").write_text(", ".join(changed) + "\n")
        if job.get("deliver"):   # the parent installs it, from the bytes of these files
            write_json(work / "result.json", {
                "produced": os.path.relpath(produced, work), "record": manifest_record(job, scene),
                "seconds": time.monotonic() - started, "sources": sources, "changed": changed, "plays": plays})
            return 0
        install(job, produced, manifest_record(job, scene), time.monotonic() - started, sources, changed)
        save_plan(job, plays)
        return 0
    except BaseException as e:  # noqa: BLE001 - every failure becomes one line for the parent
        if isinstance(e, SystemExit) and e.code == EXIT_INTERRUPTED:
            raise
        traceback.print_exc()
        message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        (work / "error.txt").write_text(f"{type(e).__name__}: {message}\n")
        return EXIT_FAILED


def check_remote(job: dict) -> None:
    """A render on a Dask worker must draw what this machine would: the versions in the cache key and the
    same model (its project's sources are checked after the render, as everywhere)."""
    here = environment()
    if here != job["environment"]:
        theirs = job["environment"]
        diff = [f"python {here['python']} (render.py: {theirs['python']})"] if here["python"] != theirs["python"] else []
        for group in ("distributions", "debian"):
            for name, version in here.get(group, {}).items():
                if theirs.get(group, {}).get(name) != version:
                    diff.append(f"{name} {version} (render.py: {theirs.get(group, {}).get(name)})")
        raise RuntimeError(f"this worker's environment differs from render.py's: {', '.join(diff) or 'its layout'}")
    if model_digest(Path(job["model_dir"])) != job["model"]:
        raise RuntimeError(f"this worker's model at {job['model_dir']} is not the one render.py keys the cache with")


# Partial movies encoded while the scene draws the next animations (ManimCE's max_inflight_encoders). Its default,
# 1, makes the scene wait at the end of every animation until its movie is encoded (17 % of a medium-quality
# render's wall time in benchmarks/profile_render.py); 4 saved 13 % of the wall time, but twice, on a loaded
# machine, one animation's frames of such a render differed from plain `manim render`'s (CI, and a helper's run;
# never reproduced on demand), so render.py encodes one partial movie at a time, as ManimCE does, until that is
# understood (docs/rendering.md). tests/test_render.py compares every frame with plain `manim render`.
ENCODERS_IN_FLIGHT = 1

# libx264's preset for the partial movies, per quality (None: ManimCE's, medium). At 1080p60 medium took about
# half of a render's CPU time; superfast is the fastest preset whose frames are at least as close to the drawn
# frames as medium's (PSNR, mean and worst frame) with files at most twice the size, at 1080p60 and at 2160p60:
# benchmarks/encoder_presets.py, docs/encoder_presets.json and encoder_presets_4k.json, docs/rendering.md. Preview
# and medium keep ManimCE's encoding, byte for byte.
ENCODER_PRESETS = {"preview": None, "medium": None, "high": "superfast", "4k": "superfast"}

PLAN_FROM = 10**9   # a planning pass starts drawing at this play number: never
PROCESS_STARTED = [time.perf_counter()]   # when this render process began (set again by worker())


def write_json(path: Path, data) -> None:
    """Write by rename: a reader sees the old file or the whole new one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def render_scene(job: dict, work: Path):
    """Render the job's scene; returns the file manim wrote (None for a plan), the scene, and one entry per
    play (animation or wait) in order: [rendered, seconds of video, seconds of wall time]."""
    from scenes.lecture import ENV_CLEAN, ENV_MODEL, ENV_PARAMS, ENV_SECTION
    os.environ[ENV_CLEAN] = "1" if job.get("clean") else ""
    os.environ[ENV_MODEL] = job["model_dir"]
    os.environ[ENV_PARAMS] = json.dumps(job["params"])
    os.environ[ENV_SECTION] = job["section"] or ""
    import importlib

    from manim import config, tempconfig

    import cairo_paths
    import encoder
    why = cairo_paths.install()   # the same paths, one cairo call per shape (cairo_paths.py)
    if why:
        print(f"render.py: shapes drawn by ManimCE's own path loop: {why}", file=sys.stderr)
    encoder.install(ENCODER_PRESETS[job["quality"]])   # libx264's preset; a held frame converted once
    slot = Path(job["slot_dir"])
    still = job["format"] == "png"
    settings = {
        "quality": QUALITIES[job["quality"]][0], "media_dir": str(work / "media"),
        "video_dir": str(work / "video"), "images_dir": str(work / "images"),
        "partial_movie_dir": str(work / "partial"), "tex_dir": str(slot / "Tex"), "text_dir": str(slot / "texts"),
        "output_file": "render", "disable_caching": True, "progress_bar": "none", "verbosity": "WARNING",
        "write_to_movie": not still, "save_last_frame": still, "format": None if still else job["format"],
        "notify_outdated_version": False, "max_inflight_encoders": ENCODERS_IN_FLIGHT,
    }
    part = job.get("part")
    if part:   # one contiguous range of plays (animations and waits); construct() still runs whole
        settings.update({"from_animation_number": part["from"], "upto_animation_number": part["upto"]})
    if job.get("plan"):   # count the plays and their lengths, draw nothing (every play is before the first)
        settings.update({"from_animation_number": PLAN_FROM, "write_to_movie": False, "save_last_frame": False})
    spec = SCENES[job["scene"]]
    module = importlib.import_module(spec.module)
    with tempconfig(settings):
        config.transparent = job["transparent"]
        if not still:
            config.format = job["format"]
        scene = getattr(module, spec.cls)()
        plays = record_plays(scene, work if part and part.get("follow") else None)
        if part and part["upto"] >= 0:
            # This part stops at its last play (manim ends construct() early there), before the scene's
            # later beats: the scene's own check that every beat was played is kept by the last part.
            scene.tear_down = lambda: None
        scene.render()
        writer = scene.renderer.file_writer
        if job.get("plan"):
            return None, scene, plays
        if still:
            produced = Path(writer.image_file_path)
        elif job["format"] == "gif":
            produced = Path(writer.gif_file_path)
        else:
            produced = Path(writer.movie_file_path)
    if not part and not produced.is_file():
        raise RuntimeError(f"manim wrote no {job['format']} file")
    return produced, scene, plays


def record_plays(scene, follow: Path | None = None) -> list:
    """Wrap this scene's renderer.play (every animation and wait goes through it) to record, per play,
    whether it was rendered, the seconds of video it added, and the wall time it took; and, in
    scene.reached, the seconds since the render process started when each play ended.

    With follow (the work folder of a part whose end render.py sets while it draws, see run()), before each
    play: how far it is (progress.json: plays done, their seconds of video, the wall time since the first
    began), and the last play render.py asks it to draw (limit.json), if it has asked. The first limit read is
    taken as it is or, when this part has already drawn past it, at the last play drawn; the part stops after
    it (scene.part_limit) and says where in ack.json, before drawing on: the next part starts after it."""
    from manim import config
    renderer, plays, reached = scene.renderer, [], []
    play = renderer.play
    scene.reached, scene.part_limit, first = reached, None, []

    def follow_render_py() -> None:
        done = renderer.num_plays
        now = time.perf_counter()
        first[:] = first or [now]
        write_json(follow / "progress.json", {"plays": done, "video": renderer.time, "drawing": now - first[0]})
        if scene.part_limit is None and (follow / "limit.json").is_file():
            scene.part_limit = max(int(json.loads((follow / "limit.json").read_text())["limit"]), done - 1, 0)
            config.upto_animation_number = scene.part_limit   # manim ends construct() after it
            scene.tear_down = lambda: None   # the later beats are another part's
            write_json(follow / "ack.json", {"limit": scene.part_limit})

    def recorded(*args, **kwargs):
        if follow is not None:
            follow_render_py()
        video, wall = renderer.time, time.perf_counter()
        play(*args, **kwargs)
        end = time.perf_counter()
        plays.append([not renderer.skip_animations, renderer.time - video, end - wall])
        reached.append(end - PROCESS_STARTED[0])
    renderer.play = recorded
    return plays


MTIME_SLACK_NS = 1_000_000_000   # a file system may stamp a write up to a clock tick early: be safe by a second


def sources_after_render(job: dict, root: Path) -> tuple[dict, list[str]]:
    """The sources this render used, with their sha256, and those that changed while it ran.

    The parent hashed the import closure (source_closure) before it started this process, so every file in
    it was read by this process after it was hashed; if a file's sha256 is the same after the render, the
    render used that content. A project file this process imported that the static walk could not see
    (a computed module name) is added if it was last modified more than a second before the hash was taken,
    and counts as changed otherwise.
    """
    before = job["sources"]
    changed = []
    for rel, digest in before.items():
        try:
            if file_digest(root / rel) != digest:
                changed.append(rel)
        except OSError:
            changed.append(rel)
    sources = dict(before)
    for path in sorted(loaded_project_files(root)):
        rel = path.relative_to(root).as_posix()
        if rel in sources:
            continue
        try:
            if path.stat().st_mtime_ns >= job["hashed_at_ns"] - MTIME_SLACK_NS:
                changed.append(rel)
            else:
                sources[rel] = file_digest(path)
        except OSError:
            changed.append(rel)
    return dict(sorted(sources.items())), sorted(changed)


def caption_texts(scene, c: dict) -> dict:
    """A caption in every language the scene's strings have: the same key and values (the title card's note:
    the scene's title_note() in that language). The clip's own language is the text it showed."""
    from scenes.style import LANGUAGES
    texts = {}
    for lang in LANGUAGES:
        if lang == scene.lang:
            texts[lang] = c["text"]
        elif c["key"] == "title_note":
            own, scene.lang = scene.lang, lang
            try:
                texts[lang] = scene.title_note()
            finally:
                scene.lang = own
        else:
            texts[lang] = scene.strings(c["key"], lang, **c.get("values", {}))
    return texts


def scene_captions(scene) -> list[dict]:
    """Every narration line of the clip, in the clip's own time: {"beat", "key", "start", "end", "text", "texts"}
    from when it is fully shown to when it starts to leave (the scene's clock, LectureScene.captions), with
    "plays" (the number of plays done at those two moments, for split_timeline; install() drops them). A
    one-beat clip keeps the lines on screen during its beat, cut to it and counted from its start; "texts" has
    the line in every language (the clip's own one is "text")."""
    end = float(scene.renderer.time)
    start = scene.beat_starts[scene.only_section] if scene.only_section is not None else 0.0
    out = []
    for c in scene.captions:
        shown = max(c["shown"], start)
        left = min(c["left"] if c["left"] is not None else end, end)
        if left - shown <= 1e-9:
            continue
        out.append({"beat": c["beat"], "key": c["key"], "start": round(shown - start, 3),
                    "end": round(left - start, 3), "text": c["text"], "texts": caption_texts(scene, c),
                    "plays": [c["shown_play"], c["left_play"] if c["left_play"] is not None
                              else scene.renderer.num_plays]})
    return out


def manifest_record(job: dict, scene) -> dict:
    """The manifest's fields that come from the rendered scene."""
    import encoder
    from model import to_jsonable
    from scenes.style import LANGUAGES
    quality = QUALITIES[job["quality"]]
    model_dir = Path(job["model_dir"])
    try:
        model_dir_shown = str(model_dir.relative_to(Path(job["repo"])))
    except ValueError:
        model_dir_shown = str(model_dir)
    return {
        "scene": job["scene"], "class": SCENES[job["scene"]].cls,
        "titles": {lang: scene.strings("title", lang) for lang in LANGUAGES},
        "beat_titles": {lang: {name: scene.chapter_names[lang][name] for name in scene.section_names} for lang in LANGUAGES},
        "params": to_jsonable(scene.params),
        "output": Path(job["output"]).name, "quality": job["quality"], "resolution": [quality[1], quality[2]],
        "fps": quality[3], "format": job["format"], "transparent": job["transparent"],
        "clean": bool(job.get("clean")), "section": job["section"],
        "sections": scene.section_names,
        "timeline": scene.timeline() if job["format"] != "png" else [],
        "captions": scene_captions(scene) if job["format"] != "png" else [],
        "encoder": encoder.used() if job["format"] != "png" else {},   # this process's partial movies
        "model": {"dir": model_dir_shown, **job["model"], "config": scene.gpt.config.as_dict()},
        "manim_version": job["environment"]["distributions"]["manim"], "environment": job["environment"],
        "cache_key": job["cache_key"],
        "sources": {},
        "render_seconds": None,
        "values": to_jsonable(scene.values),
    }


def install(job: dict, produced: Path, record: dict, seconds: float, sources: dict, changed=()) -> None:
    """Old manifest out, new clip in (one rename), new manifest in (one rename): never half-written.

    A render whose sources changed while it ran gets a manifest with no cache_key and no sources, and the
    changed files under changed_during_render: its numbers are recorded, but it claims no version of the code,
    so the next run renders it again."""
    output = Path(job["output"])
    manifest = manifest_path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    manifest.unlink(missing_ok=True)
    os.replace(produced, output)
    record = {**record, "cache_key": None if changed else job["cache_key"], "sources": {} if changed else sources,
              "render_seconds": round(seconds, 2),
              "captions": [{k: v for k, v in c.items() if k != "plays"} for c in record.get("captions", [])]}
    if changed:
        record["changed_during_render"] = list(changed)
    values = record.pop("values")   # last, as before: the long part
    write_json(manifest, {**record, "values": values})


def save_plan(job: dict, plays: list) -> None:
    """Remember the plays of this render (see split_ranges): a later render of the same variant, at any
    quality, splits by them without a planning pass. A stale plan only balances worse; it is never wrong."""
    plan = job.get("plan_file")
    if plan and plays and job["section"] is None and job["format"] != "png":
        Path(plan).parent.mkdir(parents=True, exist_ok=True)
        write_json(Path(plan), {"quality": job["quality"], "plays": plays})


# --- course packaging: tracks, the full lecture, the course page --------------------------------------
# course.py reads finished clips and manifests and changes no clip, so it is no source of a clip: it is loaded
# by this computed name, which the cache's import walk (imported_names) does not follow.
COURSE_MODULE = "course"
MOVIE_FORMATS = ("mp4", "webm", "mov")
LECTURE_FORMATS = ("mp4",)   # joined with container chapters


def lang_variants(job: Job, gpt, media: Path) -> dict[str, Path]:
    """The outputs of this job's scene in every language it has (lang set, the rest as the job asks)."""
    lang_param = next((p for p in job.spec.params if p.name == "lang"), None)
    if lang_param is None:
        return {job.params.get("lang", "en"): job.output}
    out = {}
    for lang in lang_param.kind.options:
        other = replace(job, typed={**job.typed, "lang": lang},
                        text={k: v for k, v in job.text.items() if k not in ("lang", "--lang")})
        other.params = other.spec.resolve(other.typed, other.text, model=gpt, where=job.where)
        other.name = variant_name(other)
        out[lang] = output_path(media, other)
    return out


def package(args, jobs: list[Job], settings: dict, media: Path, model_dir: Path) -> int:
    """After the renders: every movie clip's caption and chapter tracks; for a whole recipe (--config, no scene
    named) also the full lecture (mp4), its tracks, the slide deck and the course page. Each of these is made on its
    own: one that cannot be made is one line on stderr ("render.py: packaging failed: ...") and the others are
    still written; the run then exits 1."""
    import importlib
    if settings["format"] not in MOVIE_FORMATS:
        return 0
    course = importlib.import_module(COURSE_MODULE)
    failed: list[str] = []

    def attempt(make) -> bool:
        try:
            make()
            return True
        except Exception as e:  # noqa: BLE001 - an artifact that cannot be made: one line, the others go on
            detail = (str(e).strip().splitlines() or [type(e).__name__])[0]
            what = "" if isinstance(e, course.PackagingError) else f"{type(e).__name__}: "
            line = f"{what}{detail}"
            if line not in failed:
                failed.append(line)
                print(f"render.py: packaging failed: {line}", file=sys.stderr, flush=True)
            return False

    def deck(clips: list[Path], dest: Path, lang: str) -> None:
        n = course.build_deck(clips, dest, lang, media / ".cache" / "slides" / settings["quality"])
        print(f"slides: {n} -> {relative(dest)}", flush=True)

    for job in jobs:
        attempt(lambda: course.write_tracks(job.output))
    if not args.config or args.scenes:
        if settings["slides"]:
            for job in jobs:
                attempt(lambda: deck([job.output], job.output.with_name(f"{job.output.stem}.slides.html"),
                                     job.params.get("lang", "en")))
        return EXIT_FAILED if failed else 0
    quality_dir = media / settings["quality"]
    lang = jobs[0].params.get("lang", "en")
    clips = [job.output for job in jobs]
    if settings["format"] in LECTURE_FORMATS:
        suffix = "".join(f"-{part}" for part, on in (("lang-zh", lang == "zh"),
                                                      ("transparent", settings["transparent"]),
                                                      ("clean", settings["clean"])) if on)
        lecture = quality_dir / f"{args.config.stem}{suffix}.{settings['format']}"

        def join() -> None:
            status, record = course.build_lecture(clips, lecture, lang)
            print(f"lecture: {status} ({len(jobs)} clips, {record['duration']:.1f} s) -> {relative(lecture)}",
                  flush=True)
        if attempt(join):
            attempt(lambda: course.write_tracks(lecture))
        if settings["slides"]:
            attempt(lambda: deck(clips, lecture.with_name(f"{lecture.stem}.slides.html"), lang))
    attempt(lambda: course_page(course, jobs, settings, media, model_dir, lang))
    return EXIT_FAILED if failed else 0


def course_page(course, jobs: list[Job], settings: dict, media: Path, model_dir: Path, lang: str) -> None:
    """The offline course page: every clip of the recipe in every language that is rendered and current."""
    lessons, gpt = [], load_model(model_dir)
    for job in jobs:
        found = {}
        for l, p in lang_variants(job, gpt, media).items():
            if l == lang:
                found[l] = job.output
            elif p.is_file() and manifest_path(p).is_file() and p.suffix == job.output.suffix:
                if sources_unchanged(json.loads(manifest_path(p).read_text()).get("sources") or {}):
                    found[l] = p
                else:   # rendered by older code (its manifest may lack what the page shows): not on the page
                    print(f"course page: {relative(p)} left out: its code has changed since it was rendered "
                          f"(render the recipe with --lang {l})", flush=True)
        found.setdefault(lang, job.output)
        lessons.append(found)
    index = course.build_course(lessons, media / settings["quality"] / ("course-clean" if settings["clean"]
                                                                         else "course"), lang, page_colours)
    print(f"course page: {relative(index)}", flush=True)


def page_colours() -> dict:
    """The course page's colours, from the scenes' own (scenes/style.py, the visual language)."""
    from manim import ManimColor

    from scenes import style
    hexa = lambda c: ManimColor(c).to_hex()   # noqa: E731
    return {"background": hexa(style.BACKGROUND), "text": hexa(style.TEXT), "muted": hexa(style.MUTED),
            "accent": hexa(style.POSITION), "focus": hexa(style.PROB)}


# --- list ---------------------------------------------------------------------------------------
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


def writable(media: Path) -> None:
    """The output root exists (made if need be) and files can be written in it; else one line, exit 2."""
    import tempfile
    try:
        media.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=media, prefix=".write-test-"):
            pass
    except OSError as e:
        raise UsageError(f"--media {media}: cannot write there ({e.strerror or type(e).__name__})") from None


def stop_as_interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = build_parser().parse_args(argv)
        if args.worker:
            return worker(args.worker)
        if args.scenes[:1] == ["list"]:
            if len(args.scenes) > 1:
                raise UsageError("`list` takes no scene names")
            chosen = args.model
            if chosen is None and args.config:   # the recipe's model, as a render of that recipe would use
                lecture, _ = read_recipe(args.config)
                chosen = args.config.parent / lecture["model"] if "model" in lecture else None
            model_dir = model_directory({"model": chosen})
            gpt = load_model(model_dir)
            try:
                list_scenes(gpt, model_dir)
                sys.stdout.flush()
            except BrokenPipeError:
                # The reader stopped early (`render.py list | head`): nothing is wrong, so nothing is printed.
                # Point stdout at /dev/null so the flush at exit cannot fail again; exit as a tool killed by
                # SIGPIPE would (128 + 13).
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                return EXIT_BROKEN_PIPE
            return 0
        # A stop from outside (a cancelled CI job, `kill`) ends the run as Ctrl-C does: render processes stopped,
        # temporary files removed, finished outputs intact, exit 130.
        signal.signal(signal.SIGTERM, stop_as_interrupt)
        jobs, settings = plan(args)
        if not jobs:
            raise UsageError("nothing to render: no scene in the recipe matches")
        media = args.media.resolve()
        if not args.dry_run:
            writable(media)
        model_dir = model_directory(settings)
        resolve(jobs, model_dir, media)
        try:
            model = model_digest(model_dir)
        except OSError as e:
            raise UsageError(f"model: cannot read {e.filename}") from None
        env = environment()
        for job in jobs:
            job.key = cache_key(job, model, env)
        n_jobs = settings["jobs"] or os.cpu_count() or 1
        client = connect(args.scheduler) if args.scheduler and not args.dry_run else None
        try:
            status = run(jobs, n_jobs, media, model_dir, model, env, force=args.force, dry_run=args.dry_run,
                         client=client)
            if status == 0 and not args.dry_run:
                status = package(args, jobs, settings, media, model_dir)
            return status
        finally:
            end_render_processes()
            if client is not None:
                client.close()
    except (UsageError, ParamError) as e:
        print(f"render.py: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
