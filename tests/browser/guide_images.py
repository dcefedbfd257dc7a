"""The screenshots of the user guide (``docs/img/NAME.png``), taken by the browser tests.

``guide_screenshot(page, "workbench")`` does nothing unless ``DEIDLOOP_SCREENSHOTS=1``: the tests run as they
always do, and ``./deidloop screenshots`` runs them with the variable set to write every image of the guide
again, at one viewport, so that the pictures match the pages.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

ENABLED_BY = "DEIDLOOP_SCREENSHOTS"
GUIDE_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "img"
VIEWPORT = {"width": 1280, "height": 800}
_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")


def screenshots_enabled() -> bool:
    return os.environ.get(ENABLED_BY, "") == "1"


def guide_screenshot(page, name: str, *, folder: Path = GUIDE_IMAGES) -> Path | None:
    """Save what ``page`` shows as ``folder/NAME.png`` at the guide's viewport, when screenshots are enabled.

    Returns the file written, or None (and touches neither the page nor the disk) when they are not.
    """
    if not _NAME.fullmatch(name):
        raise ValueError(f"a guide image is named with lowercase letters, digits and dashes, not {name!r}")
    if not screenshots_enabled():
        return None
    if page.viewport_size != VIEWPORT:
        page.set_viewport_size(VIEWPORT)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), animations="disabled", caret="hide")
    _to_palette(path)
    return path


def _to_palette(path: Path) -> None:
    """The pages are flat colours and text: 256 colours, undithered, keep them sharp at a third of the size, so
    that the committed pictures stay small (the guide's test holds each under 200 KB)."""
    from PIL import Image

    with Image.open(path) as image:
        palette = image.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    palette.save(path, optimize=True)
