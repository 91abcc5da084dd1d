"""A padding mask built True on the padding, given where Keras reads True as "keep".

``pad_mask = tf.equal(ids, 0)`` is True where the token is padding. Keras's
``MultiHeadAttention(attention_mask=...)``, a layer's ``mask=`` and a masked mean's weights
(``reduce_sum(x * m) / reduce_sum(m)``) all read True (1) as "this position counts": fed
this mask, every query attends only to padding and the pooling averages only padding. The
words are ignored, accuracy stays near chance, nothing raises (PyTorch's
``key_padding_mask`` uses the opposite convention, a common source).

After a completed cell whose text holds ``equal`` or ``==`` (two substring tests
otherwise), each function of the cell (methods included) and its top level is read
(``ast``, never run): a name bound to ``tf.equal(x, 0)``, ``tf.math.equal``,
``keras.ops.equal`` or ``x == 0`` (0 or a name holding "pad"), and the names made from it
by indexing, ``tf.cast``, ``tf.expand_dims`` or ``tf.newaxis`` (a ``logical_not``, ``~`` or
``1 - m`` turns it right and ends the trail). Told when such a name is given as
``attention_mask=``/``mask=``, is a weight in a product summed by ``reduce_sum``/
``reduce_mean`` (a product with a constant, ``m * -1e9``, is the additive masking that
wants True on padding: silent), or is passed to a method of a layer the class made
(``self.block(x, m)``) or a function of the cell whose parameter at that place meets one
of those (its ``call`` read from its source). The fix is the same line with
``not_equal``/``!=``.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import dotted_name, parsed_source
from jupyterlab_tfcoach.monitor.training import user_code
from jupyterlab_tfcoach.monitor.training.model_source import own_function

SECTION = "joining-indexing"  # masks built from token ids, as sequence_masks.py
_KEEP_KEYWORDS = frozenset({"attention_mask", "mask"})
_REDUCTIONS = frozenset({"reduce_sum", "reduce_mean", "sum", "mean"})
_PASS_THROUGH = frozenset({"cast", "expand_dims", "reshape", "squeeze"})
_Scope = ast.FunctionDef | ast.AsyncFunctionDef | ast.Module


def _is_padding_test(node: ast.AST) -> str | None:
    """The fixed text's operator (``not_equal`` or ``!=``) when ``node`` tests ids == 0."""

    def padding_value(value: ast.AST) -> bool:
        if isinstance(value, ast.Constant) and value.value == 0:
            return True
        name = dotted_name(value) or ""
        return "pad" in name.lower()

    if isinstance(node, ast.Call) and len(node.args) == 2:
        called = dotted_name(node.func) or ""
        if called.rsplit(".", 1)[-1] == "equal" and padding_value(node.args[1]):
            return "not_equal"
    if (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.Eq)
        and padding_value(node.comparators[0])
    ):
        return "!="
    return None


def _derived_from(value: ast.AST, names: set[str]) -> bool:
    """Whether ``value`` is one of ``names`` indexed, cast or expanded (same polarity)."""
    while True:
        if isinstance(value, ast.Name):
            return value.id in names
        if isinstance(value, ast.Subscript):
            value = value.value
        elif isinstance(value, ast.Call) and value.args:
            called = (dotted_name(value.func) or "").rsplit(".", 1)[-1]
            if called not in _PASS_THROUGH:
                return False
            value = value.args[0]
        else:
            return False


def _trail(scope: _Scope, start: set[str]) -> set[str]:
    names = set(start)
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and _derived_from(node.value, names):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _keep_use(scope: _Scope, names: set[str]) -> tuple[str, int] | None:
    """(how the mask is used as "keep", the line) when it is, directly in ``scope``."""
    for node in ast.walk(scope):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg in _KEEP_KEYWORDS and _derived_from(keyword.value, names):
                    return f"`{keyword.arg}=`", node.lineno
            called = (dotted_name(node.func) or "").rsplit(".", 1)[-1]
            if called in _REDUCTIONS and node.args:
                for inner in ast.walk(node.args[0]):
                    if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Mult):
                        sides = (inner.left, inner.right)
                        if any(_derived_from(s, names) for s in sides) and not any(
                            isinstance(s, ast.Constant | ast.UnaryOp) for s in sides
                        ):
                            return "the weights of a masked sum (True counts)", node.lineno
    return None


