"""Shared fixtures for the corpus format tests: paths into ../shared/datasets, skipped when absent."""
from __future__ import annotations

from pathlib import Path

import pytest

DATASETS = Path(__file__).resolve().parents[3].parent / "shared" / "datasets"


def dataset(relative: str) -> Path:
    path = DATASETS / relative
    if not path.exists():
        pytest.skip(f"dataset {relative} is not present beside the repository")
    return path


@pytest.fixture
def meddocan_dev() -> Path:
    return dataset("meddocan/dev")


@pytest.fixture
def meddocan_train() -> Path:
    return dataset("meddocan/train")


@pytest.fixture
def meddocan_dev_xml() -> Path:
    return dataset("meddocan/dev-i2b2xml")


@pytest.fixture
def wnut17() -> Path:
    return dataset("wnut17")
