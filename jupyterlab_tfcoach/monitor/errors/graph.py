"""Errors raised while a graph is built: AutoGraph branches, tensors as Python bools,
graph tensors that leak out of a trace, and variables created on a later trace."""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    ParsedError,
    code,
    kind_of,
)
from jupyterlab_tfcoach.monitor.errors.variable_copies import per_call_copy
from jupyterlab_tfcoach.monitor.stored_state import library_attribute

_BRANCH = re.compile(r"'(?P<name>\w+)' must also be initialized in the (?P<branch>\w+) branch")
_CALL_CLASS = re.compile(r"Exception encountered when calling (?P<cls>\w+)\.call\(\)")
_ESCAPED_NAME = re.compile(
    r"<tf\.Tensor '(?P<a>[^']+)'[^>]*> is out of scope|symbolic tf\.Tensor \((?P<b>[^)]+)\)"
)
_ESCAPED_PHRASES = (
    "is out of scope and cannot be used here",
    "Cannot convert a symbolic tf.Tensor",
    "Cannot convert a symbolic Tensor",
)
_NEW_VARIABLES = (
    "only supports singleton tf.Variables created on the first call",
    "Creating variables on a non-first call to a function decorated with tf.function",
)
# Namespace scan for a leaked graph tensor: bounded, the explanation must stay cheap.
_MAX_NAMES, _MAX_ITEMS = 2000, 200


def explain_uninitialized_branch(
    parsed: ParsedError, context: ErrorContext
) -> tuple[str, str] | None:
    match = _BRANCH.search(parsed.message)
    if match is None:
        return None
    name, branch = match.group("name"), match.group("branch")
    for frame in context.frames():
        statement = frame.statement()
        if not isinstance(statement, ast.If):
            continue
        condition = frame.segment(statement.test)
        value = _assigned_value(statement, name, frame)
        if condition and value and "\n" not in value:
            why = (
                f"Inside the tf.function, AutoGraph turns `if {condition}:` into tf.cond, "
                f"and a graph needs `{name}` to exist whichever branch runs: it is only "
                f"assigned when the condition is true, not in the {branch} branch."
            )
            unchanged = _transformed_input(statement, name)
            if unchanged is not None:
                # `clipped = g * max_norm / norm`: when the condition is false the value is
                # the input as it is.
                return (
                    f"{why} Before the `if`, give `{name}` the value it has when the "
                    f"condition is false (the `if` then replaces it when the condition "
                    f"holds): {code(f'{name} = {unchanged}')}.",
                    "autograph-conditions",
                )
            # A factor computed only in some cases (`scale = tf.reduce_max(x)`): neutral is 1.
            tf = context.module_alias("tensorflow", "tf")
            return (
                f"{why} Give `{name}` the value it should have when the condition is false, "
                f"before the `if`; for a factor that is 1: "
                f"{code(f'{name} = {tf}.ones_like({value})')} (or assign it in both branches).",
                "autograph-conditions",
            )
    return (
        f"Inside the tf.function, AutoGraph turns an `if` on a tensor into tf.cond, and "
        f"`{name}` is assigned in one branch only ({branch} branch missing). Give `{name}` "
        f"a value before the `if` or assign it in both branches.",
        "autograph-conditions",
    )


def _transformed_input(statement: ast.If, name: str) -> str | None:
    """``g`` for a branch assigning ``name = g * max_norm / norm``: the value the branch
    transforms by arithmetic, a plain name other than ``name`` itself."""
    for child in statement.body:
        if (
            isinstance(child, ast.Assign)
            and len(child.targets) == 1
            and isinstance(child.targets[0], ast.Name)
            and child.targets[0].id == name
        ):
            node = child.value
            while isinstance(node, ast.BinOp):
                node = node.left
            if isinstance(node, ast.Name) and node.id != name:
                return node.id
    return None


