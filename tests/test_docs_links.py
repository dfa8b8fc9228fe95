"""The docs stand on their own in a clone: every relative link in README.md and docs/**/*.md (docs/lab/ included)
resolves to a file or folder of the repository, and a link to a heading of a Markdown file (`file.md#heading`) to a
heading that file has (GitHub's anchors); no doc or source file points at the design folder that sits beside the
working copy on the machine the project was written on (a clone has only the repository: the project's own design
guides are docs/visual-language.md and docs/teaching.md); and docs/rendering.md stays a guide, under MAX_GUIDE_LINES
lines (measured runs go to docs/lab/).

Reads files only, in well under a second."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import pytest

from helpers import ROOT

MAX_GUIDE_LINES = 700
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# The paths of the design folder outside the repository, as the old docs and comments wrote them. Spelled in two
# pieces so that this file does not name them itself.
OUTSIDE = re.compile(re.escape("../" + "shared") + "|" + re.escape("shared/" + "design"))
SOURCE_SUFFIXES = {".py", ".md", ".sh", ".toml", ".js", ".html", ".css", ".cfg", ".txt", ".yml", ".yaml"}
NOT_SOURCES = {".git", ".venv", "media", "node_modules", "__pycache__", ".pytest_cache", "narration"}

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.M)
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)


def prose(text: str) -> str:
    """The text a reader sees as prose: fenced blocks and code spans blanked out (a link inside code is code)."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text)


def links(text: str) -> list[str]:
    """Every link target of a Markdown text, inline, image or reference style, outside code."""
    body = prose(text)
    return INLINE_LINK.findall(body) + REFERENCE.findall(body)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text as rendered (code marks dropped, a link by its text), lower-cased,
    every character but letters, digits, "_", "-" and spaces removed, spaces made "-"."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    text = "".join(c for c in text if c in "_- " or unicodedata.category(c)[0] in "LN")
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of a Markdown file's headings (outside fenced blocks), a repeated one numbered as GitHub does."""
    seen: dict[str, int] = {}
    found = set()
    for _, heading in HEADING.findall(FENCE.sub("", text)):
        base = slug(heading)
        n = seen.get(base, 0)
        found.add(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    return found


def broken_links(doc: Path, root: Path = ROOT) -> list[str]:
    """The relative links of `doc` that do not resolve inside `root`: a missing file, a path out of the repository,
    or a heading its target file does not have. Web and mail links are not followed."""
    text = doc.read_text(encoding="utf-8")
    root = root.resolve()
    broken = []
    for target in links(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):   # https:, mailto:, data:
            continue
        path, _, anchor = unquote(target).partition("#")
        dest = (doc.parent / path).resolve() if path else doc.resolve()
        if not dest.is_relative_to(root):
            broken.append(f"{target}: outside the repository")
        elif not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text(encoding="utf-8")):
            broken.append(f"{target}: {dest.name} has no heading #{anchor}")
    return broken


def sources(root: Path = ROOT) -> list[Path]:
    """The repository's text files a reader or a tool reads: code, docs, scripts, configuration."""
    found = []
    for path in root.rglob("*"):
        rel = path.relative_to(root).parts
        if any(part in NOT_SOURCES for part in rel) or not path.is_file():
            continue
        if path.suffix in SOURCE_SUFFIXES:
            found.append(path)
    return found


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_every_relative_link_resolves_in_the_repository(doc):
    assert broken_links(doc) == [], f"{doc.relative_to(ROOT)}: broken links"


def test_the_link_reader_finds_the_docs_links():
    """A reader that found no links would pass every doc above: it must find the README's links to the guides."""
    readme = links((ROOT / "README.md").read_text(encoding="utf-8"))
    assert {"docs/rendering.md", "docs/visual-language.md", "docs/teaching.md"} <= set(readme)
    assert sum(len(links(d.read_text(encoding="utf-8"))) for d in DOCS) >= 50
    assert "docs/lab" in {p.relative_to(ROOT).parent.as_posix() for p in DOCS}


def test_a_broken_link_a_missing_heading_and_a_path_outside_are_found(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# A guide\n\n## Sums that add up (`sums.py`)\n\n## Sums that add up (`sums.py`)\n")
    doc = tmp_path / "docs" / "other.md"
    doc.write_text("See [the guide](guide.md#sums-that-add-up-sumspy), [again](guide.md#sums-that-add-up-sumspy-1),\n"
                   "[a section](guide.md#no-such-section), [gone](missing.md), [out](../../elsewhere.md),\n"
                   "[here](#a-heading-here), ![a picture](lab/figure.png) and [the web](https://example.org).\n"
                   "`[in code](nowhere.md)`\n\n```\n[in a block](nowhere.md)\n```\n")
    assert broken_links(doc, tmp_path) == [
        "guide.md#no-such-section: guide.md has no heading #no-such-section", "missing.md: no such file",
        "../../elsewhere.md: outside the repository", "#a-heading-here: other.md has no heading #a-heading-here",
        "lab/figure.png: no such file"]


def test_headings_become_githubs_anchors():
    assert slug("Sums that add up as shown (`scenes/components/sums.py`)") == \
        "sums-that-add-up-as-shown-scenescomponentssumspy"
    assert slug("2. One idea per beat, and the narration says what the picture shows") == \
        "2-one-idea-per-beat-and-the-narration-says-what-the-picture-shows"
    assert slug("mlp_fact's analysis and render times") == "mlp_facts-analysis-and-render-times"
    assert slug("Accessibility (WCAG 2.1 AA)") == "accessibility-wcag-21-aa"
    assert slug("词元与嵌入") == "词元与嵌入"


def test_no_doc_or_source_names_a_path_outside_the_repository():
    files = sources()
    assert ROOT / "scenes" / "style.py" in files and ROOT / "docs" / "teaching.md" in files
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in files
             for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             if OUTSIDE.search(line)]
    assert found == [], "these name a file outside the repository; point them at docs/ instead:\n" + "\n".join(found)


def test_the_outside_paths_are_recognised():
    assert OUTSIDE.search("see ../" + "shared/" + "design/teaching.md §3")
    assert OUTSIDE.search("(the visual language: shared/" + "design/visual-language.md)")
    assert not OUTSIDE.search("(the visual language: docs/visual-language.md), SHARED | Strings")


def test_the_rendering_guide_stays_a_guide():
    lines = (ROOT / "docs" / "rendering.md").read_text(encoding="utf-8").count("\n")
    assert lines < MAX_GUIDE_LINES, (f"docs/rendering.md has {lines} lines: move measured runs and long benchmark "
                                     f"narratives to docs/lab/rendering-measurements.md and link them")
