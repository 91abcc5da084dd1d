"""Why a custom training loop trained nothing, or trained a sum: read from the user's code.

``training_symptoms`` establishes the symptom at run time (the variables given to
``tape.gradient`` did not change; the target had many elements; an attribute got new
variables at every step). This module names the cause from what the user wrote: the
source of the scope that called ``tape.gradient`` (the cell, or a helper function's
source read through its code object and ``linecache``, where IPython keeps every cell),
parsed with ``ast``. Nothing here runs user code: names are read from the namespace
by exact type only (a Python number for the learning rate, a plain function for a
helper).

The causes of "nothing trained", in the order they are looked for:

- ``loop_rebind``: ``for p, g in zip(params, grads): p = p - lr * g`` rebinds the loop
  name, never the variable;
- ``helper_rebind``: a helper given the gradients rebinds its parameter
  (``def sgd(v, g): v = v - lr * g``), so the caller's variable never changes;
- ``new_name``: the gradients only build new tensors bound to other names
  (``new_w = w - lr * dw``); unless those tensors are returned, or read or computed in a
  ``with tf.GradientTape()`` block: a functional update (MAML's inner loop,
  ``functional``), where no cause is told;
- ``unused``: the gradients are never read, except to be printed;
- ``discarded``: ``tape.gradient(...)`` is a statement of its own, its result unused.

Anything else (gradients given to code we cannot read, or to an optimizer that still
changed nothing) names no cause: no advice is better than a wrong one.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jupyterlab_tfcoach.monitor.errors.cell_sources import last_assignment
from jupyterlab_tfcoach.monitor.syntax import call_name as _call_name
from jupyterlab_tfcoach.monitor.syntax import tape_names
from jupyterlab_tfcoach.monitor.variables.rebind_statements import update_fixes

MAX_SOURCE_CHARS = 200_000
MAX_HELPERS = 5
MAX_FIXES = 4
_UPDATE_METHODS = frozenset(
    {"assign", "assign_sub", "assign_add", "apply_gradients", "apply", "minimize"}
)
_LEARNING_RATE_NAMES = ("lr", "learning_rate", "step_size", "alpha", "eta")
# Calls that only show a value: gradients read only there were never applied.
_DISPLAY_CALLS = frozenset({"print", "format", "str", "repr", "display", "len", "type"})


@dataclass
class Scope:
    """The parsed code that called ``tape.gradient``: the cell or a function body."""

    tree: ast.AST
    source: str
    line_offset: int  # add to a node's lineno to get the line in the file
    function: str | None  # the function's name, None for the cell


@dataclass
class GradientCall:
    """``d_w, d_b = tape.gradient(loss, [w, b])`` as written."""

    tape: str  # "tape", "g"
    target: str  # "loss"
    sources: str  # "[w, b]"
    source_names: list[str]  # ["w", "b"] for a list of names
    results: list[str]  # ["d_w", "d_b"], or ["grads"]
    line: int  # in the scope's own numbering
    statement: ast.stmt | None = None


@dataclass
class Cause:
    kind: str  # loop_rebind, helper_rebind, new_name, unused, functional
    statement: str = ""  # the user's statement, one line
    fix: str = ""  # code to run instead
    names: list[str] = field(default_factory=list)  # extra names to mention
    helper: str | None = None
    line: int | None = None


def _segment(source: str, node: ast.AST) -> str:
    try:
        text = ast.get_source_segment(source, node)
    except Exception:
        text = None
    if text is None:
        try:
            text = ast.unparse(node)
        except Exception:
            return "?"
    return " ".join(text.split())


def parse_scope(
    cell_source: str, cell_file: bool, filename: str, first_line: int, function: str
) -> Scope | None:
    """The scope whose code called ``tape.gradient``: the running cell's source, or the
    function defined at ``filename:first_line`` (a helper in an earlier cell or a file)."""
    if cell_file and function == "<module>":
        source = cell_source
        if not source or len(source) > MAX_SOURCE_CHARS:
            return None
        try:
            return Scope(ast.parse(_python_only(source)), source, 0, None)
        except Exception:
            return None
    try:
        lines = linecache.getlines(filename)
        if not lines or first_line < 1:
            return None
        block = inspect.getblock(lines[first_line - 1 :])
        source = textwrap.dedent("".join(block))
        if len(source) > MAX_SOURCE_CHARS:
            return None
        tree = ast.parse(source)
    except Exception:
        return None
    return Scope(tree, source, first_line - 1, function)


def _python_only(source: str) -> str:
    """IPython magics and shell lines blanked (line numbers kept)."""
    return "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n")
    )


def _names_in(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        found: list[str] = []
        for element in node.elts:
            found.extend(_names_in(element))
        return found
    return []


def gradient_call(scope: Scope, line: int) -> GradientCall | None:
    """The ``<tape>.gradient(...)`` call on ``line`` (the file's numbering)."""
    own_line = line - scope.line_offset
    for statement in ast.walk(scope.tree):
        if not isinstance(statement, (ast.Assign, ast.Expr, ast.AnnAssign)):
            continue
        end = getattr(statement, "end_lineno", statement.lineno) or statement.lineno
        if not statement.lineno <= own_line <= end:
            continue
        value = statement.value
        if not (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "gradient"
        ):
            continue
        arguments = {k.arg: k.value for k in value.keywords if k.arg}
        target = value.args[0] if value.args else arguments.get("target")
        sources = value.args[1] if len(value.args) > 1 else arguments.get("sources")
        if target is None or sources is None:
            return None
        results: list[str] = []
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            results = _names_in(statement.targets[0])
        source_names = _names_in(sources) if isinstance(sources, (ast.List, ast.Tuple)) else []
        return GradientCall(
            tape=_segment(scope.source, value.func.value),
            target=_segment(scope.source, target),
            sources=_segment(scope.source, sources),
            source_names=source_names,
            results=results,
            line=statement.lineno,
            statement=statement,
        )
    return None


def _reads(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _rebound_name(statement: ast.AST, names: set[str]) -> ast.Name | None:
    """The name of ``names`` that ``statement`` rebinds from its own value: ``p = p - lr * g``
    or ``p -= lr * g`` (on a Keras variable ``-=`` also makes a new tensor)."""
    if isinstance(statement, ast.AugAssign):
        target = statement.target
        if isinstance(target, ast.Name) and target.id in names:
            return target
        return None
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    target = statement.targets[0]
    if isinstance(target, ast.Name) and target.id in names and _reads(statement.value, {target.id}):
        return target
    return None


def _loop_rebind(loop: ast.For, gradient_names: set[str], source: str) -> Cause | None:
    """``for p, g in zip(params, grads): p = p - lr * g``."""
    if not _reads(loop.iter, gradient_names):
        return None
    loop_names = set(_names_in(loop.target))
    for statement in ast.walk(loop):
        target = _rebound_name(statement, loop_names)
        if target is None:
            continue
        fixes = update_fixes(statement, source)  # type: ignore[arg-type]
        if fixes is None:
            continue
        return Cause(
            "loop_rebind",
            statement=_segment(source, statement),
            fix=fixes[0],
            names=[target.id, _segment(source, loop.iter)],
            line=statement.lineno,
        )
    return None


def _new_name(statement: ast.Assign, gradient_names: set[str], source: str) -> Cause | None:
    """``new_w = w - lr * dw``: a tensor bound to another name, ``w`` untouched."""
    if len(statement.targets) != 1 or not isinstance(statement.targets[0], ast.Name):
        return None
    value = statement.value
    new = statement.targets[0].id
    if (
        isinstance(value, ast.BinOp)
        and isinstance(value.op, (ast.Sub, ast.Add))
        and isinstance(value.left, ast.Name)
        and value.left.id != new
        and _reads(value.right, gradient_names)
    ):
        method = "assign_sub" if isinstance(value.op, ast.Sub) else "assign_add"
        step = _segment(source, value.right)
        return Cause(
            "new_name",
            statement=_segment(source, statement),
            fix=f"{value.left.id}.{method}({step})",
            names=[new, value.left.id],
            line=statement.lineno,
        )
    if isinstance(value, (ast.ListComp, ast.GeneratorExp)) and value.generators:
        generator = value.generators[0]
        element = value.elt
        if (
            _reads(generator.iter, gradient_names)
            and isinstance(element, ast.BinOp)
            and isinstance(element.op, (ast.Sub, ast.Add))
            and isinstance(element.left, ast.Name)
        ):
            method = "assign_sub" if isinstance(element.op, ast.Sub) else "assign_add"
            loop = (
                f"for {_segment(source, generator.target)} in {_segment(source, generator.iter)}:"
                f" {element.left.id}.{method}({_segment(source, element.right)})"
            )
            return Cause(
                "new_name",
                statement=_segment(source, statement),
                fix=loop,
                names=[new],
                line=statement.lineno,
            )
    return None


def _functional_update(tree: ast.AST, cause: Cause) -> bool:
    """Whether the tensors a ``new_name`` statement binds are used as weights on
    purpose: returned from the function, read inside a ``with tf.GradientTape()`` block,
    or computed inside one (an outer tape records the update, to differentiate
    through it)."""
    new = cause.names[0] if cause.names else ""
    if not new:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Return) and node.value is not None and _reads(node.value, {new}):
            return True
        if not (isinstance(node, ast.With) and tape_names(node)):
            continue
        end = getattr(node, "end_lineno", None) or node.lineno
        if cause.line is not None and node.lineno <= cause.line <= end:
            return True
        for statement in node.body:
            for inner in ast.walk(statement):
                if (
                    isinstance(inner, ast.Name)
                    and inner.id == new
                    and isinstance(inner.ctx, ast.Load)
                ):
                    return True
    return False


def _helper_rebind(
    call: ast.Call, gradient_names: set[str], source: str, namespace: Mapping[str, Any]
) -> Cause | None:
    """``sgd(w, d_w)`` where ``def sgd(v, g): v = v - lr * g`` rebinds its parameter."""
    if not isinstance(call.func, ast.Name):
        return None
    helper = namespace.get(call.func.id)
    if type(helper) is not types.FunctionType:
        return None
    code = helper.__code__
    try:
        lines = linecache.getlines(code.co_filename)
        block = inspect.getblock(lines[code.co_firstlineno - 1 :])
        helper_source = textwrap.dedent("".join(block))
        tree = ast.parse(helper_source)
    except Exception:
        return None
    definition = tree.body[0] if tree.body else None
    if not isinstance(definition, ast.FunctionDef):
        return None
    parameters = [a.arg for a in definition.args.posonlyargs + definition.args.args]
    for statement in ast.walk(definition):
        if isinstance(statement, ast.For):
            # ``def update(params, grads): for p, g in zip(params, grads): p = p - lr * g``
            inner = _loop_rebind(statement, set(parameters), helper_source)
            if inner is not None:
                inner.kind = "helper_rebind"
                inner.helper = definition.name
                inner.names = [*inner.names, _segment(source, call)]
                return inner
        target = _rebound_name(statement, set(parameters))
        if target is None:
            continue
        fixes = update_fixes(statement, helper_source)  # type: ignore[arg-type]
        if fixes is None:
            continue
        position = parameters.index(target.id)
        argument = _segment(source, call.args[position]) if position < len(call.args) else target.id
        return Cause(
            "helper_rebind",
            statement=_segment(helper_source, statement),
            fix=fixes[0],
            names=[target.id, argument, _segment(source, call)],
            helper=definition.name,
        )
    return None


def _only_displayed(scope: Scope, call: GradientCall) -> bool:
    """Whether the gradients are never read, or read only to be shown (``print``)."""
    names = set(call.results)
    if not names:
        return False
    shown: set[int] = set()
    for node in ast.walk(scope.tree):
        if isinstance(node, ast.Call) and _call_name(node) in _DISPLAY_CALLS:
            shown.update(id(inner) for inner in ast.walk(node))
    for node in ast.walk(scope.tree):
        if (
            isinstance(node, ast.Name)
            and node.id in names
            and isinstance(node.ctx, ast.Load)
            and id(node) not in shown
        ):
            return False
    return True


def nothing_trained_cause(
    scope: Scope, call: GradientCall, namespace: Mapping[str, Any]
) -> Cause | None:
    """The cause of "nothing trained" this scope's code shows, or None when unsure."""
    gradient_names = set(call.results)
    if not gradient_names:
        if isinstance(call.statement, ast.Expr):
            # ``tape.gradient(loss, [w, b])`` on its own line: the result is thrown away.
            rate = learning_rate_name(namespace)
            return Cause(
                "discarded",
                statement=f"{call.tape}.gradient({call.target}, {call.sources})",
                fix=f"grads = {call.tape}.gradient({call.target}, {call.sources})",
                names=[f"for v, g in zip({call.sources}, grads): v.assign_sub({rate} * g)"],
            )
        return None
    source = scope.source
    statements = list(ast.walk(scope.tree))
    for node in statements:
        if isinstance(node, ast.For):
            found = _loop_rebind(node, gradient_names, source)
            if found is not None:
                return found
    helpers = 0
    for node in statements:
        if isinstance(node, ast.Call) and any(_reads(a, gradient_names) for a in node.args):
            if _call_name(node) in _UPDATE_METHODS:
                return None  # given to an update we cannot second-guess
            helpers += 1
            if helpers > MAX_HELPERS:
                break
            found = _helper_rebind(node, gradient_names, source, namespace)
            if found is not None:
                return found
    made: list[Cause] = []
    for node in statements:
        if isinstance(node, ast.Assign):
            found = _new_name(node, gradient_names, source)
            if found is not None:
                made.append(found)
    if any(_functional_update(scope.tree, cause) for cause in made):
        # ``fast = [w - lr * g for ...]`` returned, or run through a tape: the new
        # tensors are the point (MAML's inner loop); ``assign`` would break it.
        return Cause("functional")
    if made:
        # ``new_w = w - lr * dw`` and ``new_b = b - lr * db``: one cause, every fix.
        made.sort(key=lambda cause: cause.line or 0)
        first = made[0]
        first.fix = "; ".join(cause.fix for cause in made[:MAX_FIXES])
        return first
    if _only_displayed(scope, call):
        return Cause("unused", fix=_apply_fix(call, namespace))
    return None


def applies_gradients(scope: Scope, call: GradientCall) -> bool:
    """Whether the scope gives the gradients to an update (``apply_gradients``,
    ``assign_sub``...), directly or through a loop over them."""
    names = set(call.results)
    if not names:
        return False
    for node in ast.walk(scope.tree):
        if isinstance(node, ast.For) and _reads(node.iter, names):
            names |= set(_names_in(node.target))
    for node in ast.walk(scope.tree):
        if (
            isinstance(node, ast.Call)
            and _call_name(node) in _UPDATE_METHODS
            and any(_reads(a, names) for a in [*node.args, *(k.value for k in node.keywords)])
        ):
            return True
    return False


def learning_rate_name(namespace: Mapping[str, Any]) -> str:
    """The user's learning-rate name when one holds a Python number, else a literal."""
    for name in _LEARNING_RATE_NAMES:
        if type(namespace.get(name)) in (int, float):
            return name
    return "0.01"


def _apply_fix(call: GradientCall, namespace: Mapping[str, Any]) -> str:
    rate = learning_rate_name(namespace)
    if len(call.results) > 1 and len(call.results) == len(call.source_names):
        return "; ".join(
            f"{variable}.assign_sub({rate} * {gradient})"
            for variable, gradient in zip(call.source_names, call.results, strict=True)
        )
    gradients = call.results[0] if len(call.results) == 1 else f"[{', '.join(call.results)}]"
    return f"for v, g in zip({call.sources}, {gradients}): v.assign_sub({rate} * g)"


def loss_assignment(scope: Scope, target: str, before_line: int) -> tuple[str, str] | None:
    """The last ``<target> = <value>`` before ``before_line``: the statement as written
    and the same statement reduced to a scalar (``tf.reduce_mean(<value>)``)."""
    found = last_assignment(scope.tree, target, before_line)
    if found is None:
        return None
    value = _segment(scope.source, found.value)
    return _segment(scope.source, found), f"{target} = tf.reduce_mean({value})"


def creating_methods(holder_class: type, attributes: set[str]) -> list[str]:
    """Methods of ``holder_class`` (or its bases from ``__main__``-like user code) that
    assign one of ``attributes`` from a variable-creating call, other than ``__init__``."""
    found: list[str] = []
    for klass in holder_class.__mro__[:5]:
        try:
            members = dict(vars(klass))
        except Exception:
            continue
        for name, member in members.items():
            if type(member) is not types.FunctionType or name == "__init__":
                continue
            code = member.__code__
            try:
                lines = linecache.getlines(code.co_filename)
                block = inspect.getblock(lines[code.co_firstlineno - 1 :])
                tree = ast.parse(textwrap.dedent("".join(block)))
            except Exception:
                continue
            for node in ast.walk(tree):
                if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                    continue
                target = node.targets[0]
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                    and target.attr in attributes
                    and isinstance(node.value, ast.Call)
                    and _call_name(node.value) in ("Variable", "add_weight")
                ):
                    if name not in found:
                        found.append(name)
                    break
    return found


