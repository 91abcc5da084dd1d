"""The input pipeline module (issue #28): read right after module 4, a full module of its own
(the speed stages taught and measured, every tool taught before a block uses it, exercises
with folded solutions), its section ids kept.

The module is found by its title, not by its file name. What its examples print is checked
elsewhere (``test_course_examples.py`` runs every block, ``test_course_notebooks.py`` the
notebook).
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.course import Module, get_course

TITLE = "Feeding the model: tf.data input pipelines"
_BLOCK = re.compile(r"^```python\n(?P<source>.*?)^```\n", re.S | re.M)


def pipeline_module() -> Module:
    [module] = [module for module in get_course().modules if module.title == TITLE]
    return module


def part(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else len(text)]


def test_it_is_read_right_after_module_4() -> None:
    ids = [module.id for module in get_course().modules]
    assert ids.index(pipeline_module().id) == ids.index("module-04") + 1 == 4


def test_its_sections_keep_their_ids_and_add_the_speed_stages() -> None:
    sections = [section.id for section in pipeline_module().sections]
    assert sections == ["tf-data", "tf-data-files", "tf-data-speed", "tf-data-order"]


def test_each_tool_is_taught_in_prose_before_a_block_uses_it() -> None:
    """The review found ``.unbatch()`` used but never taught: each of these appears in the
    module's prose (outside code blocks) before the first block that calls it."""
    text = pipeline_module().markdown
    blocks = [(match.start(), match["source"]) for match in _BLOCK.finditer(text)]
    prose = _BLOCK.sub(lambda match: " " * len(match[0]), text)
    for name in (
        "element_spec",
        "take(",
        "batch(",
        "unbatch(",
        "map(",
        "num_parallel_calls",
        "prefetch(",
        "cache(",
        "shuffle(",
        "skip(",
        "concatenate",
        "tf.py_function",
        "inject_prefetch",
        "drop_remainder",
    ):
        first_use = min(start for start, source in blocks if name in source)
        taught = prose.find(name)
        assert 0 <= taught < first_use, name


def assert_the_clock_stops_before_the_iterator_closes(program: str) -> None:
    """Review 38: a pass timed as ``for _ in dataset:`` also timed closing the iterator,
    which on TensorFlow 2.21 sometimes takes 0.6 s more, so one printed time in a few
    doubled. Each function that times a loop (reads the clock twice around a ``for``)
    loops over an iterator it keeps in a name (``iter(...)``), which outlives the second
    reading."""
    timed = 0
    for function in ast.walk(ast.parse(program)):
        if not isinstance(function, ast.FunctionDef):
            continue
        clock = [node for node in ast.walk(function) if _calls(node, "perf_counter")]
        loops = [node for node in ast.walk(function) if isinstance(node, ast.For)]
        if len(clock) < 2 or not loops:
            continue
        timed += 1
        kept = {
            target.id
            for node in ast.walk(function)
            if isinstance(node, ast.Assign) and _calls(node.value, "iter")
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for loop in loops:
            assert isinstance(loop.iter, ast.Name) and loop.iter.id in kept, function.name
    assert timed > 0  # the check saw the program's timing function


def _calls(node: ast.AST, name: str) -> bool:
    if not isinstance(node, ast.Call):
        return False
    called = node.func
    return (isinstance(called, ast.Name) and called.id == name) or (
        isinstance(called, ast.Attribute) and called.attr == name
    )


def test_the_speed_stages_are_measured_and_the_gain_said_to_depend_on_the_machine() -> None:
    speed = pipeline_module().sections[2].markdown
    # Two programs since review 38 (one brought in too much at once): the overlap, then the
    # parallel reads and the cache.
    programs = [block for block in _BLOCK.findall(speed) if "perf_counter" in block]
    timing = "\n".join(programs)
    assert len(programs) == 2
    assert "inject_prefetch = False" in programs[0]  # a pipeline without any prefetch first
    for stage in ("num_parallel_calls=AUTOTUNE", ".prefetch(AUTOTUNE)", ".cache()"):
        assert stage in timing, stage
    assert "depends on the machine" in speed and "on your machine" in speed
    for program in programs:
        assert_the_clock_stops_before_the_iterator_closes(program)
    # Where the cache goes with a random stage: both orders shown, side by side, in the
    # section on the order of the stages (the monitor's cache-after-augmentation note
    # links there).
    order = get_course().section("tf-data-order").markdown
    assert ".map(augment).cache()" in order and ".cache().map(augment)" in order


def test_three_exercises_ask_for_transfer_with_one_task_and_one_folded_solution_each() -> None:
    # Three since review 12 (a fourth made the sitting longer than 90 minutes).
    turn = part(pipeline_module().markdown, "Your turn")
    exercises = turn.split("\n### ")[1:]
    assert len(exercises) >= 3
    for exercise in exercises:
        task, _, solution = exercise.partition("<details><summary>Solution</summary>")
        [task_block] = _BLOCK.findall(task)
        [solution_block] = _BLOCK.findall(solution)
        assert task_block != solution_block
        # The task's comments do not say what to change: the fix's key call is not in it.
        for line in task_block.splitlines():
            comment = line.partition("#")[2]
            assert "unbatch" not in comment and "cache" not in comment, line
    tasks = "\n".join(exercises)
    # unbatch and the speed stages are asked for in settings the sections did not show.
    assert "Recordings of different lengths" in tasks and "An epoch that waits" in tasks


def test_the_waiting_epoch_gives_the_disks_limit_as_the_number_its_solution_uses() -> None:
    """Review 38: "the disk serves a few reads at once" left no way to know when the epochs
    were short enough (more threads were always shorter); the task states the limit as a
    number, and the solution's pool and its reads at once are that number."""
    turn = part(pipeline_module().markdown, "Your turn")
    exercise = turn[turn.index("### An epoch that waits") :]
    task, _, solution = exercise.partition("<details><summary>Solution</summary>")
    limit = re.search(r"at most\s+(\d+)\s+reads at once", task)
    assert limit is not None
    assert f"num_parallel_calls={limit[1]}" in solution
    assert f"private_threadpool_size = {limit[1]}" in solution
    # Review 38: its task is a program that runs as it should, only slowly, so it is marked
    # as one to improve (tfcoach has nothing to flag in it), not as code to build.
    assert "<!-- exercise: improve -->" in task and "<!-- exercise: build -->" not in task