def _parameter_use(function: Any, position: int) -> tuple[str, str] | None:
    method = user_code.method_source(function) if function is not None else None
    if method is None:
        return None
    definition = next(
        (n for n in method.tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)),
        None,
    )
    if definition is None:
        return None
    parameters = [a.arg for a in definition.args.args]
    if parameters and parameters[0] == "self":
        parameters = parameters[1:]
    if position >= len(parameters):
        return None
    use = _keep_use(definition, _trail(definition, {parameters[position]}))
    if use is None:
        return None
    return use[0], f"{getattr(function, '__qualname__', definition.name)}"


def _passed_on(
    scope: _Scope,
    names: set[str],
    classdef: ast.ClassDef | None,
    tree: ast.Module,
    namespace: Mapping[str, Any],
) -> tuple[str, int] | None:
    """(how, the line) when a mask name is passed to a layer or function that uses it as
    "keep"."""
    made: dict[str, str] = {}
    if classdef is not None:
        for node in ast.walk(classdef):
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Call)
                and isinstance(node.targets[0], ast.Attribute)
                and isinstance(node.targets[0].value, ast.Name)
                and node.targets[0].value.id == "self"
            ):
                made[node.targets[0].attr] = (dotted_name(node.value.func) or "").rsplit(".", 1)[-1]
    for node in ast.walk(scope):
        if not isinstance(node, ast.Call):
            continue
        positions = [i for i, a in enumerate(node.args) if _derived_from(a, names)]
        if not positions:
            continue
        func = node.func
        function = None
        shown = dotted_name(func) or ""
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id == "self" and func.attr in made:
                cls = namespace.get(made[func.attr])
                if isinstance(cls, type):
                    function = own_function(cls, "call") or own_function(cls, "__call__")
        elif isinstance(func, ast.Name):
            value = namespace.get(func.id)
            if isinstance(value, type):
                continue
            function = value if callable(value) else None
        if function is None:
            continue
        use = _parameter_use(function, positions[0])
        if use is not None:
            return f"{use[0]} in `{use[1]}`, through `{shown}(...)`", node.lineno
    return None


def _outside_scopes(tree: ast.Module) -> list[ast.AST]:
    """The cell's nodes outside ``def``/``class``/``lambda`` (those are read on their own)."""
    found: list[ast.AST] = []
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        found.append(node)
        pending.extend(ast.iter_child_nodes(node))
    return found


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if "equal" not in source and "==" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    scopes: list[tuple[_Scope, ast.ClassDef | None, str]] = [(tree, None, "")]
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    scopes.append((item, node, f"{node.name}.{item.name}"))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            scopes.append((node, None, node.name))
    for scope, classdef, label in scopes:
        statements = _outside_scopes(scope) if isinstance(scope, ast.Module) else scope.body
        for statement in statements:
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
                continue
            target = statement.targets[0]
            operator = _is_padding_test(statement.value)
            if operator is None or not isinstance(target, ast.Name):
                continue
            names = _trail(scope, {target.id})
            uses = [
                u
                for u in (
                    _keep_use(scope, names),
                    _passed_on(scope, names, classdef, tree, namespace),
                )
                if u is not None
            ]
            if uses:
                return [_note(statement, target.id, operator, uses, label, source)]
    return []


def _note(
    statement: ast.Assign,
    name: str,
    operator: str,
    uses: list[tuple[str, int]],
    label: str,
    source: str,
) -> Note:
    written = ast.get_source_segment(source, statement) or name
    test = ast.get_source_segment(source, statement.value) or ""
    where = f"line {statement.lineno}" + (f", in `{label}`" if label else "")
    used = " and as ".join(f"{how} (line {line})" for how, line in uses)
    text = (
        f"`{written}` ({where}) is True on the padding positions, but `{name}` is used as "
        f'{used}, where True means "this position counts" (Keras\'s attention_mask and '
        f"mask: True may be attended to / is kept). The model attends to and pools the "
        f"padding and ignores the real tokens: accuracy stays near chance and nothing "
        f"raises."
    )
    if operator == "!=":
        fixed_test = test.replace("==", "!=", 1)
    else:
        fixed_test = test.replace("equal(", "not_equal(", 1)
    fixed = written.replace(test, fixed_test, 1) if test and test in written else None
    if fixed and fixed != written:
        fixed = fixed.split("#", 1)[0].rstrip()
        text += f" Build the mask True on the real tokens: `{fixed}`."
    return reports.note(text, SECTION)
