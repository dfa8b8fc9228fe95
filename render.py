#!/usr/bin/env python3
"""Render the lecture's scenes from their parameters: cached, parallel, with a manifest of every number.

    python render.py list
    python render.py softmax_temperature --lang zh --quality preview
    python render.py softmax_temperature --set temperatures=1,3,0 --format png --section t0
    python render.py --config lecture.toml

Outputs go to media/<quality>/<scene>[-<variant>].<ext>, each with its manifest
<scene>[-<variant>].<ext>.json beside it. A bad input is one line on stderr and exit 2; a failed render is reported
at the end with exit 1; Ctrl-C leaves every finished output intact (exit 130).

The command line only: the work is done by the package pipeline/ (docs/rendering.md), in this order:
recipe (jobs) -> cache (up to date?) -> plan (chunks) -> run and runners (render processes) -> worker (a render)
-> manifest -> packaging. A render process runs this file too (`render.py --worker`, or forked from it).
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO))

from pipeline import narration  # noqa: E402
from pipeline.cache import cache_key, environment, model_digest  # noqa: E402
from pipeline.recipe import (EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, EXIT_USAGE, UsageError, build_parser,  # noqa: E402
                             list_scenes, load_model, model_directory, plan, read_recipe, resolve, writable)
from pipeline.run import run  # noqa: E402
from pipeline.runners import connect, end_render_processes  # noqa: E402
from pipeline.worker import worker  # noqa: E402
from scenes.params import ParamError  # noqa: E402

# Course packaging (tracks, the full lecture, the slide deck, the course page) reads finished clips and manifests
# and changes no clip, so it is no source of a clip: it is loaded by this computed name, which the cache's import
# walk (pipeline.cache.imported_names) does not follow. Nothing else here imports it.
PACKAGING_MODULE = "pipeline.packaging"


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
        exporting = args.scenes[:2] == ["narration", "export"]
        if exporting:   # `render.py narration export [SCENE...] --config ... --lang ...`: the script, no render
            args.scenes = args.scenes[2:]
        elif args.scenes[:1] == ["narration"]:
            raise UsageError("`narration` takes `export` (render.py narration export --config lecture.toml)")
        jobs, settings = plan(args)
        if not jobs:
            raise UsageError("nothing to render: no scene in the recipe matches")
        media = args.media.resolve()
        if not args.dry_run:
            writable(media)
        model_dir = model_directory(settings)
        resolve(jobs, model_dir, media)
        narration.prepare(jobs, settings)
        if exporting:
            return narration.export(jobs, settings, model_dir, dry_run=args.dry_run)
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
            if not args.dry_run:
                narration.report(jobs)
            if status == 0 and not args.dry_run:
                status = importlib.import_module(PACKAGING_MODULE).package(args, jobs, settings, media, model_dir)
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
