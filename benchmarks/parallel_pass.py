"""Benchmark: one forward pass over a prompt's T tokens at once against T passes of one token each.

    .venv/bin/python benchmarks/parallel_pass.py                 # print the figures, for each language
    .venv/bin/python benchmarks/parallel_pass.py --write         # and record them in docs/lab/parallel_pass.json
    .venv/bin/python benchmarks/parallel_pass.py --lang zh --write   # one language's entry only

The summary scene shows the recorded figures (the seed's point on parallel processing: one matrix product covers
every position), the entry of its clip's language: the record holds one entry per language, each measured on that
language's prompt, the attention chapter's default (scenes/prompts.py lookback_prompt(lang)), which the summary
shows. Both sides run NumpyGPT.trace, interleaved run by run so that the machine's load falls on both alike; the
figures are medians.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from model import NumpyGPT  # noqa: E402
from scenes.prompts import lookback_prompt  # noqa: E402

RESULT = REPO / "docs" / "lab" / "parallel_pass.json"


def measure(runs: int, lang: str = "en") -> dict:
    gpt = NumpyGPT.load()
    prompt = lookback_prompt(lang)["prompt"]
    ids = gpt.encode(prompt)
    for _ in range(5):                    # warm caches and BLAS
        gpt.trace(ids)
        for i in ids:
            gpt.trace([i])
    at_once, one_by_one = [], []
    for _ in range(runs):
        t = time.perf_counter()
        gpt.trace(ids)
        at_once.append(time.perf_counter() - t)
        t = time.perf_counter()
        for i in ids:
            gpt.trace([i])
        one_by_one.append(time.perf_counter() - t)
    a, b = statistics.median(at_once), statistics.median(one_by_one)
    return {"lang": lang, "prompt": prompt, "tokens": len(ids), "runs": runs,
            "one_pass_ms": a * 1e3, "token_by_token_ms": b * 1e3, "ratio": b / a,
            "machine": {"cpus": os.cpu_count(), "load_1min": os.getloadavg()[0], "python": platform.python_version(),
                        "numpy": __import__("numpy").__version__},
            "method": "NumpyGPT.trace over all T tokens, against T traces of one token each; medians over "
                      "interleaved runs"}


LANGS = ("en", "zh")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--lang", choices=(*LANGS, "all"), default="all", help="the language(s) to measure")
    parser.add_argument("--write", action="store_true", help=f"record the figures in {RESULT.relative_to(REPO)} "
                                                             "(the entries of the languages measured)")
    args = parser.parse_args()
    if args.runs < 1:
        print("error: --runs must be at least 1", file=sys.stderr)
        return 2
    record = json.loads(RESULT.read_text()) if RESULT.exists() else {}
    for lang in LANGS if args.lang == "all" else (args.lang,):
        r = record[lang] = measure(args.runs, lang)
        print(f"{lang}: {r['tokens']} tokens: one pass {r['one_pass_ms']:.2f} ms, one token at a time "
              f"{r['token_by_token_ms']:.2f} ms ({r['ratio']:.1f}x), medians of {r['runs']} runs, "
              f"load {r['machine']['load_1min']:.1f} on {r['machine']['cpus']} cores")
    if args.write:
        tmp = RESULT.with_name(f".{RESULT.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({lang: record[lang] for lang in LANGS if lang in record}, indent=1,
                                  ensure_ascii=False) + "\n")
        os.replace(tmp, RESULT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