@dataclass
class LoopCreation:
    """``w = tf.Variable(...)`` written inside the loop that calls ``tape.gradient``."""

    loop: str  # the loop's first line: "for step in range(100):"
    statements: list[str]  # the creating statements, as written


def loop_created(scope: Scope, names: list[str], line: int) -> LoopCreation | None:
    """The statements binding ``names`` to a new ``tf.Variable`` inside the innermost loop
    that holds both them and the ``tape.gradient`` call on ``line`` (the file's numbering)."""
    own_line = line - scope.line_offset
    wanted = set(names)
    best: tuple[ast.For | ast.While, list[ast.Assign]] | None = None
    for loop in ast.walk(scope.tree):
        if not isinstance(loop, ast.For | ast.While):
            continue
        end = getattr(loop, "end_lineno", None) or loop.lineno
        if not loop.lineno < own_line <= end:
            continue
        made = [
            node
            for body in loop.body
            for node in ast.walk(body)
            if isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in wanted
            and isinstance(node.value, ast.Call)
            and _call_name(node.value) in ("Variable", "add_weight")
        ]
        if made and (best is None or loop.lineno > best[0].lineno):
            best = (loop, made)
    if best is None:
        return None
    loop, made = best
    header = scope.source.split("\n")[loop.lineno - 1].strip()
    return LoopCreation(header, [_segment(scope.source, node) for node in made[:MAX_FIXES]])