def _assigned_value(statement: ast.If, name: str, frame: CellFrame) -> str | None:
    for branch in (statement.body, statement.orelse):
        for child in branch:
            if (
                isinstance(child, ast.Assign)
                and len(child.targets) == 1
                and isinstance(child.targets[0], ast.Name)
                and child.targets[0].id == name
            ):
                return frame.segment(child.value)
    return None


def explain_tensor_as_bool(parsed: ParsedError, context: ErrorContext) -> tuple[str, str] | None:
    if parsed.type != "OperatorNotAllowedInGraphError" and (
        "as a Python `bool` is not allowed" not in parsed.message
    ):
        return None
    if "Iterating over a symbolic" in parsed.message:
        # The same exception for a loop or a ``zip`` over a tensor: no truth value is
        # asked for, so the `if` rule is not the cause (the failing line's family says).
        return None
    layer = _CALL_CLASS.search(parsed.message)
    owner = f"`{layer.group('cls')}.call()`" if layer else "a graph"
    tf = context.module_alias("tensorflow", "tf")
    why = (
        f"A Python `if` (or `while`, `and`, `or`, `bool()`) needs True or False, but in "
        f"{owner} the tensor it tests is symbolic while the graph is built: it has no value "
        f"yet. Write the choice as a tensor operation instead"
    )
    for frame in context.frames():
        statement = frame.statement()
        if not isinstance(statement, ast.If):
            continue
        choice = _where_rewrite(statement, frame, tf)
        if choice is not None:
            condition = frame.segment(statement.test) or ""
            return (
                f"{why}: `if {condition}:` becomes {code(choice)} (both sides are computed, "
                f"{tf}.where picks element by element).",
                "autograph-conditions",
            )
        condition = frame.segment(statement.test)
        if condition and "\n" not in condition:
            return (
                f"{why}: replace `if {condition}:` by {tf}.where({condition}, <value if true>, "
                f"<value if false>) or {tf}.cond({condition}, lambda: ..., lambda: ...).",
                "autograph-conditions",
            )
    return (
        f"{why}: {tf}.where(condition, value_if_true, value_if_false) or "
        f"{tf}.cond(condition, true_fn, false_fn).",
        "autograph-conditions",
    )


def _where_rewrite(statement: ast.If, frame: CellFrame, tf: str) -> str | None:
    """``if c: return a`` + ``return b`` -> ``return tf.where(c, a, b)``; same for one
    name assigned in both branches."""
    condition = frame.segment(statement.test)
    if not condition or len(statement.body) != 1:
        return None
    first = statement.body[0]
    if isinstance(first, ast.Return) and first.value is not None:
        otherwise = (
            statement.orelse[0] if len(statement.orelse) == 1 else frame.following(statement)
        )
        if isinstance(otherwise, ast.Return) and otherwise.value is not None:
            true, false = frame.segment(first.value), frame.segment(otherwise.value)
            if true and false:
                return f"return {tf}.where({condition}, {true}, {false})"
    if isinstance(first, ast.Assign) and len(statement.orelse) == 1:
        other = statement.orelse[0]
        if isinstance(other, ast.Assign):
            target, other_target = frame.segment(first.targets[0]), frame.segment(other.targets[0])
            true, false = frame.segment(first.value), frame.segment(other.value)
            if target and target == other_target and true and false:
                return f"{target} = {tf}.where({condition}, {true}, {false})"
    return None


def explain_escaped_tensor(parsed: ParsedError, context: ErrorContext) -> tuple[str, str] | None:
    if not any(phrase in parsed.message for phrase in _ESCAPED_PHRASES):
        return None
    match = _ESCAPED_NAME.search(parsed.message)
    tensor = (match.group("a") or match.group("b")) if match else None
    typed = re.search(r"<tf\.Tensor '[^']+' shape=[^>]* dtype=(?P<dtype>\w+)>", parsed.message)
    collected = _loop_collector(tensor, context, typed.group("dtype") if typed else None)
    if collected is not None:
        return collected, "escaped-tensors"
    holder = _holder(tensor, context)
    what = f"The graph tensor {tensor}" if tensor else "A graph tensor"
    where = f", kept in {code(holder)}," if holder else ""
    return (
        f"{what}{where} was made while a tf.function (or a Keras layer) was being traced: it "
        f"belongs to that graph and has no value outside it, so it cannot be used later or "
        f"given to NumPy. Return the values you need from the function and keep those "
        f"(`result = f(x)`, then append `result`), or store them in a tf.Variable with "
        f"`.assign()`; do not append graph tensors to Python lists or set them on `self`.",
        "escaped-tensors",
    )


