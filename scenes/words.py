"""The lecture's words as data: every caption, its spoken form and every beat title, in English and Chinese.

Each scene's words live in a TOML file beside its module (scenes/next_token.py -> scenes/next_token.toml; a scene
grown into a package, its words.toml: scenes/mlp_fact/words.toml), one table per group of strings ("captions",
"beat_titles", ...), one entry per key, its versions side by side:

    [captions.note]
    en = "Our {n}-layer model reads ..."
    zh = "..."          # the same in Chinese
    say_en = "..."      # optional: what the voice says, where it is not the caption (a formula said by its meaning)
    say_zh = "..."

A scene reads them with `WORDS = Words.beside(__file__)` (a package's beats.py: `Words(Path(__file__).with_name(
"words.toml"))`) and `S = SHARED | WORDS["captions"]`; the render cache follows both forms (pipeline/cache.py
files_beside), so a reworded line re-renders the clips that read it. Every entry is
checked when its file is loaded (at import, never on screen): both languages present, no unknown version, and the
same placeholders ({name}) in both languages of the caption and of its spoken form. docs/adding-a-scene.md says
how to reword a line.
"""

from __future__ import annotations

import string
import tomllib
from pathlib import Path

LANGUAGES = ("en", "zh")
VERSIONS = (*LANGUAGES, *(f"say_{lang}" for lang in LANGUAGES))


class WordsError(ValueError):
    """A words file that cannot be used: a missing language, an unknown version, a placeholder in one language only,
    or invalid TOML. Its message names the file and the key."""


def placeholders(text: str) -> set[str]:
    """The fields a text fills in: "{n} more words" -> {"n"}."""
    return {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}


def check_entry(where: str, key: str, versions: dict) -> None:
    """An entry's versions: en and zh present, nothing else than VERSIONS, and each pair of languages (the caption,
    the spoken form) filling in the same placeholders."""
    if not isinstance(versions, dict):
        raise WordsError(f"{where}: string {key!r} is not a table of versions (en = ..., zh = ...)")
    missing = [lang for lang in LANGUAGES if not versions.get(lang)]
    if missing:
        raise WordsError(f"{where}: string {key!r} has no {', '.join(missing)} version")
    unknown = sorted(set(versions) - set(VERSIONS))
    if unknown:
        raise WordsError(f"{where}: string {key!r} has unknown versions {', '.join(unknown)} (known: {', '.join(VERSIONS)})")
    for version, text in versions.items():
        if not isinstance(text, str):
            raise WordsError(f"{where}: string {key!r}'s {version} is not text")
    for prefix in ("", "say_"):       # the caption in each language, then its spoken form in each
        fields = {lang: placeholders(versions.get(f"{prefix}{lang}", versions[lang])) for lang in LANGUAGES}
        if len({frozenset(f) for f in fields.values()}) > 1:
            detail = "; ".join(f"{prefix}{lang}: {', '.join(sorted(f)) or 'none'}" for lang, f in fields.items())
            raise WordsError(f"{where}: string {key!r} fills in different placeholders by language ({detail})")


class Strings:
    """A table key -> {en, zh[, say_en, say_zh]}. Missing translations are an error at load time, not on screen."""

    def __init__(self, table: dict[str, dict[str, str]], where: str = "strings"):
        for key, versions in table.items():
            check_entry(where, key, versions)
        self.table = table

    def __call__(self, key: str, lang: str, **values) -> str:
        return self.table[key][lang].format(**values)

    def __or__(self, other: "Strings") -> "Strings":
        return Strings({**self.table, **other.table})

    def __contains__(self, key: str) -> bool:
        return key in self.table


def read_toml(path: Path) -> dict:
    """A words or prompts file's tables; a missing or malformed file is one WordsError naming it."""
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WordsError(f"{path}: no such words file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise WordsError(f"{path}: not valid TOML ({e})") from None


class Words:
    """One words file: its tables by name, each a Strings."""

    def __init__(self, path: Path):
        self.path = Path(path)
        data = read_toml(self.path)
        self.tables = {}
        for name, table in data.items():
            if not isinstance(table, dict):
                raise WordsError(f"{self.path}: {name!r} is not a table of entries ([{name}.<key>])")
            self.tables[name] = Strings(table, where=f"{self.path.name} [{name}]")

    @classmethod
    def beside(cls, module_file: str) -> "Words":
        """The words file of a module: the same path with .toml for .py."""
        return cls(Path(module_file).with_suffix(".toml"))

    def __getitem__(self, name: str) -> Strings:
        try:
            return self.tables[name]
        except KeyError:
            raise WordsError(f"{self.path}: no table [{name}] (has {', '.join(self.tables) or 'none'})") from None
