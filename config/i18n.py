"""The translations: ``locale/<language>/LC_MESSAGES/*.po`` compiled to the ``.mo`` files Django reads.

The ``.mo`` files are built, never committed. polib compiles them, so a fresh machine needs no GNU gettext;
the launcher compiles before it runs anything (``python -m config.i18n`` does it alone).
"""
from __future__ import annotations

import os
from pathlib import Path

import polib

LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"


def compile_catalogues(locale_dir: Path = LOCALE_DIR) -> list[Path]:
    """Compile every ``.po`` under ``locale_dir`` whose ``.mo`` is missing or older; returns those written."""
    written = []
    for po_path in sorted(locale_dir.glob("*/LC_MESSAGES/*.po")):
        mo_path = po_path.with_suffix(".mo")
        if mo_path.exists() and mo_path.stat().st_mtime >= po_path.stat().st_mtime:
            continue
        # Written aside, then renamed: a process starting beside this one never reads half a file.
        partial = mo_path.with_name(f".{mo_path.name}.{os.getpid()}")
        polib.pofile(str(po_path)).save_as_mofile(str(partial))
        os.replace(partial, mo_path)
        written.append(mo_path)
    return written


if __name__ == "__main__":
    for path in compile_catalogues():
        print(f"compiled {path.relative_to(LOCALE_DIR.parent)}")