_MAX_LOOPS = 50


def _appends_in(loop: ast.For | ast.While) -> list[tuple[str, ast.expr]]:
    """``(list name, value)`` of each ``name.append(value)`` statement in a loop's body."""
    found: list[tuple[str, ast.expr]] = []
    for statement in loop.body:
        for node in ast.walk(statement):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "append"
                and isinstance(node.func.value, ast.Name)
                and len(node.args) == 1
                and not node.keywords
            ):
                found.append((node.func.value.id, node.args[0]))
    return found


def _loop_collector(tensor: str | None, context: ErrorContext, dtype: str | None) -> str | None:
    """A tensor made in a graph loop's body (TensorFlow names it ``while/...``) that a
    Python list of that loop collected (``states.append(h)`` in ``for t in tf.range(n)``):
    AutoGraph traced the body once, so the list holds that trace's tensor, which lives in
    the loop's graph only. The per-step values belong in a ``tf.TensorArray``."""
    if not tensor or not tensor.split("/", 1)[0].startswith("while"):
        return None
    for frame in context.frames():
        tree = frame.tree()
        if tree is None:
            continue
        used = {
            node.id
            for part in frame.header()
            for node in ast.walk(part)
            if isinstance(node, ast.Name)
        }
        loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))][:_MAX_LOOPS]
        candidates = [
            (loop, name, value)
            for loop in loops
            for name, value in _appends_in(loop)
            if name in used
        ]
        if len(candidates) != 1:
            continue
        loop, name, value = candidates[0]
        written = frame.segment(value)
        if not written or "\n" in written:
            continue
        tf = context.module_alias("tensorflow", "tf")
        # The message's dtype of the leaked tensor, else the frame's value; never a guess.
        typed = f"{tf}.{dtype}" if dtype and dtype.isidentifier() else None
        typed = typed or _dtype_of(value, frame, context) or "<the values' dtype>"
        header = (
            f"for ... in {frame.segment(loop.iter)}"
            if isinstance(loop, ast.For)
            else f"while {frame.segment(loop.test)}"
        )
        return (
            f"The graph tensor {tensor} was made in the body of `{header}:` (line "
            f"{loop.lineno}), which AutoGraph turns into a tf.while_loop inside the traced "
            f"function: the body is traced once, so `{name}.append({written})` keeps the "
            "tensor of that one traced step, which lives in the loop's graph and cannot be "
            "used after the loop. Collect the values of every step in a tf.TensorArray "
            f"instead: `{name} = {tf}.TensorArray({typed}, size=0, dynamic_size=True)` "
            f"before the loop, `{name} = {name}.write({name}.size(), {written})` in place of "
            f"the append, and `{name}.stack()` after the loop (steps on the first axis) "
            "where the list was read."
        )
    return None


def _dtype_of(node: ast.expr, frame: CellFrame, context: ErrorContext) -> str | None:
    """``tf.float32`` for a value the frame holds as a tensor, in the user's spelling."""
    found, value = context.resolve(node, frame)
    if not found:
        return None
    held = library_attribute(value, "dtype") if kind_of(value) else None
    dtype = library_attribute(held, "name") if held is not None else None
    if type(dtype) is not str or not dtype.isidentifier():
        return None
    return f"{context.module_alias('tensorflow', 'tf')}.{dtype}"


