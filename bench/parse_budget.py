"""Memory and time of reading hostile small files: in the caller's process, or in a budgeted worker.

Issue [1/6] item 2: a 13 KB EPUB of tiny paragraphs (8 MB unpacked) took a server from
568 MB to 1.84 GB for 33 s; an 8 MB HTML page 1.2 GB; DOCX/ODT of 32 MB unpacked 586/685 MB.
This builds files of that shape (and the largest ones still accepted), then reads each in a
fresh process, as ``citeqa serve`` does an upload:

    PYTHONPATH=src .venv/bin/python bench/parse_budget.py            # load_bounded (the server's way)
    PYTHONPATH=src .venv/bin/python bench/parse_budget.py --in-process   # load_document in the process

and prints, per file: its size, seconds in all, the caller's baseline RSS (parsers and the
language detector loaded), its peak and its RSS after the read over that baseline (what
the server pays), and for the worker its baseline, its peak over it and the seconds of the
parse itself (0 when the file was refused before parsing). Figures, not assertions; the
in-process mode needs the code before the fix (``git archive`` an older commit) to show the
old figures, since the element and size caps now refuse most of these files early.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import with_bench_path  # common.py sits beside this script

MEASURE = r"""
import json, resource, sys, time
from pathlib import Path
mode, path = sys.argv[1], Path(sys.argv[2])
from citeqa.errors import DocumentError
from citeqa.ingest import documents
import bs4, lxml.etree, docx, ebooklib.epub, pypdf, charset_normalizer  # the parsers, as a warm server has them
from citeqa.text.language import detect_lang
detect_lang("warm up the language detector", "en")
from common import rss_mb as rss  # bench/ is on the measuring process's path
base = rss()
started = time.monotonic()
try:
    worker = {}
    if mode == "worker":
        from citeqa.ingest import budget
        doc, worker = budget.run_worker(path, path.name)
    else:
        doc = documents.load_document(path, path.name)
    outcome = f"read, {len(doc.text):,} chars"
except DocumentError as exc:
    outcome = f"refused: {exc}"
seconds = time.monotonic() - started
own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"outcome": outcome, "seconds": seconds, "base": base, "own_peak": own, "own_after": rss(),
                  "worker_peak": child, **worker}))
"""

OPF = (
    "<?xml version='1.0' encoding='utf-8'?><package xmlns='http://www.idpf.org/2007/opf' version='3.0' "
    "unique-identifier='id'><metadata xmlns:dc='http://purl.org/dc/elements/1.1/'><dc:identifier id='id'>x"
    "</dc:identifier><dc:title>T</dc:title><dc:language>en</dc:language></metadata><manifest>"
    "<item id='c1' href='c1.xhtml' media-type='application/xhtml+xml'/></manifest><spine><itemref idref='c1'/>"
    "</spine></package>"
)
CONTAINER = (
    "<?xml version='1.0'?><container version='1.0' xmlns='urn:oasis:names:tc:opendocument:xmlns:container'>"
    "<rootfiles><rootfile full-path='OEBPS/content.opf' media-type='application/oebps-package+xml'/>"
    "</rootfiles></container>"
)
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
ODT_NS = (
    "xmlns:office='urn:oasis:names:tc:opendocument:xmlns:office:1.0' "
    "xmlns:text='urn:oasis:names:tc:opendocument:xmlns:text:1.0'"
)


def _zip(path: Path, parts: dict[str, str | bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
    return path


def epub(path: Path, paragraphs: int) -> Path:
    body = "<html xmlns='http://www.w3.org/1999/xhtml'><body>" + "<p>a</p>" * paragraphs + "</body></html>"
    parts = {"mimetype": "application/epub+zip", "META-INF/container.xml": CONTAINER, "OEBPS/content.opf": OPF}
    return _zip(path, {**parts, "OEBPS/c1.xhtml": body})


def docx(path: Path, paragraphs: int) -> Path:
    import docx as python_docx

    blank = path.with_suffix(".blank.docx")
    python_docx.Document().save(blank)
    with zipfile.ZipFile(blank) as source:
        parts: dict[str, str | bytes] = {n: source.read(n) for n in source.namelist()}
    parts["word/document.xml"] = (
        f"<?xml version='1.0' encoding='UTF-8' standalone='yes'?><w:document xmlns:w='{W}'><w:body>"
        + "<w:p><w:r><w:t>a</w:t></w:r></w:p>" * paragraphs
        + "</w:body></w:document>"
    )
    blank.unlink()
    return _zip(path, parts)


def odt(path: Path, paragraphs: int) -> Path:
    content = (
        f"<?xml version='1.0' encoding='UTF-8'?><office:document-content {ODT_NS}><office:body><office:text>"
        + "<text:p>a</text:p>" * paragraphs
        + "</office:text></office:body></office:document-content>"
    )
    return _zip(path, {"mimetype": "application/vnd.oasis.opendocument.text", "content.xml": content})


def cases(folder: Path) -> list[Path]:
    html = folder / "tiny-paragraphs-8mb.html"
    html.write_text("<html><body>" + "<p>a</p>" * 1_000_000 + "</body></html>")
    html_cap = folder / "tiny-paragraphs-under-cap.html"
    html_cap.write_text("<html><body>" + "<p>a</p>" * 95_000 + "</body></html>")
    return [
        epub(folder / "tiny-paragraphs-13kb.epub", 1_000_000),
        epub(folder / "tiny-paragraphs-25kb.epub", 2_000_000),
        epub(folder / "tiny-paragraphs-under-cap.epub", 95_000),
        html,
        html_cap,
        docx(folder / "tiny-paragraphs-32mb.docx", 1_000_000),
        docx(folder / "tiny-paragraphs-under-cap.docx", 25_000),
        odt(folder / "tiny-paragraphs-32mb.odt", 1_700_000),
        odt(folder / "tiny-paragraphs-under-cap.odt", 95_000),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--in-process", action="store_true", help="read with load_document in the process itself")
    args = parser.parse_args()
    mode = "in-process" if args.in_process else "worker"
    print(f"mode: {mode} (python {sys.version.split()[0]})")
    print(
        f"{'file':34} {'bytes':>10} {'s':>6} {'base MB':>8} {'peak +MB':>9} {'after +MB':>9} "
        f"{'worker base':>11} {'worker +MB':>10} {'parse s':>7}  outcome"
    )
    with tempfile.TemporaryDirectory(prefix="citeqa-bench-parse-") as tmp:
        for path in cases(Path(tmp)):
            done = subprocess.run(
                [sys.executable, "-c", MEASURE, mode, str(path)],
                env=with_bench_path(),
                capture_output=True,
                text=True,
                timeout=900,
            )
            if done.returncode != 0:
                print(f"{path.name:34} failed: {done.stderr.strip().splitlines()[-1:]}")
                continue
            r = json.loads(done.stdout.strip().splitlines()[-1])
            print(
                f"{path.name:34} {path.stat().st_size:>10,} {r['seconds']:>6.1f} {r['base']:>8.0f} "
                f"{r['own_peak'] - r['base']:>9.0f} {r['own_after'] - r['base']:>9.0f} "
                f"{r.get('base_mb', 0):>11.0f} {r.get('peak_mb', 0) - r.get('base_mb', 0):>10.0f} "
                f"{r.get('parse_s', 0):>7.1f}  {r['outcome'][:90]}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
