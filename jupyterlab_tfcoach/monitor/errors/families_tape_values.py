"""Values a gradient tape or an optimizer cannot work with (issue #25).

- A NumPy value (or a Python number) given to ``tape.gradient`` as its target: the loss
  left TensorFlow inside the tape, through ``.numpy()``, a NumPy function (``np.mean``),
  ``float(...)`` or ``.item()``. TensorFlow then fails on the target itself
  (``'numpy.float32' object has no attribute '_id'``, ``'float' object has no attribute
  'dtype'``). Read from the failing ``<tape>.gradient(target, ...)``: the target's value
  is not a tensor; the statements that made it (its assignment before the failing line,
  in the same function, and the assignments of the names it reads, one level up) are
  searched for those exits. The fix rewrites them with TensorFlow ops, when every exit
  has one (``np.mean`` -> ``tf.reduce_mean``, ``x.numpy()`` -> ``x``).
- Tensors or arrays given to ``apply_gradients`` (or Keras 3's ``apply``) where the
  variables go: an optimizer assigns each new value in place, so Keras fails on the
  first tensor (``object has no attribute '_unique_id'``). Read from the failing call's
  pairs (``zip(G, V)``): ``V``'s items are not variables. When ``V`` was made by a list
  comprehension in the cells (``[tf.identity(p) for p in params]``), the fix makes its
  items variables (``[tf.Variable(p) for p in params]``); for a plain ``SGD`` whose rate
  is written in the cells, the entry also gives the step as new tensors, the form an
  outer tape can differentiate through (MAML's inner loop).

Nothing here runs user code: values come from the failing frame and the namespace.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any

from jupyterlab_tfcoach.monitor.errors.cell_sources import (
    assignments_in_cells,
    cell_frame,
    last_assignment,
)
from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    code,
    innermost_function,
    is_postfix_safe,
    rewrite_all,
    value_kind,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.families_gradient_sources import applied_pairs
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)

TAPE_SECTION = "gradient-tape"
VARIABLES_SECTION = "training-loop"

# ------------------------------------------------------------------ NumPy targets
_NUMPY_TARGET = re.compile(
    r"'(?P<type>numpy\.\w+|float|int)' object has no attribute '(?:_id|dtype)'"
    # A Python float target read where the tape expects a tensor's dtype.
    r"|Cannot convert the argument `type_value`: \S+ to a TensorFlow DType"
)
# NumPy functions a loss is written with, and TensorFlow's op for each (same arguments).
_TF_FOR_NUMPY = {
    "mean": "reduce_mean",
    "sum": "reduce_sum",
    "max": "reduce_max",
    "min": "reduce_min",
    "prod": "reduce_prod",
    "square": "square",
    "sqrt": "sqrt",
    "exp": "exp",
    "log": "math.log",
    "abs": "abs",
    "tanh": "tanh",
    "maximum": "maximum",
    "minimum": "minimum",
    "matmul": "matmul",
}
_MAX_STATEMENTS = 6


def _is_numpy_value(value: Any) -> bool:
    if type(value) in (float, int):
        return True
    module = getattr(type(value), "__module__", "")
    return type(module) is str and module.split(".")[0] == "numpy"


def _numpy_call(node: ast.AST, frame: CellFrame, context: ErrorContext) -> str | None:
    """``mean`` for ``np.mean(...)``, the alias bound to NumPy in the frame."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
    ):
        return None
    found, module = context.lookup(node.func.value.id, frame)
    numpy = sys.modules.get("numpy")
    if not found or numpy is None or module is not numpy:
        return None
    return node.func.attr


def _exits(
    value: ast.expr, frame: CellFrame, context: ErrorContext, tf: str
) -> tuple[list[str], list[tuple[ast.AST, str]], bool]:
    """The places ``value`` leaves TensorFlow (as the learner wrote them), each one's
    TensorFlow replacement, and whether every exit has one."""
    said: list[str] = []
    replacements: list[tuple[ast.AST, str]] = []
    complete = True
    taken: list[ast.AST] = []
    for node in ast.walk(value):
        if any(node is inner or _inside(node, inner) for inner in taken):
            continue
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        written = frame.segment(func) or ""
        if (
            isinstance(func, ast.Attribute)
            and func.attr in ("numpy", "item")
            and not node.args
            and not node.keywords
        ):
            inner = _operand(func.value, frame)
            said.append(f".{func.attr}()")
            if inner is None:
                complete = False
                continue
            replacements.append((node, inner))
            taken.append(node)
            complete = complete and not _has_exit(func.value, frame, context)
            continue
        if isinstance(func, ast.Name) and func.id == "float" and len(node.args) == 1:
            inner = _operand(node.args[0], frame)
            said.append("float(...)")
            if inner is None:
                complete = False
                continue
            replacements.append((node, inner))
            taken.append(node)
            complete = complete and not _has_exit(node.args[0], frame, context)
            continue
        function = _numpy_call(node, frame, context)
        if function is not None:
            said.append(written)
            op = _TF_FOR_NUMPY.get(function)
            if op is None:
                complete = False
                continue
            replacements.append((func, f"{tf}.{op}"))
    return said, replacements, complete


