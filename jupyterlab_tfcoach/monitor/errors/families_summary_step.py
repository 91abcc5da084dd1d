"""A TensorBoard summary written without a step (issue #25).

``tf.summary.write("loss/total", total)`` inside ``with writer.as_default():`` raises
``No step set``: each value TensorBoard shows is placed at a step (the x axis), and
neither the call's ``step`` nor ``tf.summary.experimental.set_step`` gave one. The
reading names the summary call, the writer of the enclosing ``with`` block, and the step
to give: the ``iterations`` counter of the one Keras optimizer in the namespace (it counts
the updates already applied), else the counter of an enclosing ``for i, ... in
enumerate(...)`` loop. The fix is the failing line with ``step=...``; every summary call
of the block needs the same.
"""

from __future__ import annotations

import ast
import re
import types

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, class_mro, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)
from jupyterlab_tfcoach.monitor.stored_state import library_attribute
from jupyterlab_tfcoach.monitor.tftypes import loaded_class

SECTION = "training-loop"
_NO_STEP = re.compile(r"^No step set\. Please specify one either through the `step` argument")
_MAX_NAMESPACE = 5000


def _optimizers(context: ErrorContext) -> list[str]:
    base = loaded_class("keras.src.optimizers.base_optimizer", "BaseOptimizer")
    if base is None:
        return []
    found = []
    for count, (name, value) in enumerate(list(context.namespace.items())):
        if count > _MAX_NAMESPACE:
            break
        if type(name) is str and not name.startswith("_") and base in class_mro(value):
            found.append(name)
    return found


def _used_in_loop(
    optimizers: list[str], blocks: list[ast.AST], line: FailingLine, context: ErrorContext
) -> list[str]:
    """Of several optimizers, those the functions called in the enclosing loops read as
    globals (a tf.function's Python function's ``co_names``: no code runs)."""
    used: set[str] = set()
    for block in blocks:
        if not isinstance(block, ast.For):
            continue
        for node in ast.walk(block):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            found, function = context.lookup(node.func.id, line.frame)
            if not found:
                continue
            python = library_attribute(function, "_python_function")
            plain = python if type(python) is types.FunctionType else function
            if type(plain) is types.FunctionType:
                names = plain.__code__.co_names
                used.update(name for name in names if type(name) is str)
    return [name for name in optimizers if name in used]


def _enclosing(tree: ast.Module, line: int) -> list[ast.AST]:
    """The compound statements holding ``line``, outermost first."""
    return sorted(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, (ast.With, ast.For))
            and node.lineno <= line <= (node.end_lineno or node.lineno)
        ),
        key=lambda node: node.lineno,  # type: ignore[attr-defined]
    )


def _read_no_step(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    del error
    call = line.call
    written = line.frame.segment(call) if call is not None else None
    tree = line.frame.tree()
    if not isinstance(call, ast.Call) or not written or tree is None or line.statement is None:
        return None
    if any(k.arg == "step" for k in call.keywords):
        return None
    blocks = _enclosing(tree, line.frame.position.line)
    writer = None
    counter = None
    for block in blocks:
        if isinstance(block, ast.With):
            for item in block.items:
                context_call = item.context_expr
                if (
                    isinstance(context_call, ast.Call)
                    and isinstance(context_call.func, ast.Attribute)
                    and context_call.func.attr == "as_default"
                ):
                    writer = line.frame.segment(context_call.func.value)
        elif (
            isinstance(block.iter, ast.Call)
            and isinstance(block.iter.func, ast.Name)
            and block.iter.func.id == "enumerate"
            and isinstance(block.target, ast.Tuple)
            and block.target.elts
            and isinstance(block.target.elts[0], ast.Name)
        ):
            counter = block.target.elts[0].id
    under = f" under {code(f'with {writer}.as_default():')}" if writer else ""
    rule = (
        f"{code(written)}{under} gives no step: TensorBoard places each value it shows at a "
        "step (the x axis), so a summary needs `step=` (or a default set once with "
        "`tf.summary.experimental.set_step`)"
    )
    optimizers = _optimizers(context)
    if len(optimizers) > 1:
        optimizers = _used_in_loop(optimizers, blocks, line, context)
    if len(optimizers) == 1:
        step = f"{optimizers[0]}.iterations"
        why = f"{code(step)} counts the updates {code(optimizers[0])} has applied"
    elif counter is not None:
        step, why = counter, f"{code(counter)} counts the loop's passes"
    else:
        return Finding(rule + ".", None)
    fixed = rewrite(line.frame, line.statement, call, f"{written[:-1].rstrip()}, step={step})")
    if not fixed or "\n" in fixed:
        return Finding(rule + ".", None)
    rule += f"; {why}, and every summary call of the block needs the same"
    others = _other_summaries(blocks, call, step, line)
    fix = code(fixed.strip())
    if others:
        fix = f"{', '.join(others)}, and {fix}"
    return Finding(rule + ".", fix)


_SUMMARY_WRITERS = frozenset({"scalar", "write", "histogram", "image", "text", "audio"})
_MAX_OTHERS = 6


def _other_summaries(
    blocks: list[ast.AST], failing: ast.Call, step: str, line: FailingLine
) -> list[str]:
    """The block's other summary calls without a step, each fixed (``on line 6 `...```):
    the next error once the failing one has its step."""
    if not blocks:
        return []
    shown: list[str] = []
    for statement in ast.walk(blocks[0]):
        if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
            continue
        other = statement.value
        func = other.func
        if (
            other is failing
            or not isinstance(func, ast.Attribute)
            or func.attr not in _SUMMARY_WRITERS
            or not (line.frame.segment(func.value) or "").endswith("summary")
            or any(k.arg == "step" for k in other.keywords)
        ):
            continue
        written = line.frame.segment(other)
        fixed = (
            rewrite(line.frame, statement, other, f"{written[:-1].rstrip()}, step={step})")
            if written
            else None
        )
        if fixed and "\n" not in fixed and len(shown) < _MAX_OTHERS:
            shown.append(f"on line {statement.lineno} {code(fixed.strip())}")
    return shown


NO_SUMMARY_STEP = ErrorFamily(
    "a summary written without a step",
    messages=(Message(_NO_STEP),),
    read=_read_no_step,
    section=SECTION,
)
