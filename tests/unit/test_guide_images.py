"""The screenshot hook of the browser tests takes pictures for the guide only when asked to."""
from __future__ import annotations

import pytest

from tests.browser.guide_images import ENABLED_BY, guide_screenshot


class UntouchablePage:
    """A stand-in for a Playwright page that fails the test if the hook reads or drives it."""

    def __getattr__(self, name):
        raise AssertionError(f"the hook used page.{name} while screenshots are off")


@pytest.mark.parametrize("value", [None, "", "0", "yes"])
def test_without_the_variable_the_hook_does_nothing(monkeypatch, tmp_path, value):
    if value is None:
        monkeypatch.delenv(ENABLED_BY, raising=False)
    else:
        monkeypatch.setenv(ENABLED_BY, value)
    assert guide_screenshot(UntouchablePage(), "workbench", folder=tmp_path / "img") is None
    assert not (tmp_path / "img").exists()


def test_a_picture_name_is_a_plain_slug(monkeypatch, tmp_path):
    monkeypatch.delenv(ENABLED_BY, raising=False)
    for name in ("../escape", "Work bench", "a/b", "x.png", ""):
        with pytest.raises(ValueError):
            guide_screenshot(UntouchablePage(), name, folder=tmp_path)
