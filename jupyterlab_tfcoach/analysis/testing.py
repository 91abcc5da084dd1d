"""Helpers for testing rules: run one rule, read ranges, apply fixes and prove them; inputs
of the worst-case shapes (tests and `benchmarks/bench_worst_cases.py`).

Every fix a test applies goes through `fixed`, which proves it (issue #26): the result
(a) parses, (b) no longer has the finding, and (c) gets no new finding from any rule. A
finding counts as the same before and after the fix when its rule and its start, moved
through the fix's edits, agree (or its rule and message do): the fix shifts the text after
it, and a finding containing the edit may change its message, not its place.

Rule test modules also declare `FIX_CASES` (`FixCase`): sources whose fixes
`tests/analysis/test_fixes_proven.py` proves as above and, for the runnable ones (they end by
printing a result), (d) runs under TensorFlow: the fixed code prints what the intended code
prints.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from jupyterlab_tfcoach.analysis import Config, Finding, analyze_cells, analyze_source
from jupyterlab_tfcoach.analysis.findings import Edit
from jupyterlab_tfcoach.analysis.fixes import apply_edits
from jupyterlab_tfcoach.analysis.positions import split_lines


def only(code: str) -> Config:
    return Config.from_options(select=[code])


def check(source: str, code: str) -> list[Finding]:
    """Findings of one rule for a (dedented) source."""
    return analyze_source(textwrap.dedent(source), only(code))


def check_cells(cells: Sequence[str], code: str) -> list[Finding]:
    return analyze_cells([textwrap.dedent(cell) for cell in cells], only(code))


def span(finding: Finding) -> tuple[int, int, int, int]:
    return (finding.line, finding.column, finding.end_line, finding.end_column)


def fixed(source: str, finding: Finding, reveals: int = 0) -> str:
    """The (dedented) source with the finding's fix applied, proven: fails unless the
    result parses, no longer has the finding and has no finding (of any rule) it did not
    have before. ``reveals``: how many findings of the same rule the fix brings to light,
    exactly (the same mistake written again later, hidden until now by this one)."""
    assert finding.fix is not None, f"{finding.code} has no fix"
    before_text = textwrap.dedent(source)
    result = apply_edits(before_text, finding.fix.edits)
    ast.parse(result)
    before = analyze_source(before_text)
    after = analyze_source(result)
    move = _position_map(before_text, finding.fix.edits)
    was_at = {(f.code, *move(f.line, f.column)) for f in before}
    was_said = {(f.code, f.message) for f in before}
    fixed_at = (finding.code, *move(finding.line, finding.column))
    remaining = [f for f in after if (f.code, f.line, f.column) == fixed_at]
    assert not remaining, f"the fix of {finding.code} left its finding: {remaining[0].message}"
    new = [
        f
        for f in after
        if (f.code, f.line, f.column) not in was_at and (f.code, f.message) not in was_said
    ]
    if reveals:
        revealed = [f for f in new if f.code == finding.code]
        assert len(revealed) == reveals, f"the fix of {finding.code} revealed {len(revealed)}"
        new = [f for f in new if f.code != finding.code]
    assert not new, "the fix of {} brought new findings: {}".format(
        finding.code, "; ".join(f"{f.code} at {f.line}:{f.column}: {f.message}" for f in new)
    )
    return result


def _position_map(text: str, edits: Iterable[Edit]) -> Callable[[int, int], tuple[int, int]]:
    """Where a (line, column) of ``text`` is after ``edits``: text after an edit shifts by
    what the edit adds; a position inside a replaced span moves to the span's start."""
    lines = split_lines(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    spans = sorted(
        (
            starts[edit.line - 1] + edit.column - 1,
            starts[edit.end_line - 1] + edit.end_column - 1,
            len(edit.new_text),
        )
        for edit in edits
    )
    new_text = apply_edits(text, edits)
    new_starts = [0]
    for line in split_lines(new_text):
        new_starts.append(new_starts[-1] + len(line) + 1)

    def move(line: int, column: int) -> tuple[int, int]:
        offset = starts[line - 1] + column - 1
        moved = offset
        for start, end, added in spans:
            if end <= offset and (start < offset or start == end):
                moved += added - (end - start)
            elif start <= offset < end:
                moved -= offset - start
        new_line = next(i for i in range(len(new_starts) - 1, -1, -1) if new_starts[i] <= moved)
        return new_line + 1, moved - new_starts[new_line] + 1

    return move


@dataclass(frozen=True)
class FixCase:
    """A source (dedented) with findings of rule ``code`` that have fixes.

    ``intended``: code doing what the source means to do, whose printed output the fixed
    source must print too; None when the source itself runs as meant (a fix for speed or
    clarity). Only sources ending in a top-level ``print(...)`` are run.
    """

    code: str
    source: str
    intended: str | None = None
    note: str = ""  # what the case shows, for the test's id

    @property
    def runnable(self) -> bool:
        body = ast.parse(textwrap.dedent(self.source)).body
        last = body[-1] if body else None
        return (
            isinstance(last, ast.Expr)
            and isinstance(last.value, ast.Call)
            and isinstance(last.value.func, ast.Name)
            and last.value.func.id == "print"
        )

    def fully_fixed(self) -> str:
        """The source with every fix of its rule applied, one at a time (each proven by
        `fixed`), re-checking after each; fails if the case has no fix at all."""
        text = textwrap.dedent(self.source)
        applied = 0
        while True:
            fixable = [f for f in check(text, self.code) if f.fix is not None]
            if not fixable:
                break
            text = fixed(text, fixable[0])
            applied += 1
            assert applied <= 50, f"{self.code}: the fixes do not converge"
        assert applied, f"{self.code} offers no fix for {self.note or self.source[:60]!r}"
        return text

    def intended_source(self) -> str:
        return textwrap.dedent(self.intended if self.intended is not None else self.source)


def eagerly(source: str) -> str:
    """``source`` with its tf.functions run as plain Python (from its TensorFlow import on):
    what a tf.function means is what its Python code does eagerly."""
    head, import_line, rest = textwrap.dedent(source).partition("import tensorflow as tf\n")
    assert import_line, "the source imports TensorFlow as tf"
    return f"{head}{import_line}tf.config.run_functions_eagerly(True)\n{rest}"


# -- worst-case inputs (issue #13): shapes the analysis must handle in linear time --------

_HEAD = "import tensorflow as tf\n\nc = len([]) > 0\nw = tf.Variable(1.0)\n"


def straight_rebinds(n: int) -> str:
    """``n`` straight-line rebinds of one name: the baseline every shape is compared with."""
    return _HEAD + "w = w - 0.1\nw = w * 2\n" * (n // 2)


def if_else_rebinds(n: int) -> str:
    """``n`` rebinds in ``n / 2`` if/else statements (2,000 of them: the issue's 106 KiB file)."""
    return _HEAD + "if c:\n    w = w - 0.1\nelse:\n    w = w * 2\n" * (n // 2)


def if_rebinds(n: int) -> str:
    return _HEAD + "if c:\n    w = w - 0.1\n" * n


def elif_chain(n: int) -> str:
    """``if`` / ``elif`` chains of 1,000 branches (Python's parser refuses chains a few
    thousand long), ``n`` branches in all, each rebinding the name."""
    chains = []
    for start in range(0, n, 1000):
        branches = "".join(
            f"elif c == {i}:\n    w = w * 2\n" for i in range(1, min(1000, n - start))
        )
        chains.append("if c == 0:\n    w = w - 0.1\n" + branches)
    return _HEAD + "".join(chains) + "print(w)\n"


def loop_rebinds(n: int) -> str:
    return _HEAD + "for _ in range(2):\n    w = w - 0.1\n" * n


def try_rebinds(n: int) -> str:
    return _HEAD + "try:\n    w = w - 0.1\nexcept ValueError:\n    w = w * 2\n" * (n // 2)


def nested_if_rebinds(n: int) -> str:
    """Blocks of ``if`` statements nested 20 deep, a rebind at every level."""
    block = "".join(
        "    " * level + "if c:\n" + "    " * (level + 1) + "w = w - 0.1\n" for level in range(20)
    )
    return _HEAD + block * (n // 20)


def tf_function_rebinds(n: int) -> str:
    body = "    if x:\n        w = w - 0.1\n    else:\n        w = w * 2\n" * (n // 2)
    return (
        _HEAD + "@tf.function\ndef step(x):\n    w = tf.Variable(1.0)\n" + body + "    return w\n"
    )


def many_names(n: int) -> str:
    """``n`` names, each bound on both sides of an ``if`` and read once."""
    return _HEAD + "".join(
        f"if c:\n    v{i} = w - 0.1\nelse:\n    v{i} = w * 2\nu{i} = v{i} + 1\n"
        for i in range(n // 2)
    )


def global_readers(n: int) -> str:
    """A module name rebound ``n / 2`` times and read from ``n / 2`` functions."""
    return _HEAD + "".join(f"w = w * 2\ndef f{i}():\n    return w + 1\n" for i in range(n // 2))


def self_attribute_rebinds(n: int) -> str:
    """``self.w`` rebound in ``n`` methods, each reading it."""
    methods = "".join(f"    def step{i}(self):\n        self.w = self.w - 0.1\n" for i in range(n))
    init = "    def __init__(self):\n        self.w = tf.Variable(1.0)\n"
    return _HEAD + "class Model(tf.Module):\n" + init + methods


def tape_rebinds(n: int) -> str:
    """One name rebound to ``n`` persistent tapes."""
    return _HEAD + "tape = tf.GradientTape(persistent=True)\n" * n


WORST_CASE_SHAPES = {
    "straight": straight_rebinds,
    "if_else": if_else_rebinds,
    "if": if_rebinds,
    "elif_chain": elif_chain,
    "loop": loop_rebinds,
    "try": try_rebinds,
    "nested_if": nested_if_rebinds,
    "tf_function": tf_function_rebinds,
    "many_names": many_names,
    "global_readers": global_readers,
    "self_attribute": self_attribute_rebinds,
    "tapes": tape_rebinds,
}


def deep_sum(terms: int) -> str:
    """``x = 1+1+...``: an expression nested ``terms`` deep (a 400 KB one crashes
    Python 3.10's parser)."""
    return "import tensorflow as tf\nx = " + "+".join(["1"] * terms) + "\n"
