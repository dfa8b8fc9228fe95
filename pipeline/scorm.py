"""The course page as a SCORM 1.2 package: media/<quality>/<recipe>[-lang-zh][-clean].scorm.zip, for an LMS
(Moodle, Canvas, Open edX) to import.

The zip holds imsmanifest.xml at its root (the IMS Content Packaging 1.1.2 manifest with ADL's SCORM 1.2
extensions: one organization, one item, one SCO: the course page in the package's language) and every file of
the course folder (index.html, and clips/: each clip with its manifest and tracks, and whatever else the page
uses), each listed as a file of the SCO. The page talks to the LMS itself (pipeline/scorm_hooks.js, part of
every course page): where it finds the SCORM API it reports the lesson status and location.

The zip is deterministic: its entries in sorted order, every one stamped 1980-01-01 00:00 with the same
permissions, movies stored (they are compressed already) and the rest deflated; a rerun writes the same bytes.
It is written under a temporary name and renamed: the final name never holds a partial zip. It is written again
only when a file of the course, its language, its title or this module changed (the zip's comment holds their
digest).

Before writing, every clip the page shows is checked against the media folder: present, its manifest its own and
as long as the clip, the course's copy the same. A clip that is missing, a manifest that is stale, or an output
that cannot be written is a ScormInputError: one line, and render.py exits 2 (pipeline.packaging).

Packaging: it reads the course folder, clips and manifests and changes none of them (pipeline.packaging).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from urllib.parse import quote, unquote

from .tracks import PackagingError, read_manifest

CODE = (Path(__file__), Path(__file__).with_name("scorm_hooks.js"))   # the package changes when these change
ZIP_TIME = (1980, 1, 1, 0, 0, 0)          # the earliest time a zip can hold: every entry's stamp
FILE_MODE = 0o100644                      # a regular file, rw-r--r--, as every entry's permissions
STORED_SUFFIXES = (".mp4", ".webm", ".mov", ".png", ".jpg", ".jpeg", ".webp")   # compressed already
MANIFEST = "imsmanifest.xml"
COMMENT_PREFIX = b"gpt-lecture scorm 1.2 "
DURATION_SLACK_FRAMES = 1.0               # a manifest's length may differ from its clip's by a frame, no more

NS_CP = "http://www.imsproject.org/xsd/imscp_rootv1p1p2"      # IMS Content Packaging 1.1.2, as SCORM 1.2 names it
NS_ADLCP = "http://www.adlnet.org/xsd/adlcp_rootv1p2"         # ADL's SCORM 1.2 extensions
# Where the page names a file of its folder: a relative path (a folder, a name) in an attribute or in its data.
PAGE_REFERENCE = re.compile(r'["\']([\w-]+/[^"\'\s<>:]+\.(?:mp4|webm|mov|json|vtt|srt|png|jpe?g|webp|svg|js|css|wasm'
                            r'|onnx|bin))["\']')


class ScormInputError(PackagingError):
    """The package cannot be made from what is on disk (a clip missing, a stale manifest) or cannot be written:
    one line, exit 2."""


def package(course: Path, lessons: list[dict[str, Path]], dest: Path, lang: str, title: str, item_title: str,
            identifier: str) -> tuple[str, int, int]:
    """Write `dest`, the SCORM 1.2 package of the course folder `course` (made by pipeline.page.build_course from
    `lessons`: each scene's clips in the media folder, by language), with `title` for the organization and
    `item_title` for its SCO; `identifier` names the manifest. Returns (what was done, the number of files,
    the zip's size in bytes)."""
    files = course_files(course, lessons)
    digest = hashlib.sha256(json.dumps(
        {"lang": lang, "title": title, "item": item_title, "identifier": identifier,
         "code": [hashlib.sha256(p.read_bytes()).hexdigest() for p in CODE],
         "files": [[name, path.stat().st_size, path.stat().st_mtime_ns] for name, path in files]},
        sort_keys=True).encode()).hexdigest()
    comment = COMMENT_PREFIX + digest.encode()
    if dest.is_dir():
        raise ScormInputError(f"{dest.name}: cannot write it: a folder has that name ({dest})")
    try:
        with zipfile.ZipFile(dest) as old:
            if old.comment == comment:
                return "up to date", len(files) + 1, dest.stat().st_size
    except (OSError, zipfile.BadZipFile):
        pass
    manifest = manifest_xml(identifier, title, item_title, lang, [name for name, _ in files])
    write_zip(dest, [(MANIFEST, manifest), *files], comment)
    return "written", len(files) + 1, dest.stat().st_size


def course_files(course: Path, lessons: list[dict[str, Path]]) -> list[tuple[str, Path]]:
    """Every file of the course folder (hidden ones, the page's own stamp and temporary files, left out), by its
    name in the zip, sorted; after checking each clip against the media folder and every file the page names."""
    index = course / "index.html"
    if not index.is_file():
        raise ScormInputError(f"{index}: missing (the course page was not written)")
    for variants in lessons:
        for clip in variants.values():
            check_clip(clip, course / "clips")
    text = index.read_text(encoding="utf-8")
    for name in sorted(set(PAGE_REFERENCE.findall(text))):
        name = unquote(name)
        if not (course / name.split("/")[0]).is_dir():   # not a folder of the page's: text that looks like a path
            continue
        if not (course / name).is_file():
            raise ScormInputError(f"{course.name}/{name}: missing, though the course page shows it "
                                  f"(render the recipe again)")
    found = []
    for path in sorted(course.rglob("*")):
        rel = path.relative_to(course)
        if path.is_file() and not any(part.startswith(".") for part in rel.parts):
            found.append((rel.as_posix(), path))
    return sorted(found)


def check_clip(clip: Path, copies: Path) -> None:
    """A clip of the page: in the media folder, with its own manifest (named for it, as long as it is), and the
    course's copies of both the same files."""
    if not clip.is_file():
        raise ScormInputError(f"{clip.name}: the clip is missing from {clip.parent} (render the recipe again)")
    try:
        manifest = read_manifest(clip)
    except PackagingError as e:
        raise ScormInputError(str(e)) from None
    where = f"{clip.name}.json"
    if manifest.get("output") != clip.name:
        raise ScormInputError(f"{where}: stale manifest: it describes {manifest.get('output')!r}, not {clip.name} "
                              f"(render the recipe again)")
    said = manifest["timeline"][-1]["end"] if manifest.get("timeline") else 0.0
    fps = float(manifest.get("fps") or 15)
    lasts = clip_seconds(clip)
    if abs(lasts - said) > DURATION_SLACK_FRAMES / fps + 1e-3:
        raise ScormInputError(f"{where}: stale manifest: its beats end at {said:.3f} s, the clip lasts "
                              f"{lasts:.3f} s (render the recipe again, with --force)")
    for original in (clip, clip.with_name(where)):
        copy = copies / original.name
        if not copy.is_file():
            raise ScormInputError(f"{copies.parent.name}/clips/{copy.name}: missing from the course folder "
                                  f"(render the recipe again)")
        if not same_file(original, copy):
            raise ScormInputError(f"{copies.parent.name}/clips/{copy.name}: stale: not the same as "
                                  f"{original} (render the recipe again)")


def same_file(a: Path, b: Path) -> bool:
    try:
        if os.path.samefile(a, b):
            return True
    except OSError:
        return False
    if a.stat().st_size != b.stat().st_size:
        return False
    with a.open("rb") as x, b.open("rb") as y:
        while True:
            p, q = x.read(1 << 20), y.read(1 << 20)
            if p != q:
                return False
            if not p:
                return True


def clip_seconds(clip: Path) -> float:
    """The clip's video stream's length: as its container records it, else (WebM records none per stream) the end of
    its last packet (packets read, not decoded)."""
    import av
    try:
        with av.open(str(clip)) as container:
            stream = container.streams.video[0]
            if stream.duration is not None:
                return float(stream.duration * stream.time_base)
            ends = [p.pts + (p.duration or 0) for p in container.demux(stream) if p.pts is not None]
            return float(max(ends) * stream.time_base) if ends else container.duration / av.time_base
    except (av.FFmpegError, IndexError, TypeError) as e:
        raise ScormInputError(f"{clip.name}: not a readable video ({type(e).__name__})") from None


def manifest_xml(identifier: str, title: str, item_title: str, lang: str, files: list[str]) -> bytes:
    """imsmanifest.xml: the SCORM 1.2 metadata, one organization with one item, and its SCO, the course page,
    which lists every file of the package."""
    ET.register_namespace("", NS_CP)
    ET.register_namespace("adlcp", NS_ADLCP)
    cp = lambda tag: f"{{{NS_CP}}}{tag}"   # noqa: E731
    root = ET.Element(cp("manifest"), {"identifier": identifier, "version": "1.0"})
    metadata = ET.SubElement(root, cp("metadata"))
    ET.SubElement(metadata, cp("schema")).text = "ADL SCORM"
    ET.SubElement(metadata, cp("schemaversion")).text = "1.2"
    org_id, item_id, sco_id = f"ORG-{lang}", f"ITEM-{lang}", f"SCO-{lang}"
    organizations = ET.SubElement(root, cp("organizations"), {"default": org_id})
    organization = ET.SubElement(organizations, cp("organization"), {"identifier": org_id})
    ET.SubElement(organization, cp("title")).text = title
    item = ET.SubElement(organization, cp("item"), {"identifier": item_id, "identifierref": sco_id,
                                                    "isvisible": "true"})
    ET.SubElement(item, cp("title")).text = item_title
    resources = ET.SubElement(root, cp("resources"))
    resource = ET.SubElement(resources, cp("resource"), {"identifier": sco_id, "type": "webcontent",
                                                         f"{{{NS_ADLCP}}}scormtype": "sco", "href": "index.html"})
    for name in files:
        ET.SubElement(resource, cp("file"), {"href": href(name)})
    ET.indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode").encode("utf-8") + b"\n"


def href(name: str) -> str:
    """A file's name as a URL relative to the package's root (the project's names need no escaping; any other
    character is percent-encoded)."""
    return quote(name, safe="/,+-._~")


def write_zip(dest: Path, entries: list[tuple[str, bytes | Path]], comment: bytes) -> None:
    """The zip, written under a temporary name beside `dest` and renamed onto it; on any failure the temporary
    file is removed and `dest` is left as it was."""
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        with zipfile.ZipFile(tmp, "w", allowZip64=True) as z:
            for name, content in sorted(entries, key=lambda e: e[0]):
                info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
                info.create_system = 3   # unix, so that the permissions below are read as such
                info.external_attr = FILE_MODE << 16
                info.compress_type = (zipfile.ZIP_STORED if name.lower().endswith(STORED_SUFFIXES)
                                      else zipfile.ZIP_DEFLATED)
                if isinstance(content, bytes):
                    z.writestr(info, content)
                    continue
                info.file_size = content.stat().st_size
                with content.open("rb") as src, z.open(info, "w", force_zip64=info.file_size > 2 ** 31) as out:
                    shutil.copyfileobj(src, out, 1 << 20)
            z.comment = comment
        os.replace(tmp, dest)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        what = e.filename if e.filename is not None and str(e.filename) != str(tmp) else dest
        raise ScormInputError(f"{dest.name}: cannot write it ({e.strerror or type(e).__name__}: {what})") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
