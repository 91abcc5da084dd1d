"""The course notebooks: one per module, shipped in the package, each runs top to bottom.

Every notebook runs in a fresh python3 kernel with nbclient, as *Run All* does for a learner.
nbclient with ``allow_errors=False`` lets a cell tagged ``raises-exception`` fail and stops at
any other error, so a notebook that completes has failed only where it says it would. A tagged
cell that no longer raises is a stale tag and fails the test too.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from jupyterlab_tfcoach.course import (
    NOTEBOOKS_DIR,
    AmbiguousNotebookError,
    Course,
    NoNotebookError,
    UnknownModuleError,
    get_course,
    notebook_for,
)
from tests.harness import REPO_ROOT, quiet_env

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
RAISES = "raises-exception"
CELL_TIMEOUT = 180


@dataclass(frozen=True)
class Run:
    """A notebook after nbclient ran it; ``failure`` is nbclient's error, if it stopped."""

    notebook: nbformat.NotebookNode
    failure: str | None


def run_notebook(notebook: nbformat.NotebookNode, cwd: Path) -> Run:
    """Run every cell in order in a new python3 kernel started in ``cwd``."""
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        allow_errors=False,
        resources={"metadata": {"path": str(cwd)}},
    )
    try:
        client.execute(env=quiet_env(TF_CPP_MIN_LOG_LEVEL="2"))
    except CellExecutionError as error:
        return Run(notebook, str(error))
    return Run(notebook, None)


def code_cells(notebook: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def errors(cell: nbformat.NotebookNode) -> list[str]:
    return [output.ename for output in cell.get("outputs", []) if output.output_type == "error"]


def where(index: int, cell: nbformat.NotebookNode) -> str:
    first_line = cell.source.splitlines()[0] if cell.source else ""
    return f"code cell {index}: {first_line!r}"


# ----------------------------------------------------------------------------- the catalogue


def test_every_module_has_its_notebook_and_every_notebook_a_module() -> None:
    modules = get_course().modules
    assert modules, "the course has modules"
    for module in modules:
        assert module.notebook is not None, f"{module.id} has no notebooks/{module.id}-*.ipynb"
        assert module.notebook.parent == NOTEBOOKS_DIR
        assert module.notebook.name.startswith(f"{module.id}-")
        assert notebook_for(module.id) == module.notebook
    assert sorted(module.notebook for module in modules if module.notebook) == NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_a_clean_v4_5_notebook(path: Path) -> None:
    notebook = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    nbformat.validate(notebook)
    assert (notebook.nbformat, notebook.nbformat_minor) == (4, 5)
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    ids = [cell.id for cell in notebook.cells]
    assert all(ids) and len(set(ids)) == len(ids)
    # Shipped unexecuted: what the learner sees comes from running it.
    for index, cell in enumerate(code_cells(notebook)):
        assert cell.outputs == [] and cell.execution_count is None, where(index, cell)
    assert notebook.cells[0].cell_type == "markdown"
    assert notebook.cells[0].source.startswith("# Module ")


def _course_folder(root: Path, notebooks: list[str]) -> Path:
    """A course laid out as the package is: ``modules/`` and ``notebooks/`` side by side."""
    modules = root / "modules"
    modules.mkdir()
    for module_id in ("module-01", "module-02"):
        (modules / f"{module_id}.md").write_text(
            f'# {module_id}\n\n<a id="{module_id}-a"></a>\n## A\n\nText.\n', encoding="utf-8"
        )
    (root / "notebooks").mkdir()
    for name in notebooks:
        (root / "notebooks" / name).write_text("{}", encoding="utf-8")
    return modules


def test_a_module_without_a_notebook_says_so(tmp_path: Path) -> None:
    # module-010's notebook and a stray file are no notebooks of module-01.
    modules = _course_folder(
        tmp_path, ["module-02-graphs.ipynb", "module-010-later.ipynb", "module-01.ipynb"]
    )
    course = Course.load(modules)
    assert course.module("module-01").notebook is None
    assert course.notebook_for("module-02") == tmp_path / "notebooks" / "module-02-graphs.ipynb"
    with pytest.raises(NoNotebookError, match="'module-01' has no notebook"):
        course.notebook_for("module-01")
    assert issubclass(NoNotebookError, LookupError)
    with pytest.raises(UnknownModuleError):
        course.notebook_for("module-99")
    with pytest.raises(UnknownModuleError):
        notebook_for("module-99")


def test_two_notebooks_for_one_module_are_refused(tmp_path: Path) -> None:
    modules = _course_folder(tmp_path, ["module-01-a.ipynb", "module-01-b.ipynb"])
    with pytest.raises(
        AmbiguousNotebookError, match=re.escape("module-01-a.ipynb, module-01-b.ipynb")
    ):
        Course.load(modules)


def test_the_wheel_ships_every_notebook(tmp_path: Path) -> None:
    """Built as ``pip wheel`` builds it, minus the JS build hook (the labextension is not
    what this checks)."""
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from hatchling.build import build_wheel; build_wheel(sys.argv[1])",
            str(tmp_path),
        ],
        cwd=REPO_ROOT,
        env={**os.environ, "HATCH_BUILD_NO_HOOKS": "true"},
        check=True,
        timeout=60,
    )
    [wheel] = tmp_path.glob("*.whl")
    prefix = "jupyterlab_tfcoach/course/notebooks/"
    with zipfile.ZipFile(wheel) as archive:
        shipped = {
            name.removeprefix(prefix): archive.read(name)
            for name in archive.namelist()
            if name.startswith(prefix) and name.endswith(".ipynb")
        }
    assert NOTEBOOKS
    assert shipped == {path.name: path.read_bytes() for path in NOTEBOOKS}