def _operand(node: ast.expr, frame: CellFrame) -> str | None:
    """``node``'s source, in parentheses unless it is a name, call, attribute or item: it
    takes the place of a call around it (``(a - b).numpy()`` -> ``(a - b)``)."""
    written = frame.segment(node)
    if written is None or is_postfix_safe(node):
        return written
    return f"({written})"


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    return node is not outer and any(child is node for child in ast.walk(outer))


def _has_exit(node: ast.AST, frame: CellFrame, context: ErrorContext) -> bool:
    """Whether an exit sits under a ``.numpy()``/``float()`` already taken (the fix would
    then leave the inner one in place)."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call) and (
            _numpy_call(inner, frame, context) is not None
            or (isinstance(inner.func, ast.Attribute) and inner.func.attr in ("numpy", "item"))
        ):
            return True
    return False


def _making_statements(target: str, frame: CellFrame, before: int) -> list[ast.Assign]:
    """The assignment of ``target`` before the failing line (in the same function) and
    those of the names its value reads, one level up, in source order."""
    tree = frame.tree()
    if tree is None:
        return []
    scope: ast.AST = innermost_function(tree, before) or tree
    made = last_assignment(scope, target, before)
    if made is None:
        return []
    found = [made]
    for node in ast.walk(made.value):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            read = last_assignment(scope, node.id, made.lineno)
            if read is not None and read not in found and len(found) < _MAX_STATEMENTS:
                found.append(read)
    return sorted(found, key=lambda statement: statement.lineno)


def _read_numpy_target(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in ("gradient", "jacobian", "batch_jacobian")
        and call.args
    ):
        return None
    tape = line.frame.segment(call.func.value) or "tape"
    target_node = call.args[0]
    found, target = value_of(target_node, line.frame, context)
    if not found or not _is_numpy_value(target):
        return None
    what = "a Python number" if type(target) in (float, int) else f"a NumPy {type(target).__name__}"
    written = line.frame.segment(target_node) or "the target"
    rule = (
        f"{code(written)}, the target given to {code(tape + '.' + call.func.attr)}, is "
        f"{what}, not a tensor"
    )
    why = (
        f". A {code('tf.GradientTape')} records TensorFlow operations only: once a value "
        f"leaves TensorFlow nothing links it back to the variables, so there is no "
        f"gradient to take. Keep every step from the weights to the loss in TensorFlow ops "
        f"(inside the tape), and convert to NumPy only afterwards, for printing."
    )
    if not isinstance(target_node, ast.Name):
        return Finding(rule + why, None)
    tf = context.module_alias("tensorflow", "tf")
    statements = _making_statements(target_node.id, line.frame, line.frame.position.line)
    exits: list[str] = []
    fixed: list[str] = []
    complete = bool(statements)
    for statement in statements:
        said, replacements, whole = _exits(statement, line.frame, context, tf)
        if not said:
            continue
        shown = line.frame.segment(statement) or ""
        if "\n" in shown:
            complete = False
            continue
        exits.append(f"{', '.join(code(s) for s in dict.fromkeys(said))} in {code(shown)}")
        rewritten = rewrite_all(line.frame, statement, replacements) if whole else None
        if rewritten is None:
            complete = False
        else:
            fixed.append(code(rewritten))
    if not exits:
        return Finding(rule + why, None)
    rule += f": it left TensorFlow through {'; '.join(exits)}"
    fix = " and ".join(fixed) if complete and fixed else None
    return Finding(rule + why, fix)


NUMPY_TARGET = ErrorFamily(
    "a NumPy value or Python number given to tape.gradient as its target",
    messages=(Message(_NUMPY_TARGET),),
    read=_read_numpy_target,
    section=TAPE_SECTION,
)


# ------------------------------------------------------------------ tensors as variables
_NOT_A_VARIABLE = re.compile(r"'(?P<type>[\w.]+)' object has no attribute '_unique_id'")
_COPIES = ("identity", "constant", "convert_to_tensor")


def _optimizer_rate(name: str, context: ErrorContext) -> str | None:
    """``INNER_LR`` of ``opt = keras.optimizers.SGD(INNER_LR)`` (a plain SGD: no momentum,
    no nesterov), from the cells."""
    for cell, statement in assignments_in_cells(name, context):
        value = statement.value
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute | ast.Name)):
            return None
        made = value.func.attr if isinstance(value.func, ast.Attribute) else value.func.id
        if made != "SGD":
            return None
        keywords = {k.arg: k.value for k in value.keywords if k.arg}
        if any(k in keywords for k in ("momentum", "nesterov")) or len(value.args) > 1:
            return None
        rate = keywords.get("learning_rate") or (value.args[0] if value.args else None)
        written = cell.segment(rate) if rate is not None else "0.01"
        return written if written and "\n" not in written else None
    return None


def _made_by(name: str, context: ErrorContext) -> tuple[str, str | None] | None:
    """``fast = [tf.identity(p) for p in params]`` from the cells, and the same list of
    variables (``fast = [tf.Variable(p) for p in params]``) when its items are made by a
    comprehension."""
    tf = context.module_alias("tensorflow", "tf")
    for cell, statement in assignments_in_cells(name, context):
        shown = cell.segment(statement)
        if not shown or "\n" in shown:
            return None
        value = statement.value
        if not isinstance(value, ast.ListComp):
            return shown, None
        item = value.elt
        frame = cell_frame(cell)
        if (
            isinstance(item, ast.Call)
            and (item.func.attr if isinstance(item.func, ast.Attribute) else "") in _COPIES
            and len(item.args) == 1
            and not item.keywords
        ):
            fixed = rewrite_all(frame, statement, [(item.func, f"{tf}.Variable")])
        else:
            inner = cell.segment(item)
            fixed = rewrite_all(frame, statement, [(item, f"{tf}.Variable({inner})")])
        return shown, fixed
    return None


def _listed_values(node: ast.expr, line: FailingLine, context: ErrorContext) -> list[Any]:
    """The items of a list held by a name (or written as a list of names), or []."""
    if isinstance(node, ast.List | ast.Tuple):
        items = []
        for element in node.elts:
            found, value = value_of(element, line.frame, context)
            if not found:
                return []
            items.append(value)
        return items
    found, value = value_of(node, line.frame, context)
    return list(value) if found and type(value) in (list, tuple) else []


def _read_tensor_variables(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = line.call
    applied = applied_pairs(call)
    if applied is None or not isinstance(call, ast.Call):
        return None
    gradients, variables_node = applied
    variables = _listed_values(variables_node, line, context)
    if not variables:
        return None
    kinds = [value_kind(item) for item in list(variables)[:1000]]
    plain = [kind for kind in kinds if kind in ("tensor", "array")]
    if not plain or any(kind is None for kind in kinds):
        return None
    method = line.frame.segment(call.func) or "apply_gradients"
    listed = line.frame.segment(variables_node) or "the variables"
    what = "NumPy arrays" if all(kind == "array" for kind in plain) else "plain tensors"
    if len(plain) < len(kinds):
        count = f"{len(plain)} of its {len(kinds)} items are not variables"
    elif len(kinds) > 1:
        count = f"its {len(kinds)} items are not variables"
    else:
        count = "its item is not a variable"
    rule = (
        f"{code(method)} updates each variable in place (it assigns the new value), so "
        f"every gradient must be paired with a {code('tf.Variable')}; {code(listed)} holds "
        f"{what} ({count}), which cannot be assigned"
    )
    made = _made_by(listed, context) if isinstance(variables_node, ast.Name) else None
    if made is not None:
        rule += f": {code(made[0])} made them"
    owner = call.func.value if isinstance(call.func, ast.Attribute) else None
    rate = _optimizer_rate(owner.id, context) if isinstance(owner, ast.Name) else None
    if rate is not None and isinstance(variables_node, ast.Name):
        step = f"{listed} = [w - {rate} * g for w, g in zip({listed}, {gradients})]"
        rule += (
            f". If an outer tape must differentiate through this step (a meta-learning "
            f"inner loop), no optimizer can do it, since assigning cuts the path: write "
            f"the step as new tensors, {code(step)}"
        )
    fix = made[1] if made is not None else None
    if fix is None:
        return Finding(
            rule + f". To step them with the optimizer, make them with {code('tf.Variable')}.", None
        )
    return Finding(
        rule + ". To step them with the optimizer, make them variables of their own (the "
        "values they were copied from stay as they are).",
        code(fix),
    )


TENSOR_VARIABLES = ErrorFamily(
    "tensors or arrays given to an optimizer where its variables go",
    messages=(Message(_NOT_A_VARIABLE),),
    read=_read_tensor_variables,
    section=VARIABLES_SECTION,
    exception_type="AttributeError",
)
