"""plotly==7.1.0: the wheel's folder of plotly.js that config._compat.plotly finds (see its docstring)."""
from __future__ import annotations

from pathlib import Path

import plotly
from django.conf import settings
from django.contrib.staticfiles import finders

from config._compat.plotly import plotly_js_folder


def test_folder_holds_the_plotly_js_bundle_plotly_itself_uses():
    folder = plotly_js_folder()
    assert folder == Path(plotly.__file__).parent / "package_data"
    bundle = folder / "plotly.min.js"
    assert bundle.is_file()
    from plotly.offline import get_plotlyjs

    assert bundle.read_text(encoding="utf-8") == get_plotlyjs()


def test_pages_find_plotly_js_under_vendor_plotly():
    assert ("vendor/plotly", plotly_js_folder()) in settings.STATICFILES_DIRS
    assert finders.find("vendor/plotly/plotly.min.js") == str(plotly_js_folder() / "plotly.min.js")
