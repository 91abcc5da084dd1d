"""Every example of the course runs as its text says, with real TensorFlow.

A ```python block is self-contained (its own imports and data) and runs in a fresh
namespace. A block that shows an error starts with ``# raises: <ExceptionName>`` and
must raise exactly that; every other block must raise nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from jupyterlab_tfcoach.analysis import analyze_source
from jupyterlab_tfcoach.course import MODULES_DIR
from tests.tf_runner import run_tensorflow

pytestmark = pytest.mark.timeout(600)

_BLOCK = re.compile(r"^```python\n(?P<source>.*?)^```", re.S | re.M)
_RAISES = re.compile(r"# raises: (?P<name>\w+)$")


@dataclass(frozen=True)
class Example:
    where: str  # module file and line of the opening fence
    source: str

    @property
    def declared_error(self) -> str | None:
        first = self.source.splitlines()[0] if self.source.strip() else ""
        match = _RAISES.fullmatch(first.strip())
        return match["name"] if match else None


def _examples() -> list[Example]:
    found = []
    for path in sorted(MODULES_DIR.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        for match in _BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(Example(f"{path.name}:{line}", match["source"]))
    return found


EXAMPLES = _examples()


def test_the_course_has_examples_in_every_module() -> None:
    modules = {example.where.split(":")[0] for example in EXAMPLES}
    assert modules == {path.name for path in MODULES_DIR.glob("*.md")}


def test_raises_comments_are_only_first_lines() -> None:
    misplaced = [
        example.where
        for example in EXAMPLES
        if "# raises:" in example.source and example.declared_error is None
    ]
    assert misplaced == []


MODULE_FILES = sorted({example.where.split(":")[0] for example in EXAMPLES})


# One TensorFlow process per module: each module's blocks get the runner's whole time
# budget, and a failure names its module.
@pytest.mark.parametrize("module_file", MODULE_FILES)
def test_every_example_runs_as_the_text_says(module_file: str) -> None:
    examples = [example for example in EXAMPLES if example.where.startswith(module_file + ":")]
    outcomes = run_tensorflow(*(example.source for example in examples))
    wrong = [
        f"{example.where}: expected {example.declared_error or 'no error'}, got "
        f"{outcome.error or 'no error'}"
        for example, outcome in zip(examples, outcomes, strict=True)
        if outcome.error != example.declared_error
    ]
    assert wrong == []


# An exercise is a program with a problem to find and fix (tfcoach must flag it), unless
# its section carries one of these markers: the task is code to complete or extend
# (``build``), a program that runs as it should and is to be made better, such as
# faster (``improve``; review 38 found a slow program marked ``build``), or a program
# whose mistakes the learner finds without the coach (``find``; review 42 found such a
# task marked ``build``). The coach has nothing to say about any of them, and only the
# solution is held to the coach.
BUILD_MARKER = "<!-- exercise: build -->"
IMPROVE_MARKER = "<!-- exercise: improve -->"
FIND_MARKER = "<!-- exercise: find -->"


@dataclass(frozen=True)
class Exercise:
    where: str
    task: str  # the program with the problem, or the code to complete
    solution: str
    builds: bool = False


def _exercises() -> list[Exercise]:
    found = []
    for path in sorted(MODULES_DIR.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        start = text.find("\n## Your turn\n")
        if start < 0:
            continue
        end = text.find("\n## ", start + 1)
        part = text[start : end if end > 0 else len(text)]
        for chunk in part.split("\n### ")[1:]:
            title = chunk.splitlines()[0]
            task_part, _, solution_part = chunk.partition("<details>")
            tasks = [m["source"] for m in _BLOCK.finditer(task_part)]
            solutions = [m["source"] for m in _BLOCK.finditer(solution_part)]
            assert len(tasks) == len(solutions) == 1, (path.name, title)
            builds = any(
                marker in task_part for marker in (BUILD_MARKER, IMPROVE_MARKER, FIND_MARKER)
            )
            found.append(Exercise(f"{path.name}: {title}", tasks[0], solutions[0], builds))
    return found


EXERCISES = _exercises()


def test_every_module_has_exercises() -> None:
    modules = {exercise.where.split(":")[0] for exercise in EXERCISES}
    assert modules == {path.name for path in MODULES_DIR.glob("*.md")}


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda exercise: exercise.where)
def test_the_coach_flags_the_task_and_not_the_solution(exercise: Exercise) -> None:
    if exercise.builds:
        assert exercise.task.strip() != exercise.solution.strip(), "the task is its solution"
    else:
        assert analyze_source(exercise.task), "the task shows no tfcoach finding"
    assert [f"{f.code} line {f.line}" for f in analyze_source(exercise.solution)] == []
