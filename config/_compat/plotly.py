"""The layout of the ``plotly`` wheel that :mod:`config.settings` relies on (plotly==7.1.0, the lock's pin).

Pinned by ``tests/unit/compat/test_plotly.py``. The pages load plotly.js as a static file,
``vendor/plotly/plotly.min.js``; it is served from the wheel's ``package_data`` folder, next to
``plotly/__init__.py``, the bundle ``plotly.offline.get_plotlyjs()`` reads (the package is found with
``importlib``, not imported).
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = ["plotly_js_folder"]


def plotly_js_folder() -> Path:
    """The wheel's folder holding ``plotly.min.js``."""
    return Path(importlib.util.find_spec("plotly").origin).parent / "package_data"
