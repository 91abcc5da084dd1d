"""Every quick fix is proven (issue #26), on the cases the rule tests declare.

Each `tests/analysis/test_rule_tfc*.py` that tests a rule with a fix declares `FIX_CASES`
(`analysis/testing.py`, `FixCase`). Here every case has all its fixes applied, one at a time,
each through `testing.fixed`, which fails unless the result (a) parses, (b) no longer has
the finding and (c) has no new finding from any rule (every test's own `fixed(...)` call
proves the same). Then (d): the runnable cases (they end by printing a result) run under real
TensorFlow, the intended code and the fixed code, all in one child process: the fixed code
must run and print what the intended code prints.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import textwrap
from pathlib import Path

import pytest

from jupyterlab_tfcoach.analysis import RULES
from jupyterlab_tfcoach.analysis.testing import FixCase
from tests.tf_runner import run_tensorflow

_RULE_TESTS = sorted(Path(__file__).parent.glob("test_rule_tfc*.py"))
# `tf.print` writes to the process's standard error, not to the printed output compared here.
_NOT_RUNNABLE = {"TFC002": "tf.print writes to standard error"}


def _declared_cases() -> list[FixCase]:
    cases: list[FixCase] = []
    for path in _RULE_TESTS:
        module = importlib.import_module(f"tests.analysis.{path.stem}")
        cases.extend(getattr(module, "FIX_CASES", ()))
    return cases


CASES = _declared_cases()


def _case_id(case: FixCase) -> str:
    return f"{case.code}-{case.note or 'case'}".replace(" ", "-")


def _rules_with_fixes() -> set[str]:
    """Rules whose module builds a `Fix` (read from the code, so a new one is not missed)."""
    codes = set()
    for rule in RULES:
        tree = ast.parse(inspect.getsource(inspect.getmodule(rule.check)))  # type: ignore[arg-type]
        if any(
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Fix"
            for node in ast.walk(tree)
        ):
            codes.add(rule.code)
    return codes


def test_every_rule_with_a_fix_declares_cases_and_a_runnable_one():
    with_fixes = _rules_with_fixes()
    assert {"TFC001", "TFC004", "TFC006", "TFC011"} <= with_fixes
    declared = {case.code for case in CASES}
    assert with_fixes <= declared, f"no FIX_CASES for {sorted(with_fixes - declared)}"
    runnable = {case.code for case in CASES if case.runnable}
    assert with_fixes - runnable == set(_NOT_RUNNABLE)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_each_fix_parses_removes_its_finding_and_adds_none(case: FixCase):
    fixed_source = case.fully_fixed()  # (a)-(c) at each step, in `testing.fixed`
    assert fixed_source != textwrap.dedent(case.source)


def test_fixed_code_prints_what_the_intended_code_prints():
    runnable = [case for case in CASES if case.runnable]
    sources = [text for case in runnable for text in (case.intended_source(), case.fully_fixed())]
    outcomes = run_tensorflow(*sources)
    for index, case in enumerate(runnable):
        intended, fixed = outcomes[2 * index], outcomes[2 * index + 1]
        assert intended.error is None, f"{_case_id(case)}: the intended code raised"
        assert intended.stdout, f"{_case_id(case)}: the intended code printed nothing"
        assert fixed.error is None, f"{_case_id(case)}: the fixed code raised {fixed.error}"
        assert fixed.stdout == intended.stdout, _case_id(case)
