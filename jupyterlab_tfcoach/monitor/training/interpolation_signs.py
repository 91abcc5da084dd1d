"""An in-place step toward a target written with the difference reversed: away from it.

Reptile's meta-step, a soft target-network update, a running average and the Lookahead
optimizer move a variable ``w`` a fraction ``c`` of the way toward a target ``t``:
``w.assign_add(c * (t - w))``. Written ``w.assign_add(c * (w - t))`` (or
``w.assign(w + c * (w - t))``, or ``w.assign_sub(c * (t - w))``), every step multiplies the
gap ``w - t`` by ``1 + c``: ``w`` runs away from what it should approach, and nothing
raises.

Read from the source of the cell and of the notebook functions its top level calls (by
``inspect``, never called): the update is an ``assign_add``/``assign_sub``/``assign`` on a
name or attribute ``w`` whose added term is ``c * (w - t)`` (``assign_sub``: ``c * (t -
w)``), either order of the product, ``c`` a number above zero (a literal, a name holding
one in the namespace, or a parameter of the function with such a default). Silent when
``t`` is named as an earlier value of ``w`` (``prev``, ``old``, ``last``...): momentum
and Nesterov's look-ahead extrapolate past the last step on purpose. Told once per
statement, in the cell that runs it. The fix is the difference the other way round.
"""

from __future__ import annotations

import ast
import functools
import numbers
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import (
    dotted_name,
    function_scopes,
    number_literal,
    parsed_source,
    scope_nodes,
)
from jupyterlab_tfcoach.monitor.training.user_code import (
    called_function_sources,
    called_names,
)

SECTION = "training-loop"
MAX_CELL_CHARS = 50_000
_CACHED_SOURCES = 64
# A target named as an earlier value of the variable: an extrapolation, meant.
_EARLIER_WORDS = frozenset(
    {"prev", "previous", "old", "last", "before", "past", "lag", "lagged", "worst", "bad"}
)


@dataclass(frozen=True)
class AwayStep:
    statement: str  # ``w.assign_add(eps * (w - f))``
    fix: str  # ``w.assign_add(eps * (f - w))``
    receiver: str  # ``w``
    target: str  # ``f``
    step: str  # ``eps``
    step_value: float | None
    step_default: str | None  # a parameter's default, as written
    function: str | None


def _words(name: str) -> set[str]:
    return {part for part in re.split(r"[_\d.]+", name.lower()) if part}


def _segment(source: str, node: ast.AST) -> str:
    return ast.get_source_segment(source, node) or ""