def _holder(tensor: str | None, context: ErrorContext) -> str | None:
    """The attribute, list or name that kept the leaked tensor."""
    for frame in context.frames():
        for part in frame.header():
            for node in ast.walk(part):
                if not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
                    continue
                found, value = context.resolve(node, frame)
                if found and _leaks(value, tensor):
                    source = frame.segment(node)
                    if source and "\n" not in source:
                        return source
    for count, (name, value) in enumerate(context.namespace.items()):
        if count > _MAX_NAMES:
            break
        if type(name) is str and not name.startswith("_") and _leaks(value, tensor, deep=False):
            return name
    return None


def _leaks(value: Any, tensor: str | None, deep: bool = True) -> bool:
    kind = kind_of(value)
    if kind == "symbolic":
        return deep and _named(value, tensor)
    if type(value) in (list, tuple):
        return any(
            kind_of(item) == "symbolic" and _named(item, tensor) for item in value[:_MAX_ITEMS]
        )
    return False


def _named(value: Any, tensor: str | None) -> bool:
    if tensor is None:
        return True
    try:
        return value.name == tensor
    except Exception:
        return False


def explain_new_variables(parsed: ParsedError, context: ErrorContext) -> tuple[str, str] | None:
    if not any(phrase in parsed.full_message for phrase in _NEW_VARIABLES):
        return None
    why = (
        "A tf.function may create tf.Variables only while it is traced the first time. Here "
        "variables were created later: either a tf.Variable is created inside the function's "
        "body, or an object that creates variables on first use (a new optimizer or model) "
        "was passed to a function that was already traced."
    )
    copied = per_call_copy(context)
    if copied is not None:
        return copied, "variables-in-functions"
    created = _created_in_body(context)
    if created is not None:
        return created, "variables-in-functions"
    for frame in reversed(context.frames()):
        for part in frame.header():
            for node in ast.walk(part):
                fix = _created_argument(node, frame)
                if fix is not None:
                    return f"{why} {fix}", "variables-in-functions"
                keras_call = _keras_training_call(node, frame)
                if keras_call is not None:
                    # Keras builds its train function (and the optimizer's variables) on
                    # the first fit; a first fit that failed leaves it half-built.
                    return (
                        f"{code(keras_call)} reuses a training function that an earlier, "
                        f"failed call left half-built (the optimizer's variables were never "
                        f"created). Call `compile(...)` on the model again, then run "
                        f"{code(keras_call)}.",
                        "variables-in-functions",
                    )
    return (
        f"{why} Create the variable, optimizer or model once, outside the function (or in "
        f"__init__, or guarded by `if self.v is None`), and pass or reuse that same object on "
        f"every call.",
        "variables-in-functions",
    )


def _created_argument(node: ast.AST, frame: CellFrame) -> str | None:
    """``train(model, keras.optimizers.Adam(0.1), x, y)``: advice in those names."""
    if not isinstance(node, ast.Call):
        return None
    for argument in node.args:
        if not isinstance(argument, ast.Call):
            continue
        created = frame.segment(argument)
        call = frame.segment(node)
        if not created or not call or "\n" in call:
            continue
        name = "optimizer" if "optimizers." in created else "model"
        if name == "model" and not re.search(r"Sequential|Model\b|models\.", created):
            continue
        rewritten = call.replace(created, name, 1)
        return (
            f"{code(call)} creates a new object on every call. Create it once, before the "
            f"first call, and pass the same one each time: {code(f'{name} = {created}')}, "
            f"then {code(rewritten)}."
        )
    return None


def _keras_training_call(node: ast.AST, frame: CellFrame) -> str | None:
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("fit", "train_on_batch", "evaluate", "predict")
    ):
        return None
    source = frame.segment(node)
    return source if source and "\n" not in source else None


