"""The user guide in the application: ``docs/guide.md`` rendered as HTML at ``/guide/``, and its screenshots.

The guide is the Markdown file the repository shows; a heading ending in ``{#anchor}`` gets that anchor as its
id, so the help links of the pages (``/guide/#workbench``) keep working when a title is reworded. Raw HTML in
the file is escaped, never passed through. Images are served only as ``NAME.png`` from ``docs/img/``.
"""
from __future__ import annotations

import re
from functools import lru_cache
from itertools import pairwise
from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_safe
from markdown_it import MarkdownIt

GUIDE = Path(settings.BASE_DIR) / "docs" / "guide.md"
IMAGES = GUIDE.parent / "img"

_ANCHOR = re.compile(r"\s*\{#([a-z0-9][a-z0-9-]*)\}\s*$")
_IMAGE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*\.png$")


def _anchored_headings(state) -> None:
    """A core rule: ``## Title {#anchor}`` becomes ``<h2 id="anchor">Title</h2>``."""
    tokens = state.tokens
    for opening, inline in pairwise(tokens):
        if opening.type != "heading_open" or inline.type != "inline":
            continue
        match = _ANCHOR.search(inline.content)
        if match is None:
            continue
        opening.attrSet("id", match.group(1))
        inline.content = inline.content[: match.start()]
        last = inline.children[-1] if inline.children else None
        if last is not None and last.type == "text":
            last.content = _ANCHOR.sub("", last.content)


def render_guide(source: str) -> str:
    """The guide's Markdown as HTML: CommonMark with tables, raw HTML escaped, anchored headings."""
    parser = MarkdownIt("commonmark", {"html": False}).enable("table")
    parser.core.ruler.push("anchored_headings", _anchored_headings)
    return parser.render(source)


@lru_cache(maxsize=1)
def _rendered(modified: float) -> str:  # keyed by the file's time: an edited guide is rendered again
    return render_guide(GUIDE.read_text(encoding="utf-8"))


@require_safe
@login_required
def guide(request):
    html = _rendered(GUIDE.stat().st_mtime)
    return render(request, "guide.html", {"guide": mark_safe(html)})  # the renderer escapes raw HTML


@require_safe
@login_required
def guide_image(request, name: str):
    """A screenshot of the guide: a plain ``NAME.png`` of ``docs/img/``, nothing else (no folders, no ``..``)."""
    if not _IMAGE_NAME.fullmatch(name):
        raise Http404("not an image of the guide")
    path = IMAGES / name
    if not path.is_file():
        raise Http404("no such image")
    return FileResponse(path.open("rb"), content_type="image/png")
