"""Course packaging after the renders (package): every movie clip's caption and chapter tracks (pipeline.tracks);
for a whole recipe also the full lecture (pipeline.lecture_join), the slide deck (pipeline.deck), the offline
course page (pipeline.page, course_page) and its SCORM 1.2 package (pipeline.scorm). Each artifact is made on its
own: one that cannot be made is one line on stderr, and the others are still written.

Packaging reads finished clips and manifests and never changes a clip, so it is no source of any clip: render.py
loads this module by a computed name (render.PACKAGING_MODULE), which the cache's import walk
(cache.source_closure) does not follow. No module that a render imports may import this one or the four above.
Packaging never renders.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

from . import deck, lecture_join, page, scorm, tracks
from .cache import sources_unchanged
from .recipe import EXIT_FAILED, EXIT_USAGE, Job, load_model, manifest_path, output_path, relative, variant_name

MOVIE_FORMATS = ("mp4", "webm", "mov")
LECTURE_FORMATS = ("mp4",)   # joined with container chapters


def package(args, jobs: list[Job], settings: dict, media: Path, model_dir: Path) -> int:
    """After the renders: every movie clip's caption and chapter tracks; for a whole recipe (--config, no scene
    named) also the full lecture (mp4), its tracks, the slide deck, the course page and its SCORM package. Each of
    these is made on its own: one that cannot be made is one line on stderr ("render.py: packaging failed: ...")
    and the others are still written; the run then exits 1, or 2 where the SCORM package's input was bad (a clip
    missing, a stale manifest) or its file could not be written (scorm.ScormInputError)."""
    if settings["format"] not in MOVIE_FORMATS:
        return 0
    failed: list[str] = []
    bad_input: list[str] = []

    def attempt(make) -> bool:
        try:
            make()
            return True
        except Exception as e:  # noqa: BLE001 - an artifact that cannot be made: one line, the others go on
            detail = (str(e).strip().splitlines() or [type(e).__name__])[0]
            what = "" if isinstance(e, tracks.PackagingError) else f"{type(e).__name__}: "
            line = f"{what}{detail}"
            if isinstance(e, scorm.ScormInputError):
                bad_input.append(line)
            if line not in failed:
                failed.append(line)
                print(f"render.py: packaging failed: {line}", file=sys.stderr, flush=True)
            return False

    def slides(clips: list[Path], dest: Path, lang: str) -> None:
        n = deck.build_deck(clips, dest, lang, media / ".cache" / "slides" / settings["quality"])
        print(f"slides: {n} -> {relative(dest)}", flush=True)

    for job in jobs:
        attempt(lambda: tracks.write_tracks(job.output))
    if not args.config or args.scenes:
        if settings["slides"]:
            for job in jobs:
                attempt(lambda: slides([job.output], job.output.with_name(f"{job.output.stem}.slides.html"),
                                     job.params.get("lang", "en")))
        return EXIT_FAILED if failed else 0
    quality_dir = media / settings["quality"]
    lang = jobs[0].params.get("lang", "en")
    clips = [job.output for job in jobs]
    # <recipe>[-lang-zh][-transparent][-clean]: the lecture (.mp4), its deck (.slides.html), its package (.scorm.zip)
    suffix = "".join(f"-{part}" for part, on in (("lang-zh", lang == "zh"),
                                                  ("transparent", settings["transparent"]),
                                                  ("clean", settings["clean"])) if on)
    if settings["format"] in LECTURE_FORMATS:
        lecture = quality_dir / f"{args.config.stem}{suffix}.{settings['format']}"

        def join() -> None:
            status, record = lecture_join.build_lecture(clips, lecture, lang)
            print(f"lecture: {status} ({len(jobs)} clips, {record['duration']:.1f} s) -> {relative(lecture)}",
                  flush=True)
        if attempt(join):
            attempt(lambda: tracks.write_tracks(lecture))
        if settings["slides"]:
            attempt(lambda: slides(clips, lecture.with_name(f"{lecture.stem}.slides.html"), lang))
    made: dict = {}
    if attempt(lambda: made.update(course_page(jobs, settings, media, model_dir, lang))) and settings.get("scorm"):
        attempt(lambda: scorm_package(made, quality_dir / f"{args.config.stem}{suffix}.scorm.zip", lang,
                                      args.config.stem))
    return EXIT_USAGE if bad_input else EXIT_FAILED if failed else 0


def scorm_package(course: dict, dest: Path, lang: str, recipe_name: str) -> None:
    """The course page as a SCORM 1.2 package (pipeline.scorm), titled as the page is, in its language."""
    heading = page.UI[lang]["heading"]
    status, files, size = scorm.package(course["folder"], course["lessons"], dest, lang, heading,
                                        f"{heading} ({page.LANG_NAMES[lang]})",
                                        f"gpt-lecture-{scorm_identifier(recipe_name)}-{lang}")
    print(f"scorm: {status} ({files} files, {size / 1e6:.1f} MB) -> {relative(dest)}", flush=True)


def scorm_identifier(text: str) -> str:
    """A name as the part of an XML identifier (letters, digits, '-', '.', '_')."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "-._") else "_" for c in text) or "lecture"


def course_page(jobs: list[Job], settings: dict, media: Path, model_dir: Path, lang: str) -> dict:
    """The offline course page: every clip of the recipe in every language that is rendered and current. Returns
    its folder and its lessons (each scene's clips by language)."""
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
    index = page.build_course(lessons, media / settings["quality"] / ("course-clean" if settings["clean"]
                                                                         else "course"), lang, page_colours,
                                 model_dir)
    print(f"course page: {relative(index)}", flush=True)
    return {"folder": index.parent, "lessons": lessons}


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


def page_colours() -> dict:
    """The course page's colours, from the scenes' own (scenes/style.py, the visual language)."""
    from manim import ManimColor

    from scenes import style
    hexa = lambda c: ManimColor(c).to_hex()   # noqa: E731
    return {"background": hexa(style.BACKGROUND), "text": hexa(style.TEXT), "muted": hexa(style.MUTED),
            "accent": hexa(style.POSITION), "focus": hexa(style.PROB), "mask_accent": hexa(style.MASK_ACCENT),
            "cell_outline": hexa(style.CELL_OUTLINE)}
