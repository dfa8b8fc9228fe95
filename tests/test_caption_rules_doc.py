"""docs/caption-rules.md is generated from the rules the scenes declare (scripts/caption_rules.py), never written by
hand: the committed file is what the default lecture's manifests make of it, in both languages."""

from __future__ import annotations

import json
import subprocess
import sys


from helpers import ROOT, assert_clean_error
from scripts.caption_rules import markdown, rules_by_scene

DOC = ROOT / "docs" / "caption-rules.md"


def manifest(scene: str, lang: str, rules: dict) -> dict:
    return {"scene": scene, "params": {"lang": lang},
            "values": {"caption_rules": {name: {"rule": words, "inputs": {"x": 1.0}, "key": key}
                                         for name, (words, key) in rules.items()}}}


def test_each_rule_is_listed_once_in_its_words_with_the_key_each_language_chose():
    found = rules_by_scene([manifest("queries_keys", "zh", {"answer": ("best key is the word: answer_word", "answer_back")}),
                            manifest("queries_keys", "en", {"answer": ("best key is the word: answer_word", "answer_word"),
                                                            "lab": ("lower: lab_a; else lab_b", "lab_b")}),
                            manifest("next_token", "en", {})], order=["next_token", "queries_keys"])
    assert list(found) == ["next_token", "queries_keys"] and list(found["queries_keys"]) == ["answer", "lab"]
    text = markdown(found)
    assert text.count("best key is the word") == 1
    assert "- **`answer`** (en `answer_word`; zh `answer_back`): best key is the word: answer_word" in text
    assert "- **`lab`** (en `lab_b`): lower: lab_a; else lab_b" in text
    assert "## next_token\n\nNo caption rule" in text
    twice = markdown(rules_by_scene([manifest("softmax_temperature", "en", {"sweep t2": ("hotter if lower", "hotter"),
                                                                          "sweep t5": ("hotter if lower", "hotter")})],
                                    order=["softmax_temperature"]))
    assert "- **`sweep t2`** (en `hotter`), **`sweep t5`** (en `hotter`): hotter if lower" in twice


def run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "scripts/caption_rules.py", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_a_folder_without_manifests_is_one_line_and_nothing_written(tmp_path):
    out = tmp_path / "rules.md"
    assert_clean_error(run(tmp_path, "--out", out), "no manifest")
    assert_clean_error(run(tmp_path / "missing", "--out", out), "no such folder")
    (tmp_path / "broken.json").write_text("{not json")
    assert_clean_error(run(tmp_path, "--out", out), "broken.json", "not a manifest")
    assert not out.exists() and not list(tmp_path.glob(".*.tmp"))


def test_the_list_is_written_whole_from_a_media_folder(tmp_path):
    (tmp_path / "a.png.json").write_text(json.dumps(manifest("summary", "en", {"r": ("words", "k")})))
    out = tmp_path / "rules.md"
    r = run(tmp_path, "--out", out)
    assert r.returncode == 0, r.stderr
    assert out.read_text() == markdown(rules_by_scene([manifest("summary", "en", {"r": ("words", "k")})], ["summary"]))


def test_the_committed_list_is_the_default_lectures(lecture, tmp_path_factory):
    from scenes.catalog import SCENES
    manifests = [lecture.manifest(name, lang) for name in SCENES for lang in ("en", "zh")]
    expected = markdown(rules_by_scene(manifests, list(SCENES)))
    made = tmp_path_factory.mktemp("caption-rules") / "caption-rules.md"
    made.write_text(expected, encoding="utf-8")
    assert DOC.read_text(encoding="utf-8") == expected, (
        f"docs/caption-rules.md is out of date: the list the lecture makes is {made}; regenerate it as "
        "docs/adding-a-scene.md says (scripts/caption_rules.py)")
