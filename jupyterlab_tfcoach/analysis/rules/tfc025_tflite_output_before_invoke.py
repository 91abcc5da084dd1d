"""TFC025: a TFLite interpreter's output read after ``set_tensor`` without ``invoke()``.

``set_tensor`` only copies the input into the interpreter's buffer; the model runs when
``invoke()`` is called. Reading ``get_tensor`` after setting an input and before invoking
returns what the output buffer held already: zeros, or the previous run's result. The code
runs and prints numbers, which is why the slip goes unnoticed.

The receiver must be an interpreter: a name or attribute bound in the file to a call of
something named ``Interpreter`` (``tf.lite.Interpreter``, a runtime's own), or one the file
also calls ``allocate_tensors``, ``get_input_details`` or ``get_output_details`` on.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.positions import Range
from jupyterlab_tfcoach.analysis.rules._common import own_nodes

CODE = "TFC025"
NAME = "tflite-output-before-invoke"
SEVERITY = Severity.WARNING
SECTION = "keras-saving"

DOCS = """
## What it does
Flags `interpreter.get_tensor(...)` that follows `interpreter.set_tensor(...)` in the same
function (or the cells outside functions) with no `interpreter.invoke()`, and no call
passing the interpreter on, in between. `interpreter` is any name or attribute bound to a
call of something named `Interpreter` (`tf.lite.Interpreter(...)`), or one the code also
calls `allocate_tensors()`, `get_input_details()` or `get_output_details()` on.

The fix calls `interpreter.invoke()` on the line before the one reading the output.

## Why is this bad?
`set_tensor` copies the input into the interpreter; only `invoke()` runs the model. Without
it, `get_tensor` returns whatever the output buffer holds: zeros before the first run, then
the result of the last `invoke()`, whatever the input. A loop over test rows then reports
the same output for every row, and a comparison with the Keras model is meaningless. No
error is raised.

## Example
```python
for row in rows:
    interpreter.set_tensor(input_index, row[None, :])
    outputs.append(interpreter.get_tensor(output_index)[0])
```

## Use instead
```python
for row in rows:
    interpreter.set_tensor(input_index, row[None, :])
    interpreter.invoke()
    outputs.append(interpreter.get_tensor(output_index)[0])
```

## Course module
Module 7, *Saving a Keras 3 model: the file name decides* (`keras-saving`): the closest
section (it covers exporting a model); no section runs a converted TFLite model.
"""

_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef)
_INTERPRETER_METHODS = frozenset({"allocate_tensors", "get_input_details", "get_output_details"})
_SIMPLE_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)


def _reference_key(node: ast.AST) -> str | None:
    """``interp`` or ``self.interp``: a name or a chain of attributes on one."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _reference_key(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None


def _interpreters(tree: ast.Module) -> set[str]:
    """References bound to ``...Interpreter(...)`` or used as an interpreter."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == "Interpreter":
                for target in node.targets:
                    key = _reference_key(target)
                    if key is not None:
                        found.add(key)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _INTERPRETER_METHODS
        ):
            key = _reference_key(node.func.value)
            if key is not None:
                found.add(key)
    return found


def _scopes(tree: ast.Module) -> Iterator[ast.AST]:
    yield tree
    for node in ast.walk(tree):
        if isinstance(node, _FUNCTION_NODES):
            yield node


def check(ctx: RuleContext) -> Iterator[Finding]:
    if "set_tensor" not in ctx.source.text:
        return
    interpreters = _interpreters(ctx.model.tree)
    if not interpreters:
        return
    for scope in _scopes(ctx.model.tree):
        yield from _scope_findings(ctx, scope, interpreters)


def _scope_findings(ctx: RuleContext, scope: ast.AST, interpreters: set[str]) -> Iterator[Finding]:
    # Every use of an interpreter in the scope, in source order: (position, key, what, node).
    uses: list[tuple[tuple[int, int], str, str, ast.AST]] = []
    parents: dict[int, ast.AST] = {}
    for node in own_nodes(scope):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):
                key = _reference_key(func.value)
                if key in interpreters:
                    uses.append(((node.lineno, node.col_offset), key, func.attr, node))
                    continue
            # Passed on to another function: it may invoke.
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                key = _reference_key(argument)
                if key in interpreters:
                    uses.append(((node.lineno, node.col_offset), key, "passed", node))
    uses.sort(key=lambda use: use[0])
    last_set: dict[str, ast.AST] = {}
    for _, key, what, node in uses:
        if what == "set_tensor":
            last_set[key] = node
        elif what == "get_tensor" and key in last_set:
            set_call = last_set.pop(key)
            yield _finding(ctx, node, set_call, parents)  # type: ignore[arg-type]
        elif what != "get_tensor":
            last_set.pop(key, None)


def _destination(statement: ast.AST) -> str | None:
    """The name the read output goes to: ``y = ...``, ``ys.append(...)``, ``ys[i] = ...``."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        if isinstance(target, ast.Subscript):
            target = target.value
        return target.id if isinstance(target, ast.Name) else None
    if (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and isinstance(statement.value.func, ast.Attribute)
        and statement.value.func.attr in ("append", "extend")
        and isinstance(statement.value.func.value, ast.Name)
    ):
        return statement.value.func.value.id
    return None


def _finding(
    ctx: RuleContext, get_call: ast.Call, set_call: ast.Call, parents: dict[int, ast.AST]
) -> Finding:
    receiver = ctx.text(get_call.func.value)  # type: ignore[attr-defined]
    statement: ast.AST = get_call
    while not isinstance(statement, ast.stmt) and id(statement) in parents:
        statement = parents[id(statement)]
    fix = None
    if isinstance(statement, _SIMPLE_STATEMENTS):
        line_text = ctx.source.line_text(statement.lineno)
        indent = line_text[: len(line_text) - len(line_text.lstrip())]
        if len(indent) == statement.col_offset:  # the statement opens its line
            start = Range(statement.lineno, 1, statement.lineno, 1)
            fix = Fix(
                f"Call `{receiver}.invoke()` before reading the output",
                (ctx.replace(start, f"{indent}{receiver}.invoke()\n"),),
            )
    destination = _destination(statement)
    stale = (
        f"what `{destination}` receives is stale"
        if destination is not None
        else "the output is stale"
    )
    return ctx.finding(
        CODE,
        get_call,
        f"`{ctx.short(get_call)}` reads the output after `{ctx.short(set_call)}` with no "
        f"`{receiver}.invoke()` in between: set_tensor only copies the input, so the model "
        f"has not run on it and {stale} (zeros, or the previous run's result). "
        f"Call `{receiver}.invoke()` before `get_tensor`",
        fix=fix,
    )