# ----------------------------------------------------------------------------- running them


def test_nbclient_lets_only_tagged_cells_fail(tmp_path: Path) -> None:
    """What the runs below rely on: a tagged error is recorded and passed over, an untagged
    one stops the notebook."""
    tagged = nbformat.v4.new_code_cell("1 / 0")
    tagged.metadata["tags"] = [RAISES]
    notebook = nbformat.v4.new_notebook(
        cells=[tagged, nbformat.v4.new_code_cell("int('x')"), nbformat.v4.new_code_cell("1")]
    )
    run = run_notebook(notebook, tmp_path)
    assert run.failure is not None and "ValueError" in run.failure
    first, second, third = notebook.cells
    assert errors(first) == ["ZeroDivisionError"]
    assert errors(second) == ["ValueError"]
    assert third.execution_count is None  # never reached


@pytest.fixture(scope="module", params=NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def executed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The notebook run once, in a kernel whose working directory is a fresh temp dir."""
    path: Path = request.param
    notebook = nbformat.read(path, as_version=4)
    return run_notebook(notebook, tmp_path_factory.mktemp(path.stem))


@pytest.mark.kernel
def test_notebook_runs_top_to_bottom(executed: Run) -> None:
    assert executed.failure is None, executed.failure
    not_run = [
        where(index, cell)
        for index, cell in enumerate(code_cells(executed.notebook))
        if cell.execution_count is None
    ]
    assert not_run == []


@pytest.mark.kernel
def test_only_cells_tagged_raises_exception_fail_and_they_do(executed: Run) -> None:
    cells = code_cells(executed.notebook)
    tagged = [index for index, cell in enumerate(cells) if RAISES in cell.metadata.get("tags", [])]
    failed = [index for index, cell in enumerate(cells) if errors(cell)]
    # A cell after an unexpected error never ran: that is the other test's failure.
    ran = [index for index in tagged if cells[index].execution_count is not None]
    stale = [where(index, cells[index]) for index in ran if index not in failed]
    untagged = [where(index, cells[index]) for index in failed if index not in tagged]
    assert stale == [], "tagged raises-exception but ran without an error"
    assert untagged == [], "failed without the raises-exception tag"


# The cell left for the learner's own version of each exercise (tools/course_notebook.py).
LEARNERS_CELL = (
    "# Copy the task's code here, then change or complete it until it does what the task asks."
)


@pytest.mark.kernel
def test_the_cells_for_the_learners_own_version_show_nothing(executed: Run) -> None:
    """Run as shipped, each exercise's empty cell shows nothing under it (a ``...``
    placeholder showed ``Ellipsis``)."""
    cells = [cell for cell in code_cells(executed.notebook) if cell.source == LEARNERS_CELL]
    assert cells, "every module has exercises"
    assert [cell.outputs for cell in cells] == [[] for _ in cells]


# Warnings TensorFlow and Keras print that say nothing about the learner's code.
_BYSTANDER_WARNINGS = ("triggered tf.function retracing", "`shuffle=True` was passed")


@pytest.mark.kernel
def test_a_warning_a_cell_prints_is_explained_just_before_it(executed: Run) -> None:
    """A learner who sees TensorFlow's retracing warning or Keras's ``shuffle=True ... will
    be ignored`` under a cell finds it explained in the text right above that cell."""
    unexplained = []
    prose: list[str] = []
    for index, cell in enumerate(executed.notebook.cells):
        if cell.cell_type == "markdown":
            prose.append(cell.source)
            continue
        printed = "".join(
            output.get("text", "")
            for output in cell.get("outputs", [])
            if output.output_type == "stream"
        )
        if any(warning in printed for warning in _BYSTANDER_WARNINGS) and not re.search(
            r"\bwarn", "\n".join(prose), re.I
        ):
            unexplained.append(f"cell {index}: {cell.source.splitlines()[0]!r}")
        prose = []
    assert unexplained == []


# An object's default repr: "<keras.src.callbacks.history.History at 0x7f...>".
_DEFAULT_REPR = re.compile(r"<[\w.]+ (object )?at 0x[0-9a-f]+>")


@pytest.mark.kernel
def test_no_cell_shows_an_objects_address(executed: Run) -> None:
    """A cell's last line is shown when it is a value: ``model.fit(...)`` as the last line
    showed ``<keras.src.callbacks.history.History at 0x...>``, which teaches nothing. Every
    result a cell shows is one the text explains (a shape, a number, a list)."""
    shown = [
        where(index, cell)
        for index, cell in enumerate(code_cells(executed.notebook))
        for output in cell.get("outputs", [])
        if output.output_type == "execute_result"
        and _DEFAULT_REPR.search(output.get("data", {}).get("text/plain", ""))
    ]
    assert shown == []
