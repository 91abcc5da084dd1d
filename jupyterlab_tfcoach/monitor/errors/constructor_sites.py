"""Where the learner gave the value a library call inside their own class used.

A learner's layer builds a Keras layer from a constructor parameter
(``self.token_emb = layers.Embedding(vocab_size, embed_dim)`` in ``__init__``) and fails
later, in ``call``, because of that value. The class is right; the value was wrong where
the learner made the object (``probe_emb = TokenAndPositionEmbedding(maxlen,
int(x_train.max()), 16)``), so that call is what a fix edits, not the class.

``constructor_argument`` follows it back, from the syntax alone and the namespace's
names: the attribute the failing line calls on ``self``, its assignment in the class's
``__init__`` (in the cell that defines the class), the parameter it was given, the object
the running cell's line uses (its class of that name), that object's newest assignment
(in the running cell before the line, else in the cells) and the argument written there
for the parameter, by position or keyword.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells, cell_frame
from jupyterlab_tfcoach.monitor.errors.context import CellFrame, ErrorContext, class_mro


@dataclass(frozen=True)
class ConstructorArgument:
    """The learner's ``name = Class(...)`` and the argument it passed for a parameter."""

    frame: CellFrame  # for ``rewrite``
    statement: ast.Assign
    argument: ast.expr
    parameter: str
    instance: str  # the name bound to the object
    attribute: str  # the ``self.<attribute>`` built from the parameter
    where: str  # "line 2 of this cell", "cell In[4]"


def _enclosing_class(tree: ast.Module, line: int) -> ast.ClassDef | None:
    found = None
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.lineno <= line <= (node.end_lineno or 0):
            if found is None or node.lineno > found.lineno:
                found = node
    return found


def _init_of(cls: ast.ClassDef) -> ast.FunctionDef | None:
    return next(
        (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None
    )


def built_from_parameter(
    frame: CellFrame, attribute: str, position: int = 0, keyword: str = ""
) -> tuple[ast.ClassDef, str] | None:
    """``self.<attribute> = Something(<param>, ...)`` in the ``__init__`` of the class the
    frame's line is in, its argument at ``position`` (or ``keyword``) a parameter of that
    ``__init__``: (the class, the parameter's name)."""
    tree = frame.tree()
    if tree is None:
        return None
    cls = _enclosing_class(tree, frame.position.line)
    init = _init_of(cls) if cls is not None else None
    if cls is None or init is None:
        return None
    parameters = {a.arg for a in [*init.args.args, *init.args.kwonlyargs][1:]}
    for node in ast.walk(init):
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Attribute)
            and isinstance(node.targets[0].value, ast.Name)
            and node.targets[0].value.id == "self"
            and node.targets[0].attr == attribute
            and isinstance(node.value, ast.Call)
        ):
            continue
        call = node.value
        given = next((k.value for k in call.keywords if k.arg == keyword), None)
        if given is None and len(call.args) > position:
            given = call.args[position]
        if isinstance(given, ast.Name) and given.id in parameters:
            return cls, given.id
    return None


def constructor_argument(
    cls: ast.ClassDef, parameter: str, attribute: str, context: ErrorContext
) -> ConstructorArgument | None:
    """The newest ``name = <cls.name>(...)`` for an object of that class the running
    cell's line uses, and its argument for ``parameter``."""
    init = _init_of(cls)
    frames = context.frames()
    if init is None or len(frames) < 2:
        return None
    positional = [a.arg for a in init.args.args[1:]]
    outer = frames[-1]
    statement = outer.statement()
    if statement is None:
        return None
    used = {
        node.id
        for part in outer.header()
        for node in ast.walk(part)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }
    for name in sorted(used):
        found, value = context.lookup(name, None)
        mro = class_mro(value) if found else ()
        if not mro or mro[0].__name__ != cls.name:
            continue
        site = _assignment(name, cls.name, outer, context)
        if site is None:
            continue
        frame, assignment, where = site
        call = assignment.value
        assert isinstance(call, ast.Call)
        given = next((k.value for k in call.keywords if k.arg == parameter), None)
        if given is None and parameter in positional:
            index = positional.index(parameter)
            if index < len(call.args) and not any(
                isinstance(a, ast.Starred) for a in call.args[: index + 1]
            ):
                given = call.args[index]
        if given is None:
            return None
        return ConstructorArgument(frame, assignment, given, parameter, name, attribute, where)
    return None


def _assignment(
    name: str, class_name: str, outer: CellFrame, context: ErrorContext
) -> tuple[CellFrame, ast.Assign, str] | None:
    """``name = ClassName(...)``: in the running cell before its failing line, else the
    newest at the top of the cells."""

    def made_by_class(node: ast.AST) -> bool:
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
            and isinstance(node.value, ast.Call)
        ):
            return False
        func = node.value.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        return called == class_name

    tree = outer.tree()
    if tree is not None:
        here = [
            node
            for node in tree.body
            if made_by_class(node) and node.lineno < outer.position.line  # type: ignore[attr-defined]
        ]
        if here:
            chosen = here[-1]
            assert isinstance(chosen, ast.Assign)
            return outer, chosen, f"line {chosen.lineno} of this cell"
    for cell, statement in assignments_in_cells(name, context):
        if not made_by_class(statement):
            return None
        return cell_frame(cell), statement, cell.label
    return None
