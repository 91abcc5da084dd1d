"""Helpers for testing rules: run one rule, read ranges, apply and re-parse fixes; inputs
of the worst-case shapes (tests and `benchmarks/bench_worst_cases.py`)."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Sequence

from jupyterlab_tfcoach.analysis import Config, Finding, analyze_cells, analyze_source
from jupyterlab_tfcoach.analysis.fixes import apply_edits


def only(code: str) -> Config:
    return Config.from_options(select=[code])


def check(source: str, code: str) -> list[Finding]:
    """Findings of one rule for a (dedented) source."""
    return analyze_source(textwrap.dedent(source), only(code))


def check_cells(cells: Sequence[str], code: str) -> list[Finding]:
    return analyze_cells([textwrap.dedent(cell) for cell in cells], only(code))


def span(finding: Finding) -> tuple[int, int, int, int]:
    return (finding.line, finding.column, finding.end_line, finding.end_column)


def fixed(source: str, finding: Finding) -> str:
    """The source with the finding's fix applied; fails if the result does not parse."""
    assert finding.fix is not None, f"{finding.code} has no fix"
    result = apply_edits(textwrap.dedent(source), finding.fix.edits)
    ast.parse(result)
    return result


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
