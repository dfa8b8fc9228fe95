"""The render pipeline behind render.py, one module per job, in the order a run goes through them:

    recipe   the command line and the TOML recipe -> jobs (parameters checked, output names fixed)
    cache    the cache key: the project sources a clip depends on (the import walk), the environment, up_to_date
    plan     how the clips to render become chunks: split points, costs, the timeline of a clip in parts
    run      the scheduling loop: chunks onto runners, progress, a failed part, a clip's parts joined
    runners  where a render process runs: forked from the local forkserver, or a task on a Dask cluster
    worker   one render, inside its own process: the scene drawn by manim
    manifest what a render leaves beside its clip: the manifest, and the plan of its plays
    packaging (tracks, lecture_join, page, deck) the course made from finished clips, after the renders

encoder and cairo_paths are the render process's two patches to ManimCE (encoding, drawing).

This file imports nothing: importing any one module of the package runs only that module (and what it imports).
The packaging modules are no source of a clip: render.py loads pipeline.packaging by a computed name, which the
cache's import walk does not follow (see render.py and cache.source_closure); no module a render imports may
import them.
"""
