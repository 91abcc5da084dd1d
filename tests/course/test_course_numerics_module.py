"""The numerics and reproducibility module (issue #28): what a blind review asked of it.

What its examples print is checked elsewhere (``test_course_examples.py`` runs every block,
``test_course_notebooks.py`` the notebook).
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.course import Module, get_course
from tests.tf_runner import run_tensorflow

TITLE = "Numerics and reproducibility"
_FOLDED_ANSWER = re.compile(
    r"<details><summary>(?P<question>[^<\n]+\?)</summary>\n\n(?P<answer>.+?)\n\n</details>", re.S
)


def numerics_module() -> Module:
    [module] = [module for module in get_course().modules if module.title == TITLE]
    return module


def test_interleave_is_taught_where_the_module_first_uses_it() -> None:
    """Review 8 (#28): the module used ``interleave``, which no module teaches. Two lines
    say what it does in the first sentence that names it."""
    text = numerics_module().markdown
    first_use = text.index("interleave")
    taught = text.index("`interleave(fn, cycle_length=n)` takes in turn from")
    assert taught - first_use < 400  # in the same bullet


def test_one_review_question_asks_about_tf32() -> None:
    """Review 8 (#28): two review questions overlapped on TF32; one kept it, the other asks
    about an out-of-range id, which a CPU refuses and a GPU reads as zeros."""
    text = numerics_module().markdown
    review = text[text.index("\n## Review\n") :]
    answers = [(m["question"], m["answer"]) for m in _FOLDED_ANSWER.finditer(review)]
    assert len([q for q, a in answers if "TF32" in q + a]) == 1
    [embedding] = [a for q, a in answers if "Embedding" in q]
    assert "GPU only" in embedding and "zeros" in embedding


def _exercise(title: str) -> tuple[str, str, str]:
    """An exercise of the module: its text, its task and its solution."""
    text = numerics_module().markdown
    chunk = text[text.index(f"\n### {title}\n") :]
    chunk = chunk[: chunk.index("</details>")]
    task_part, _, solution_part = chunk.partition("<details><summary>Solution</summary>")
    [task] = _BLOCK.findall(task_part)
    [solution] = _BLOCK.findall(solution_part)
    return chunk, task, solution


_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def test_an_exercise_makes_a_seeded_script_repeat_in_fresh_processes() -> None:
    """Review 11 (#28): the module teaches seeds and determinism but had no exercise on them.
    A build task: a script seeded with keras.utils.set_random_seed still gives another loss
    in each fresh process, for two reasons the seed does not cover (a set of strings that
    numbers the classes, a shared random state in a parallel map); the solution's two runs
    print the same loss, bit for bit."""
    text, task, solution = _exercise("Two runs, two losses")
    assert "<!-- exercise: build -->" in text
    assert "keras.utils.set_random_seed(0)" in task and "list(set(" in task
    assert "sorted(set(" in solution and "stateless_uniform" in solution
    assert "rerandomize_each_iteration=True" in solution
    # The task's two runs nearly always differ, but by chance (a set's order, threads' turns),
    # so only the solution's verdict is asserted.
    task_runs, solved = run_tensorflow(task, solution)
    assert task_runs.error is None and solved.error is None
    printed, verdict = solved.stdout.strip().split("] ")
    first, second = ast.literal_eval(printed + "]")
    assert first == second and float(first) > 0 and verdict == "the same"
    # What it teaches is in the section before it: a seed covers random draws only.
    section = get_course().section("reproducibility").markdown
    assert "A seed fixes random draws and nothing else" in section
    assert "`set` of strings" in section


def test_mixed_precision_is_taught_here_with_its_exercise_and_review_question() -> None:
    """Review 11 (#28): numerics belong here, so module 4's mixed precision moved in, after
    float64 (16-bit floats trade the digits float64 buys), with its exercise and question."""
    module = numerics_module()
    order = [section.id for section in module.sections]
    assert order.index("nan-inf") + 1 == order.index("mixed-precision")
    text = module.markdown
    opening = text[: text.index('<a id="placement-numerics">')]
    assert "mixed precision" in opening and "**One sitting:** about" in opening
    review = text[text.index("\n## Review\n") :]
    questions = [m["question"] for m in _FOLDED_ANSWER.finditer(review)]
    assert any("mixed_float16" in question for question in questions)
    assert not [q for q in questions if q.startswith(("What is", "Name", "What are"))]
    _, task, solution = _exercise("Mixed precision by hand")
    assert "LossScaleOptimizer" not in task and "scale_loss" in solution
