"""The architecture / execution-model module (issue #28): as deep as the first module, its
notebook a mirror of it, and its links into the rest of the course resolving.

The module is found by its title, not by its file name, so the test follows it when the
course is renumbered. What its examples print is checked elsewhere
(``test_course_examples.py`` runs every block, ``test_course_notebooks.py`` the notebook).
"""

from __future__ import annotations

import re

import nbformat

from jupyterlab_tfcoach.course import MODULES_DIR, Module, get_course
from tests.tf_runner import run_tensorflow

TITLE = "TensorFlow's architecture and execution model"
_BLOCK = re.compile(r"^```python\n(?P<source>.*?)^```", re.S | re.M)
_FOLDED_ANSWER = re.compile(
    r"<details><summary>(?P<question>[^<\n]+\?)</summary>\n\n.+?\n\n</details>", re.S
)
_LINK = re.compile(r"\]\((?P<file>module-\d+\.md)?#(?P<id>[a-z0-9-]+)\)")


def architecture_module() -> Module:
    [module] = [module for module in get_course().modules if module.title == TITLE]
    return module


def part(text: str, heading: str) -> str:
    """The text of a level-two part (``## Your turn``), up to the next level-two heading."""
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else len(text)]


def test_the_review_asks_the_questions_of_the_issue_with_folded_answers() -> None:
    review = part(architecture_module().markdown, "Review")
    questions = [match["question"] for match in _FOLDED_ANSWER.finditer(review)]
    assert len(questions) >= 8
    assert review.count("<details>") == len(questions)  # every question has its answer
    # The issue's three questions are recall on their own: each is asked of a concrete case
    # that the question opens with, so the answer takes reasoning (review 9, #28), and no
    # question opens with recall ("What is...", "Name...": review 11).
    for asked in (
        "primary benefit of staging computation as a graph",
        "tf.function retrace",
        "practical advantage of eager execution",
    ):
        [question] = [question for question in questions if asked in question]
        assert question.index(asked) > 80, asked
    assert not [q for q in questions if q.startswith(("What is", "Name", "What are"))]


def test_there_are_at_least_three_exercises_each_with_a_folded_solution() -> None:
    turn = part(architecture_module().markdown, "Your turn")
    exercises = turn.split("\n### ")[1:]
    # Five until the input pipeline's exercise went with its sections to the module of its
    # own, module 5 (#28); four until mixed precision went with its exercise to module 8
    # (review 11: one sitting).
    assert len(exercises) >= 3
    assert "### A held-out split" not in turn
    assert "### A held-out split" in get_course().module("module-05").markdown
    assert "### Mixed precision by hand" not in turn
    assert "### Mixed precision by hand" in get_course().module("module-08").markdown
    for exercise in exercises:
        task, _, solution = exercise.partition("<details><summary>Solution</summary>")
        assert len(_BLOCK.findall(task)) == 1, exercise.splitlines()[0]
        assert len(_BLOCK.findall(solution)) == 1, exercise.splitlines()[0]


def test_examples_use_keras_and_say_once_that_tf_keras_is_the_same() -> None:
    text = architecture_module().markdown
    code = "\n".join(match["source"] for match in _BLOCK.finditer(text))
    assert "tf.keras" not in code
    assert "`tf.keras` is the same" in text


def test_the_ids_other_parts_link_to_are_kept() -> None:
    ids = {section.id for section in architecture_module().sections}
    kept = {
        "ops-and-graphs",
        "staging",
        "devices-placement",
        "host-device-copies",
    }
    assert kept <= ids
    assert {"building-blocks", "xla"} <= ids
    # The numbers and reproducibility went on to a module of their own (issue #28), with
    # their ids: the architecture module links there.
    numerics = get_course().module("module-08")
    assert numerics.title == "Numerics and reproducibility"
    assert {"placement-numerics", "tf-data-determinism", "reproducibility"} <= {
        section.id for section in numerics.sections
    }
    text = architecture_module().markdown
    assert "module-08.md#placement-numerics" in text and "module-08.md#reproducibility" in text
    # So did mixed precision (review 11: the module was two sittings long): the module links
    # to it there, in its opening and in its takeaways.
    assert "mixed-precision" not in ids
    assert get_course().section("mixed-precision").module_id == numerics.id
    assert text.count("module-08.md#mixed-precision") == 2
    # So did the input pipeline (issue #28): the module ends at the copies between host and
    # device and points on to module 5, in its opening and in its takeaways.
    pipelines = get_course().module("module-05")
    assert [section.id for section in pipelines.sections] == [
        "tf-data",
        "tf-data-files",  # the file example, a section of its own in the full module 5
        "tf-data-speed",
        "tf-data-order",
    ]
    assert not {"tf-data", "tf-data-order"} & ids
    assert architecture_module().sections[-1].id == "host-device-copies"
    opening = text[: text.index('<a id="building-blocks">')]
    takeaways = part(text, "Key takeaways")
    assert "module-05.md#tf-data" in opening and "module-05.md#tf-data" in takeaways
    assert "`prefetch`" not in takeaways and "`shuffle`" not in takeaways