def _scaled_difference(node: ast.AST) -> tuple[ast.AST, ast.BinOp] | None:
    """``(c, a - b)`` of ``c * (a - b)`` / ``(a - b) * c``."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return None
    for step, difference in ((node.left, node.right), (node.right, node.left)):
        if isinstance(difference, ast.BinOp) and isinstance(difference.op, ast.Sub):
            return step, difference
    return None


def _defaults(scope: ast.AST) -> dict[str, ast.expr]:
    arguments = getattr(scope, "args", None)
    if not isinstance(arguments, ast.arguments):
        return {}
    positional = [*arguments.posonlyargs, *arguments.args]
    found = {
        p.arg: d
        for p, d in zip(
            positional[len(positional) - len(arguments.defaults) :],
            arguments.defaults,
            strict=True,
        )
    }
    for parameter, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        if default is not None:
            found[parameter.arg] = default
    return found


def _scope_steps(source: str, scope: ast.AST) -> list[AwayStep]:
    found: list[AwayStep] = []
    defaults = _defaults(scope)
    for node in scope_nodes(scope):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("assign_add", "assign_sub", "assign")
            and len(node.args) == 1
            and not node.keywords
        ):
            continue
        receiver = dotted_name(node.func.value)
        if receiver is None:
            continue
        term: ast.AST = node.args[0]
        if node.func.attr == "assign":
            # ``w.assign(w + c * (w - t))``
            if not (
                isinstance(term, ast.BinOp)
                and isinstance(term.op, ast.Add)
                and dotted_name(term.left) == receiver
            ):
                continue
            term = term.right
        scaled = _scaled_difference(term)
        if scaled is None:
            continue
        step, difference = scaled
        first, second = dotted_name(difference.left), dotted_name(difference.right)
        if first is None or second is None:
            continue
        # assign_add / assign: the gap grows when the term is ``c * (w - t)``;
        # assign_sub: when it is ``c * (t - w)``.
        if node.func.attr == "assign_sub":
            target, moving = first, second
        else:
            moving, target = first, second
        if moving != receiver or target == receiver:
            continue
        if _words(target) & _EARLIER_WORDS:
            continue
        if not (isinstance(step, ast.Name) or number_literal(step) is not None):
            continue
        statement = _segment(source, node)
        difference_text = _segment(source, difference)
        if not statement or not difference_text or difference_text not in statement:
            continue
        swapped = f"{second} - {first}"
        fix = statement.replace(difference_text, swapped, 1)
        default = defaults.get(step.id) if isinstance(step, ast.Name) else None
        default_text = (
            _segment(source, default)
            if default is not None
            and (isinstance(default, ast.Name) or number_literal(default) is not None)
            else None
        )
        found.append(
            AwayStep(
                statement=statement,
                fix=fix,
                receiver=receiver,
                target=target,
                step=_segment(source, step),
                step_value=number_literal(step),
                step_default=default_text,
                function=getattr(scope, "name", None),
            )
        )
    return found


@functools.lru_cache(maxsize=_CACHED_SOURCES)
def _source_steps(source: str) -> tuple[AwayStep, ...]:
    tree = parsed_source(source)
    if tree is None:
        return ()
    found: list[AwayStep] = []
    for scope in function_scopes(tree):
        found.extend(_scope_steps(source, scope))
    return tuple(found)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    try:
        return float(value)
    except Exception:
        return None


def _positive(step: AwayStep, namespace: Mapping[str, Any]) -> bool:
    if step.step_value is not None:
        return step.step_value > 0
    value = _number(namespace.get(step.step))
    if value is None and step.step_default is not None:
        try:
            value = number_literal(ast.parse(step.step_default, mode="eval").body)
        except Exception:
            value = None
        if value is None:
            value = _number(namespace.get(step.step_default))
    return value is not None and value > 0


class InterpolationCheck:
    """Each statement told once (by function and text), in the cell that runs it."""

    def __init__(self) -> None:
        self._told: set[tuple[str | None, str]] = set()

    def notes(self, source: str, namespace: Mapping[str, Any]) -> list[Note]:
        if len(source) > MAX_CELL_CHARS:
            return []
        steps: list[tuple[AwayStep, str | None]] = []
        if "assign" in source:
            called = called_names(source)
            steps.extend(
                (s, None)
                for s in _source_steps(source)
                if s.function is None or s.function in called
            )
        if not steps:
            for name, text in called_function_sources(source, namespace, "assign"):
                steps.extend((s, name) for s in _source_steps(text))
        for step, called in steps:
            key = (step.function, step.statement)
            if key in self._told or not _positive(step, namespace):
                continue
            self._told.add(key)
            return [reports.note(_text(step, called), SECTION)]
        return []


def _text(step: AwayStep, called: str | None) -> str:
    where = f" in `{step.function}`" if step.function else ""
    if called and called != step.function:
        where += f" (called here through `{called}`)"
    return (
        f"A step away from its target: `{step.statement}`{where} moves `{step.receiver}` "
        f"by `{step.step}` times `{step.receiver} - {step.target}`, which is away from "
        f"`{step.target}`: each step makes the gap `{step.receiver} - {step.target}` larger "
        f"by a factor of 1 + `{step.step}`, instead of closing that fraction of it. Nothing "
        f"raises. To move `{step.receiver}` toward `{step.target}` (an interpolation, as in "
        f"Reptile's meta-step, a soft target update or a running average), take the "
        f"difference the other way: `{step.fix}`, then start the variables afresh."
    )


_CHECK = InterpolationCheck()


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The check of this kernel (the statements told so far: source text only)."""
    return _CHECK.notes(source, namespace)
