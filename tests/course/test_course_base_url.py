"""Course base URLs are accepted or refused by one rule, whichever way they are given:
``[tool.tfcoach] course-base-url`` (CLI, language server, server extension), the editor
setting ``tfcoach.courseBaseUrl`` and the server option ``c.TfCoach.course_base_url``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from traitlets import TraitError

from jupyterlab_tfcoach.analysis.config import ConfigError, config_from_table
from jupyterlab_tfcoach.course import course_ref
from jupyterlab_tfcoach.server.extension import TfCoach
from lsp_server.config import is_known_code
from lsp_server.settings import parse_settings

GOOD = ["https://coach.example/course", "http://localhost:8000/c/", "HTTPS://Coach.Example"]
BAD = [
    "file:///etc/course",  # the packaged course is the default; no other local files
    "javascript:alert(1)",
    "data:text/html,<b>x</b>",
    "https://",  # no host
    "coach.example/course",  # no scheme
    'https://coach.example/a"onmouseover="x',
    "https://coach.example/a b",
    "https://coach.example/<script>",
]


@pytest.mark.parametrize("url", GOOD)
def test_every_source_accepts_an_http_course(url: str) -> None:
    assert config_from_table({"course-base-url": url}, "pyproject.toml").course_base_url == url
    parsed = parse_settings({"tfcoach": {"courseBaseUrl": url}}, is_known_code)
    assert parsed.settings.course_base_url == url and parsed.warnings == []
    assert TfCoach(course_base_url=url).course_base_url == url
    assert course_ref("tracing", url)["url"] == f"{url.rstrip('/')}/module-02#tracing"


@pytest.mark.parametrize("url", BAD)
def test_every_source_refuses_the_same_urls_and_says_why(url: str) -> None:
    with pytest.raises(ConfigError, match="course-base-url"):
        config_from_table({"course-base-url": url}, "pyproject.toml")
    parsed = parse_settings({"tfcoach": {"courseBaseUrl": url}}, is_known_code)
    assert parsed.settings.course_base_url is None  # the packaged course instead
    assert any("tfcoach.courseBaseUrl" in warning for warning in parsed.warnings)
    with pytest.raises(TraitError, match=r"TfCoach\.course_base_url"):
        TfCoach(course_base_url=url)
    with pytest.raises(ValueError, match="http"):
        course_ref("tracing", url)


def test_empty_means_the_packaged_course_everywhere() -> None:
    assert config_from_table({"course-base-url": ""}, "pyproject.toml").course_base_url is None
    parsed = parse_settings({"tfcoach": {"courseBaseUrl": ""}}, is_known_code)
    assert parsed.settings.course_base_url is None and parsed.warnings == []
    assert course_ref("tracing", "")["url"].startswith("file://")


def test_the_cli_reports_a_bad_course_url_as_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.tfcoach]\ncourse-base-url = "javascript:alert(1)"\n', encoding="utf-8"
    )
    (tmp_path / "ok.py").write_text("x = 1\n", encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, "-m", "jupyterlab_tfcoach.cli", "check", "ok.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 2
    assert "course-base-url" in completed.stderr and "http" in completed.stderr
    assert "Traceback" not in completed.stderr
