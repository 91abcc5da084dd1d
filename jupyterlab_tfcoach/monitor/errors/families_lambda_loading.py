"""A saved model holding a ``Lambda`` layer, refused by ``load_model`` (issue #25).

``scaled = layers.Lambda(lambda t: t * 0.5)(inputs)``, the model saved to a ``.keras``
file, then ``keras.models.load_model(path)``: Keras 3 stores the lambda as Python
bytecode and, in its default ``safe_mode``, refuses to run code read from a file
(``Requested the deserialization of a `Lambda` layer whose `function` is a Python
lambda``). The reading names the model saved at that path (``m.save(path)`` in the cells,
the path as written in both calls) and the ``Lambda(...)`` written in the cells. The fix
replaces a lambda that only scales or shifts its input (``t * 0.5``, ``t / 255.0``,
``t - 1``) by the built-in layer that does the same and saves with the model's config,
``layers.Rescaling(0.5)`` (``offset=`` for a shift); ``safe_mode=False`` is named for a
file the learner made themself.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.cell_sources import nodes_in_cells
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)

SECTION = "keras-saving"
_LAMBDA = re.compile(r"Requested the deserialization of a `Lambda` layer whose `function`")


def _scaling(lambda_node: ast.expr) -> str | None:
    """``lambda t: t * 0.5`` -> ``Rescaling(0.5)``; ``t / 255.0`` -> ``Rescaling(1 / 255.0)``;
    ``t - 1.0`` -> ``Rescaling(1.0, offset=-1.0)``, else None."""
    if not (isinstance(lambda_node, ast.Lambda) and len(lambda_node.args.args) == 1):
        return None
    name = lambda_node.args.args[0].arg
    body = lambda_node.body
    if not isinstance(body, ast.BinOp):
        return None
    left, right = body.left, body.right
    if isinstance(right, ast.Name) and isinstance(body.op, ast.Mult):
        left, right = right, left
    if not (isinstance(left, ast.Name) and left.id == name):
        return None
    if not (isinstance(right, ast.Constant) and type(right.value) in (int, float)):
        return None
    value = right.value
    written = repr(value)
    if isinstance(body.op, ast.Mult):
        return f"Rescaling({written})"
    if isinstance(body.op, ast.Div) and value != 0:
        return f"Rescaling(1 / {written})"
    if isinstance(body.op, ast.Add):
        return f"Rescaling(1.0, offset={written})"
    if isinstance(body.op, ast.Sub):
        return f"Rescaling(1.0, offset={-value!r})"
    return None


def _read_lambda(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    del error
    call = line.call
    if not (isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Constant)):
        return None
    path = call.args[0].value
    saved = None
    lambdas: list[tuple[str, ast.Call, str]] = []
    for cell, node in nodes_in_cells(context):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if (
            saved is None
            and called == "save"
            and isinstance(func, ast.Attribute)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == path
        ):
            saved = cell.segment(func.value)
        if called == "Lambda" and node.args:
            written = cell.segment(node)
            if written and "\n" not in written:
                lambdas.append((written, node, cell.segment(func) or "Lambda"))
    if not lambdas:
        return None
    written, lambda_call, func = lambdas[0]
    model = f"{code(saved)} (saved to that path)" if saved else "the model saved there"
    rule = (
        f"{model} holds {code(written)}: a Lambda layer keeps its function as Python code in "
        f"the file, and {code('load_model')} refuses to run code read from a file unless "
        f"given {code('safe_mode=False')} (only for a file you made yourself)"
    )
    scaling = _scaling(lambda_call.args[0])
    if scaling is None:
        return Finding(rule + ".", None)
    replacement = func[: -len("Lambda")] + scaling
    rule += (
        f". {code(replacement)} does the same with a built-in layer, which saves as a "
        "config and loads safely"
    )
    return Finding(
        rule + ".",
        f"in place of {code(written)}, write {code(replacement)}, then save the model again",
    )


LAMBDA_LOADING = ErrorFamily(
    "a saved Lambda layer refused by load_model",
    messages=(Message(_LAMBDA),),
    read=_read_lambda,
    section=SECTION,
)
