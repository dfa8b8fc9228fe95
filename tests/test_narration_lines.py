"""Narration lines without a voice: stable ids, which recordings are used, stale or unknown, and the script files."""

from __future__ import annotations

import csv

import pytest

from speech import narrator, script
from speech.narrator import NarrationError, Narrator, line_id


def test_a_line_id_is_its_key_occurrence_and_the_hash_of_its_words():
    a = line_id("summary", 1, "a model of words")
    assert a == f"summary-{narrator.text_hash('a model of words')}" and len(a.rsplit("-", 1)[1]) == 8
    assert line_id("summary", 1, "a model of words") == a                       # stable
    assert line_id("summary", 1, "a model of numbers") != a                     # the words changed
    assert line_id("stop", 2, "x").startswith("stop-2-")
    assert narrator.id_stem(line_id("stop", 2, "x")) == "stop-2"
    assert narrator.id_stem(a) == "summary"


def test_recordings_are_found_by_line_id_and_two_for_one_line_are_refused(tmp_path):
    folder = tmp_path / "zh" / "softmax_temperature"
    folder.mkdir(parents=True)
    for name in ("title_note-0123abcd.wav", "summary-89abcdef.flac", "notes.txt", ".hidden.wav"):
        (folder / name).write_bytes(b"x")
    found = narrator.recordings_of(folder)
    assert set(found) == {"title_note-0123abcd", "summary-89abcdef"}
    (folder / "summary-89abcdef.mp3").write_bytes(b"x")
    with pytest.raises(NarrationError, match="two recordings for line summary-89abcdef"):
        narrator.recordings_of(folder)


def test_unused_recordings_are_stale_when_their_line_was_said_in_other_words(tmp_path):
    folder = tmp_path / "en" / "s"
    folder.mkdir(parents=True)
    said = Narrator("s", "en", tmp_path / "cache")
    said.lines = [narrator.Line(line_id("title_note", 1, "new words"), "new words", 1.0, "voice", "", ""),
                  narrator.Line(line_id("summary", 1, "the end"), "the end", 1.0, "voice", "", "")]
    old = line_id("title_note", 1, "old words")
    for ident in (old, "nothing-0000aaaa", said.lines[1].line_id):
        (folder / f"{ident}.wav").write_bytes(b"x")
    said.recordings = narrator.recordings_of(folder)
    said.used_recordings = {said.lines[1].line_id}
    assert said.unused_recordings() == ([old], ["nothing-0000aaaa"])


def test_the_script_is_a_csv_with_the_columns_and_a_printable_page(tmp_path):
    rows = [{"scene": "next_token", "line_id": "title_note-01234567", "caption": "Every number,\nreal: \"GPT\"",
             "spoken": "Every number, real: GPT", "seconds": 2.5},
            {"scene": "summary", "line_id": "summary-89abcdef", "caption": "a | b", "spoken": "a b", "seconds": 1.25}]
    csv_path, md_path = script.write_script(tmp_path / "narration", "zh", rows, {"next_token": "下一个词"})
    assert csv_path == tmp_path / "narration" / "zh" / "script.csv"
    with open(csv_path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames) == script.COLUMNS
        back = list(reader)
    assert [r["caption"] for r in back] == [r["caption"] for r in rows]     # line breaks and quotes survive
    assert script.read_script(csv_path)[1]["seconds"] == 1.25
    page = md_path.read_text(encoding="utf-8")
    assert page.startswith("# 旁白稿 (zh)") and "## 下一个词 (`next_token`)" in page
    assert "a \\| b" in page and "Every number,<br>real" in page
    assert not list((tmp_path / "narration" / "zh").glob(".*"))              # no temporary file left
