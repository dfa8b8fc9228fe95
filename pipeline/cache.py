"""The cache: whether a clip on disk is what a render would make now, and the key that says so.

A clip is up to date (up_to_date) when its manifest's cache key equals the job's (cache_key: RENDER_VERSION, the
parameters and render settings, the model's sha256, the versions of the environment) and every project source its
manifest lists still has the same sha256 (sources_unchanged). The sources are the import closure of render.py and
the scene's file (source_closure: a static walk of every import at any depth, pipeline.* included, relative
imports too, with the data files each module reads: those it declares in DATA_FILES and the words files it names
beside itself, `Words.beside(__file__)` or `Path(__file__).with_name("words.toml")`), hashed before a render starts
(hash_sources) and checked again when it ends (sources_after_render, in the render process). A reworded caption
re-renders every clip whose modules read that words file.

The packaging modules (pipeline.packaging and the modules it imports: tracks, lecture_join, page, deck) are
deliberately outside that closure: they read finished clips and never change one. render.py loads
pipeline.packaging by a computed name (PACKAGING_MODULE), which the walk does not follow.

The cache never renders and never schedules: it hashes, compares and answers.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

from model.digests import file_sha256
from scenes.params import canonical_json

from .recipe import REPO, Job

RENDER_VERSION = "6"   # bump when the pipeline changes what it writes, to invalidate every cache entry


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
    """The data files a module declares it reads: a module-level `DATA_FILES = ("docs/lab/x.json", ...)` of string
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


BESIDE_CALLS = ("with_suffix", "with_name")   # Path(__file__).with_suffix(".toml"), Path(__file__).with_name("x")


def files_beside(path: Path) -> list[Path]:
    """The files a module names beside itself, anywhere in it: `Words.beside(__file__)` (scenes/words.py: the same
    path with .toml for .py) and `Path(__file__).with_suffix("<literal>")` / `.with_name("<literal>")`; the words
    of a scene (scenes/x.toml, a package's words.toml), scenes/style.toml and scenes/prompts.toml this way."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError, OSError):
        return []

    def is_file(node) -> bool:
        return isinstance(node, ast.Name) and node.id == "__file__"

    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and len(node.args) == 1):
            continue
        arg, attr, target = node.args[0], node.func.attr, node.func.value
        if attr == "beside" and is_file(arg):
            found.append(path.with_suffix(".toml"))
        elif attr in BESIDE_CALLS and isinstance(arg, ast.Constant) and isinstance(arg.value, str) \
                and isinstance(target, ast.Call) and getattr(target.func, "id", "") == "Path" \
                and len(target.args) == 1 and is_file(target.args[0]):
            try:
                found.append(getattr(path, attr)(arg.value))
            except ValueError:     # not a suffix or a name: the module's own call fails, and that is reported
                pass
    return found


def source_closure(entries: list[Path], root: Path = REPO) -> list[Path]:
    """The project files reachable from `entries` through imports at any depth (see imported_names), with the
    __init__.py of every package on the way, the data files each of them declares (declared_data), the words file
    beside each (x.toml beside x.py: a reworded caption renders its clips again) and the files it reads beside
    itself (files_beside: a scene package's words.toml). Names
    that do not resolve to a file under root (numpy, manim, the standard library) are not followed."""
    seen: set[Path] = set()
    todo = [p.resolve() for p in entries]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        if path.suffix == ".py":
            todo += [d.resolve() for d in declared_data(path, root) + files_beside(path) if d.is_file()]
            words = path.with_suffix(".toml")     # the words beside a module (scenes/words.py): its captions
            if words.is_file():
                todo.append(words.resolve())
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
            out[p.relative_to(root).as_posix()] = file_sha256(p)
        except OSError:   # gone since the walk: the render's import of it fails, and that failure is reported
            pass
    return out


def hash_sources(job: Job) -> dict:
    """The job's sources and their sha256, taken now, before any render process of it starts."""
    hashed_at = time.time_ns()
    return {"sources": digests(source_closure([REPO / "render.py", REPO / job.spec.path])), "hashed_at_ns": hashed_at}


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
        return bool(sources) and all(file_sha256(root / path) == digest for path, digest in sources.items())
    except OSError:
        return False


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
            if file_sha256(root / rel) != digest:
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
                sources[rel] = file_sha256(path)
        except OSError:
            changed.append(rel)
    return dict(sorted(sources.items())), sorted(changed)


def model_digest(model_dir: Path) -> dict:
    """The model's files' sha256 (weights, config, tokenizer files), each hashed once and then remembered by its
    size and modification time (model.weights.checkpoint_digests): a big checkpoint is not re-read per clip."""
    from model.weights import WEIGHTS_FILE, checkpoint_digests
    files = checkpoint_digests(model_dir)
    out = {"weights_sha256": files.pop(WEIGHTS_FILE), "config_sha256": files.pop("config.json")}
    for name, digest in files.items():   # tokenizer.json, or vocab.json + merges.txt
        out[("tokenizer" if name == "tokenizer.json" else name.replace(".", "_")) + "_sha256"] = digest
    return out


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
             "transparent": job.transparent, "clean": job.clean, "section": job.section,
             "narration": job.narration.get("key")}
    return hashlib.sha256(canonical_json(parts).encode()).hexdigest()


def up_to_date(job: Job) -> bool:
    try:
        manifest = json.loads(job.manifest.read_text())
    except (OSError, ValueError):
        return False
    return (bool(manifest.get("cache_key")) and manifest.get("cache_key") == job.key and job.output.is_file()
            and sources_unchanged(manifest.get("sources") or {}))
