"""Where render processes run, behind one interface (capacity, open, free, take, give_back, start).

LocalRunner: render processes on this machine, forked from one server process that has imported the third-party
libraries (multiprocessing's forkserver, render_processes; ForkedWorker), one per cache slot of media/.cache
(acquire_slots). DaskRunner: tasks on the workers of a Dask cluster (connect), each running `render.py --worker` in
the worker's copy of the project (remote_render) and sending back its files (DaskTask).

A runner never schedules (run() decides what runs when) and never renders in this process: it starts a render
process for a job spec and says when it has ended, as subprocess.Popen does.
"""

from __future__ import annotations

import fcntl
import json
import logging
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from multiprocessing import forkserver
from pathlib import Path

from .manifest import install, save_plan
from .recipe import EXIT_FAILED, EXIT_INTERRUPTED, REPO, UsageError
from .worker import worker

# Render processes are forked from one server process that has imported these libraries (multiprocessing's
# forkserver), so each render starts without paying their import (about 0.7 s of CPU: manim alone is 0.6 s).
# Only third-party libraries: the project's own modules (render.py, pipeline/, scenes/, model/) are imported afresh by
# every render process, so an edit made during a run is rendered, and hashed, as it is on disk.
PRELOAD = ("numpy", "scipy", "cairo", "manimpango", "av", "PIL.Image", "manim")
_forkserver = None


def render_processes():
    """multiprocessing's forkserver context, its server started (once) in REPO with PRELOAD imported: the same
    working folder, hence the same manim.cfg lookup, as a render process started in REPO."""
    global _forkserver
    if _forkserver is None:
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


def start_worker(spec: dict) -> ForkedWorker:
    work = Path(spec["work"])
    (work / "job.json").write_text(json.dumps(spec, ensure_ascii=False))
    return ForkedWorker(work / "job.json", work / "log.txt")


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


_slot_locks: list = []


def acquire_slots(media: Path, n: int) -> list[int]:
    """n cache slots (LaTeX and text caches) that no other running render.py holds; kept until exit."""
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


CONNECT_TIMEOUT = 10   # seconds to reach a Dask scheduler and find a worker there


def connect(address: str):
    """A Dask client of the scheduler at address, with at least one worker; else a UsageError (one line)."""
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
        # remote_render is sent by value: the workers need not import this package
        cloudpickle.register_pickle_by_value(sys.modules[remote_render.__module__])
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