def _created_in_body(context: ErrorContext) -> str | None:
    """``total = tf.Variable(0.0)`` in the body of a function defined at the cell's top
    level: every call (every trace) would create it again; it belongs before the function."""
    found = context.failing_name_assignment()
    if found is None:
        return None
    frame, tree, statement, _ = found
    if not isinstance(statement.value, ast.Call):
        return None
    func = statement.value.func
    if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) != "Variable":
        return None
    function = next(
        (
            node
            for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.lineno <= statement.lineno <= (node.end_lineno or node.lineno)
            and any(child is statement for child in node.body)
        ),
        None,
    )
    line = frame.segment(statement)
    if function is None or not line or "\n" in line:
        return None
    name = statement.targets[0].id
    local = _names_bound_inside(function, statement)
    used = {n.id for n in ast.walk(statement.value) if isinstance(n, ast.Name)} & local
    if used:
        # Its value is made from the function's own names: moved out, the line would name
        # something that does not exist there.
        return _made_from_arguments(function, statement, name, line, sorted(used), frame)
    start = min([function.lineno, *(d.lineno for d in function.decorator_list)])
    return (
        f"{code(function.name)} creates {code(name)} with {code(line)} in its body, so every "
        f"call (and every trace) would make a new tf.Variable: a tf.function allows variables "
        f"only on its first trace, and the value would start over on each call anyway. "
        f"Create {code(name)} once, outside the function, and only update it inside "
        f"({code(name + '.assign_add(...)')}). Fix: take the line out of "
        f"{code(function.name)}'s body and put it before line {start}, where the function's "
        f"definition starts: {code(line)}."
    )


def _names_bound_inside(
    function: ast.FunctionDef | ast.AsyncFunctionDef, before: ast.stmt
) -> set[str]:
    """The function's parameters and the names it assigns before ``before``."""
    arguments = function.args
    names = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    names.update(a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None)
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            if node.lineno < before.lineno:
                names.add(node.id)
    return names


def _gradient_tape(
    function: ast.FunctionDef | ast.AsyncFunctionDef, name: str
) -> tuple[ast.With, str] | None:
    """The ``with tf.GradientTape() as tape:`` block of the function whose
    ``tape.gradient(...)`` takes a gradient with respect to ``name``."""
    # Imported here: ``syntax`` imports this package (``errors.cell_sources``), whose
    # ``__init__`` imports this module.
    from jupyterlab_tfcoach.monitor.syntax import is_tape_gradient, tape_names

    for node in ast.walk(function):
        if not isinstance(node, ast.With):
            continue
        for tape in tape_names(node):
            for inner in ast.walk(function):
                if is_tape_gradient(inner, tape) and any(
                    isinstance(n, ast.Name) and n.id == name
                    for source in inner.args[1:2]
                    for n in ast.walk(source)
                ):
                    return node, tape
    return None


def _made_from_arguments(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    statement: ast.Assign,
    name: str,
    line: str,
    used: list[str],
    frame: CellFrame,
) -> str:
    """A variable made from the function's own values: the move-out fix would name them
    where they do not exist. Made only to take a gradient with respect to it: a tensor is
    watched by the tape instead."""
    made_from = ", ".join(code(n) for n in used)
    said = (
        f"{code(function.name)} creates {code(name)} with {code(line)} on every call: a "
        "tf.function allows variables only on its first trace. Its value comes from "
        f"{made_from}, known only inside {code(function.name)}"
    )
    found = _gradient_tape(function, name)
    value = statement.value
    tf = ""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        tf = frame.segment(value.func.value) or ""
    if found is None or not tf or not isinstance(value, ast.Call) or len(value.args) != 1:
        return (
            said + ": create the variable once outside the function from a value of the "
            f"same shape, and only {code(name + '.assign(...)')} inside."
        )
    block, tape = found
    wrapped = frame.segment(value.args[0]) or ""
    header = frame.segment(block.items[0].context_expr) or ""
    if not wrapped or "\n" in wrapped or not header:
        return said + "."
    return (
        f"{said}. It is a variable only so that {code(tape + '.gradient')} can take a "
        "gradient with respect to it; a tape watches any tensor it is told to, so no "
        f"variable is needed. Fix: write line {statement.lineno} as "
        f"{code(f'{name} = {tf}.convert_to_tensor({wrapped})')} and put "
        f"{code(f'{tape}.watch({name})')} before line {block.body[0].lineno}, the first line "
        f"inside {code(f'with {header} as {tape}:')}."
    )
