"""The narration script a lecturer records from: every line of every scene of a recipe, in order, with its stable
id, its caption, what the voice says and how long the synthetic voice takes.

    render.py narration export --config lecture.toml --lang zh

writes `narration/<lang>/script.csv` (columns scene, line_id, caption, spoken, seconds) and a printable
`narration/<lang>/script.md` beside it. Recordings go to `narration/<lang>/<scene>/<line_id>.wav` (or .flac, .mp3);
the next render uses them (speech/narrator.py). This module only writes files from lines it is given.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from speech.audio import write_text_atomic

COLUMNS = ("scene", "line_id", "caption", "spoken", "seconds")
HEADINGS = {"en": ("Narration script", "line", "on screen", "said", "seconds"),
            "zh": ("旁白稿", "行", "屏幕上", "朗读", "秒")}


def csv_text(rows: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: row[k] for k in COLUMNS})
    return out.getvalue()


def markdown_text(rows: list[dict], lang: str, titles: dict[str, str]) -> str:
    """A page to print and read from: one section per scene, one row per line."""
    title, line, shown, said, seconds = HEADINGS[lang]
    total = sum(r["seconds"] for r in rows)
    parts = [f"# {title} ({lang})", "", f"{len(rows)} lines, {total / 60:.1f} min.", ""]
    scene = None
    for r in rows:
        if r["scene"] != scene:
            scene = r["scene"]
            parts += ["", f"## {titles.get(scene, scene)} (`{scene}`)", "",
                      f"| {line} | {shown} | {said} | {seconds} |", "|---|---|---|---:|"]
        cell = lambda s: str(s).replace("|", "\\|").replace("\n", "<br>")   # noqa: E731
        parts.append(f"| `{r['line_id']}` | {cell(r['caption'])} | {cell(r['spoken'])} | {r['seconds']:.1f} |")
    return "\n".join(parts) + "\n"


def write_script(folder: Path, lang: str, rows: list[dict], titles: dict[str, str]) -> tuple[Path, Path]:
    """narration/<lang>/script.csv and script.md; both written to a temporary name and renamed."""
    base = Path(folder) / lang
    csv_path, md_path = base / "script.csv", base / "script.md"
    write_text_atomic(csv_path, csv_text(rows))
    write_text_atomic(md_path, markdown_text(rows, lang, titles))
    return csv_path, md_path


def read_script(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return [{**row, "seconds": float(row["seconds"])} for row in csv.DictReader(f)]
