"""A library call's results unpacked in another order than it returns them (issue #25):
``u, s, v = tf.linalg.svd(x)`` (TensorFlow returns ``s, u, v``), ``r, q = tf.linalg.qr(a)``,
``v, e = tf.linalg.eigh(c)``; the error comes later, where a name holding another result
than it says meets an op (a matmul given the singular values as ``u``).

The order is the library's own: its docstring's ``Returns:`` section lists the results by
name (``s: ... u: ... v: ...``, ``A tuple of `Tensor` objects (q, r)``, ```mean` and
`variance```). When the names the learner unpacked into are exactly those names in another
order, and the failing statement uses one of the names that moved, the reading names the
documented order, says what each misplaced name really holds (its shape), and the fix
unpacks in the documented order. Names that are not the documented ones say nothing (the
intent cannot be read from them).
"""

from __future__ import annotations

import ast
import inspect
import re

from jupyterlab_tfcoach.monitor.errors.calls import library_callee
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.failing_line import describe as describe_value
from jupyterlab_tfcoach.monitor.errors.family_record import ErrorFamily, Finding, Recognised

_SECTION_END = re.compile(r"\n\s*\n(?=\S)|\n(?:Raises|Examples|Usage|Note|References):")
_LISTED = re.compile(r"^\s{1,6}(\w+):", re.M)
_TUPLE = re.compile(r"\(([A-Za-z_]\w*(?:, [A-Za-z_]\w*)+)\)")
_BACKTICKED = re.compile(r"`([A-Za-z_]\w*)` and `([A-Za-z_]\w*)`")
_MAX_DOC = 3000
_MAX_STATEMENTS = 400


def documented_results(doc: str) -> list[str]:
    """The names the ``Returns:`` section gives the results, in order ([] if none)."""
    start = doc.find("Returns:")
    if start < 0:
        return []
    section = doc[start + len("Returns:") : start + _MAX_DOC]
    for pattern in (_TUPLE, _BACKTICKED):
        found = pattern.search(section.split("\n\n", 1)[0])
        if found is not None:
            names = (
                [part.strip() for part in found.group(1).split(",")]
                if pattern is _TUPLE
                else [found.group(1), found.group(2)]
            )
            return names if len(set(names)) == len(names) else []
    names = _LISTED.findall(section.split("\nRaises:", 1)[0])
    return names if len(names) >= 2 and len(set(names)) == len(names) else []


def _unpackings(line: FailingLine) -> list[ast.Assign]:
    """The cell's statements before the failing one that unpack a call into plain names."""
    tree = line.frame.tree()
    if tree is None:
        return []
    found = []
    for count, node in enumerate(ast.walk(tree)):
        if count > _MAX_STATEMENTS:
            break
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Tuple)
            and all(isinstance(target, ast.Name) for target in node.targets[0].elts)
            and isinstance(node.value, ast.Call)
            and node.lineno <= line.frame.position.line
        ):
            found.append(node)
    return found


def _used_on_line(line: FailingLine) -> set[str]:
    statement = line.statement
    if statement is None:
        return set()
    return {node.id for node in ast.walk(statement) if isinstance(node, ast.Name)}


def _read_return_order(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    del error
    used = _used_on_line(line)
    if not used:
        return None
    for statement in _unpackings(line):
        call = statement.value
        targets = [target.id for target in statement.targets[0].elts]  # type: ignore[union-attr]
        if not used & set(targets):
            continue
        callee = library_callee(call.func, line.frame, context)  # type: ignore[union-attr]
        if callee is None:
            continue
        names = documented_results(inspect.getdoc(callee) or "")
        if sorted(names) != sorted(targets) or names == targets:
            continue
        misplaced = [name for index, name in enumerate(targets) if names[index] != name]
        if not used & set(misplaced):
            continue
        return _finding(statement, call, targets, names, misplaced, line, context)
    return None


def _finding(
    statement: ast.Assign,
    call: ast.expr,
    targets: list[str],
    names: list[str],
    misplaced: list[str],
    line: FailingLine,
    context: ErrorContext,
) -> Finding:
    called = line.frame.segment(call.func) or "the call"  # type: ignore[attr-defined]
    holds = []
    for index, name in enumerate(targets):
        if name not in misplaced or len(holds) >= 3:
            continue
        found, value = value_of(ast.Name(id=name), line.frame, context)
        shown = describe_value(name, value) if found else None
        what = f", {shown.description}" if shown is not None and shown.description else ""
        holds.append(f"{code(name)} holds the {code(names[index])} result{what}")
    rule = (
        f"{code(called)} returns {', '.join(code(n) for n in names)} in that order (its "
        f"documentation's Returns section), and line {statement.lineno} unpacks them as "
        f"{', '.join(code(n) for n in targets)}: " + "; ".join(holds)
    )
    fixed = rewrite(line.frame, statement, statement.targets[0], ", ".join(names))
    fix = code(fixed) if fixed and "\n" not in fixed else None
    if fix is not None:
        rule += f". Unpack them in the documented order on line {statement.lineno}"
    return Finding(rule + ".", fix)


RETURN_ORDER = ErrorFamily(
    "a library call's results unpacked in another order than it returns them",
    messages=(),
    read=_read_return_order,
    section="shape-dtype-device",
)
