"""A method missing from an object ``tf.saved_model.load`` restored (issue #25), read for
``families_api_names``' family of names that do not exist.

A SavedModel keeps a ``tf.Module``'s variables, its tracked objects and its
``tf.function``s that were traced (with an ``input_signature`` or called before
saving); a plain Python method is not saved, so ``loaded.predict_np`` is missing on the
restored ``_UserObject``. Read: the restored functions (the object's own dict entries
of TensorFlow's ``RestoredFunction`` class), the method's ``def`` in a class of the
cells, and, when its body is one ``return`` that uses only restored functions of
``self``, the failing statement with that body written on the loaded object
(``loaded(tf.constant(t_np[:5], tf.float32)).numpy()``).
"""

from __future__ import annotations

import ast

from jupyterlab_tfcoach.monitor.errors.cell_sources import nodes_in_cells
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.stored_state import instance_dict

_type_name = type.__dict__["__name__"].__get__
SECTION = "staging"  # module 4: a graph is data; a SavedModel runs without the Python


def is_restored_object(owner: object) -> bool:
    return _type_name(type(owner)) == "_UserObject"


def _restored_functions(owner: object) -> list[str]:
    own = instance_dict(owner)
    if own is None:
        return []
    return [
        name
        for name, value in list(own.items())[:200]
        if type(name) is str and _type_name(type(value)) == "RestoredFunction"
    ]


def _method_def(name: str, context: ErrorContext) -> tuple[str, str, ast.FunctionDef] | None:
    """``(class name, cell label, the def)`` of a method ``name`` in a class of the cells."""
    for cell, node in nodes_in_cells(context):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    return node.name, cell.label, item
    return None


class _OnLoaded(ast.NodeTransformer):
    """The method's body with ``self`` and its parameters replaced by the call's values."""

    def __init__(self, values: dict[str, ast.expr]) -> None:
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return self.values.get(node.id, node)


def _body_on_loaded(
    method: ast.FunctionDef, call: ast.Call, loaded: ast.expr, restored: list[str]
) -> str | None:
    body = [
        s
        for s in method.body
        if not isinstance(s, ast.Expr) or not isinstance(s.value, ast.Constant)
    ]
    parameters = [a.arg for a in method.args.args]
    if (
        len(body) != 1
        or not isinstance(body[0], ast.Return)
        or body[0].value is None
        or not parameters
        or method.args.vararg
        or method.args.kwonlyargs
        or call.keywords
        or len(call.args) != len(parameters) - 1
        or any(isinstance(a, ast.Starred) for a in call.args)
    ):
        return None
    expression = body[0].value
    this = parameters[0]
    for node in ast.walk(expression):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == this and node.attr not in restored:
                return None  # a plain method or attribute of self: not on the loaded object
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == this:
            if "__call__" not in restored:
                return None
    values = {this: loaded, **dict(zip(parameters[1:], call.args, strict=True))}
    fixed = _OnLoaded(values).visit(ast.parse(ast.unparse(expression), mode="eval"))
    return ast.unparse(fixed)


def missing_saved_method(
    line: FailingLine, node: ast.Attribute, owner: object, context: ErrorContext
) -> tuple[str, str | None, str] | None:
    """(rule, fix, section) for ``loaded.<name>`` missing on a restored SavedModel."""
    name = node.attr
    loaded = line.frame.segment(node.value) or "the loaded object"
    restored = _restored_functions(owner)
    shown = [
        f"`{loaded}(...)` itself" if function == "__call__" else code(f"{loaded}.{function}")
        for function in restored
    ]
    kept = f"; this one has {', '.join(shown)}" if shown else "; this one has none"
    found = _method_def(name, context)
    where = (
        f"{code(f'{found[0]}.{name}')} ({found[1]}) is a plain Python method"
        if found is not None
        else f"{code(name)} was not a traced tf.function of the saved object"
    )
    rule = (
        f"{code(loaded)} was restored by `tf.saved_model.load`, which brings back variables "
        f"and the tf.functions that were traced (given an `input_signature`, or called "
        f"before saving), not Python code: {where}, so it was not saved{kept}. Call the "
        f"restored functions (do NumPy work on their results), or make the method a "
        f"`@tf.function` with an `input_signature` of TensorFlow ops and save again"
    )
    fix = None
    statement = line.statement
    calls = (
        [c for c in ast.walk(statement) if isinstance(c, ast.Call) and c.func is node]
        if statement is not None
        else []
    )
    if found is not None and calls and statement is not None:
        body = _body_on_loaded(found[2], calls[0], node.value, restored)
        fixed = rewrite(line.frame, statement, calls[0], body) if body else None
        fix = code(fixed) if fixed and "\n" not in fixed else None
    return rule + ".", fix, SECTION
