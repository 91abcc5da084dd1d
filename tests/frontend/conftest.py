"""Fixtures the browser tests of the study tools share (helpers: ``study_pages.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.frontend.study_pages import served_study_server
from tests.harness import LabServer


@pytest.fixture(scope="module")
def study_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab loading this checkout's labextension build, with a fresh study store (one
    per test module)."""
    yield from served_study_server(tmp_path_factory, "study-lab")