def _code_cells(module: Module) -> list[str]:
    assert module.notebook is not None
    notebook = nbformat.read(module.notebook, as_version=4)
    return [cell.source.strip() for cell in notebook.cells if cell.cell_type == "code"]


def test_the_notebook_holds_every_example_and_every_task_of_the_module() -> None:
    module = architecture_module()
    cells = _code_cells(module)
    text = module.markdown
    turn = part(text, "Your turn")
    solutions = "".join(chunk.partition("<details>")[2] for chunk in turn.split("\n### ")[1:])
    shown = [
        match["source"].strip()
        for match in _BLOCK.finditer(text)
        if match["source"] not in solutions
    ]
    missing = [source.splitlines()[0] for source in shown if source not in cells]
    assert missing == []
    # Each task is followed by a cell of the learner's own, which runs as it is.
    placeholders = [cell for cell in cells if cell.startswith("# Copy the task's code here")]
    assert len(placeholders) == len(turn.split("\n### ")[1:])
    # The solutions stay folded in the module, out of the notebook.
    assert not any(match["source"].strip() in cells for match in _BLOCK.finditer(solutions))


def test_the_notebook_has_every_section_of_the_module_in_order() -> None:
    module = architecture_module()
    assert module.notebook is not None
    notebook = nbformat.read(module.notebook, as_version=4)
    markdown = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    positions = [markdown.find(f'<a id="{section.id}"></a>') for section in module.sections]
    assert -1 not in positions
    assert positions == sorted(positions)


def test_every_link_between_modules_reaches_an_anchor() -> None:
    """A guard for the course as a whole: `[text](module-NN.md#id)` and `[text](#id)`."""
    broken = []
    for module in get_course().modules:
        for match in _LINK.finditer(module.markdown):
            target = MODULES_DIR / match["file"] if match["file"] else module.path
            if not target.is_file() or f'<a id="{match["id"]}"></a>' not in target.read_text(
                encoding="utf-8"
            ):
                broken.append(f"{module.id}: {match[0]}")
    assert broken == []


def test_the_opening_maps_the_path_through_every_section_in_order() -> None:
    """A review (issue #28) found the module a grab-bag. Its opening now follows one call from
    Python to the kernels, linking each section in the order the sections come, and the key
    takeaways walk the same path."""
    module = architecture_module()
    text = module.markdown
    opening = text[: text.index('<a id="')]
    linked = [match["id"] for match in _LINK.finditer(opening) if match["file"] is None]
    assert linked == [section.id for section in module.sections]
    takeaways = part(text, "Key takeaways")
    stops = ["**Your code**", "**The graph**", "**Before it runs**", "**Where it runs**"]
    stops += ["**What crosses**"]
    assert [takeaways.index(stop) for stop in stops] == sorted(
        takeaways.index(stop) for stop in stops
    )
    # The path ends at the copies; what feeds the step is module 5's (issue #28), what the
    # kernels compute in module 8's (review 11).
    assert "**What feeds it**" not in takeaways
    assert "**How fast the kernels compute**" not in takeaways
    assert takeaways.index("module-05.md#tf-data") > takeaways.index(stops[-1])


def test_the_xla_exercise_asks_for_a_transfer_no_other_exercise_asks() -> None:
    """Review 8 of the second edition (issue #28): the learning-rate schedule exercise
    repeated the retrace pitfall of two other exercises. An XLA exercise took its place: a
    compiled step that prints its loss, where the usual cure for ``print`` in a traced
    function, ``tf.print``, has no XLA kernel. Both halves of the trap are real, and the
    solution reports every loss from one compilation."""
    turn = part(architecture_module().markdown, "Your turn")
    chunks = turn.split("\n### ")[1:]
    assert "A compiled update with a schedule" not in [c.splitlines()[0] for c in chunks]
    [xla] = [c for c in chunks if "jit_compile=True" in c.partition("<details>")[0]]
    task_part, _, solution_part = xla.partition("<details>")
    [task] = [m["source"] for m in _BLOCK.finditer(task_part)]
    [solution] = [m["source"] for m in _BLOCK.finditer(solution_part)]
    assert "    print(" in task
    with_tf_print = task.replace("    print(", "    tf.print(")
    printed_once, tf_print_in_xla, solved = run_tensorflow(task, with_tf_print, solution)
    assert printed_once.error is None
    assert printed_once.stdout.count("step loss:") == 1  # traced once, a symbolic tensor
    assert tf_print_in_xla.error == "InvalidArgumentError"
    assert "`tf.print`" in solution_part and "no XLA kernel" in solution_part
    assert solved.error is None
    losses, traces = solved.stdout.strip().rsplit("\n", 1)
    values = [float(v) for v in losses.replace("[", " ").replace("]", " ").split()]
    assert len(values) == 20 and values[-1] < values[0]
    assert traces == "1"
