"""An attribute read on a loop variable that only some members of the collection have
(issue #25): ``for layer in model.layers: print(layer.kernel)`` stops at the model's
``InputLayer`` or ``Activation`` layer; ``for m in modules: m.w`` stops at the one module
of another class.

Python says only ``'InputLayer' object has no attribute 'kernel'``: read alone it looks
like a misspelt or removed name, but the name is right for the members it was written
for. The reading finds the ``for`` whose target is the name the attribute is read on and
whose body holds the failing line, reads what it loops over (a list or tuple a name
holds, or ``<model>.layers``/``.submodules`` through Keras's own property: nothing of the
learner's runs), and claims the error only when another member of it does have the
attribute (in its instance dict or on its class, read statically). The entry names the
classes that lack it and the class(es) that have it, and the fix filters the loop with
``isinstance`` on the class(es) that have it.
"""

from __future__ import annotations

import ast
import inspect
import sys
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import Finding
from jupyterlab_tfcoach.monitor.stored_state import (
    instance_dict,
    is_library_class,
    library_attribute,
)

_type_name = type.__dict__["__name__"].__get__
_MAX_MEMBERS = 500
_MAX_NAMED = 4
# Library properties listing a model's or module's members, read through the library.
_MEMBER_LISTS = ("layers", "submodules")


def _has(member: Any, name: str) -> bool:
    """Whether ``member.<name>`` exists, read without running any of its code."""
    attributes = instance_dict(member)
    if attributes is not None and name in attributes:
        return True
    try:
        inspect.getattr_static(type(member), name)
    except AttributeError:
        return False
    except Exception:
        return False
    return True


def _enclosing_loop(line: FailingLine, variable: str) -> ast.For | None:
    """The innermost ``for <variable> in ...:`` whose body holds the failing line."""
    tree = line.frame.tree()
    if tree is None:
        return None
    row = line.frame.position.line
    found: ast.For | None = None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.For)
            and isinstance(node.target, ast.Name)
            and node.target.id == variable
            and node.body
            and node.body[0].lineno <= row <= (node.end_lineno or 0)
            and (found is None or node.lineno > found.lineno)
        ):
            found = node
    return found


def _members(loop: ast.For, line: FailingLine, context: ErrorContext) -> list[Any] | None:
    iterable = loop.iter
    if (
        isinstance(iterable, ast.Attribute)
        and iterable.attr in _MEMBER_LISTS
        and isinstance(iterable.value, (ast.Name, ast.Attribute))
    ):
        found, owner = value_of(iterable.value, line.frame, context)
        if not found or not is_library_class(type(owner)):
            return None
        members = library_attribute(owner, iterable.attr)
    else:
        found, members = value_of(iterable, line.frame, context)
        if not found:
            return None
    if type(members) not in (list, tuple) or not 1 < len(members) <= _MAX_MEMBERS:
        return None
    return list(members)


def _written(cls: type, line: FailingLine, context: ErrorContext) -> str | None:
    """How the learner's cell can name ``cls``: its own name when the cell's namespace
    holds it, ``keras.layers.<Name>`` (under the learner's alias) for a Keras layer class
    that is not imported by name; None otherwise."""
    name = _type_name(cls)
    found, value = context.lookup(name, line.frame)
    if found and value is cls:
        return name
    layers = sys.modules.get("keras.layers")
    keras = sys.modules.get("keras")
    if layers is not None and keras is not None and vars(layers).get(name) is cls:
        alias = context.module_alias("keras", "")
        if alias and context.namespace.get(alias) is keras:
            return f"{alias}.layers.{name}"
    return None


def _listed(names: list[str]) -> str:
    shown = [code(name) for name in names[:_MAX_NAMED]]
    return ", ".join(shown) + (", ..." if len(names) > _MAX_NAMED else "")


def loop_member_lacking(
    line: FailingLine, node: ast.Attribute, owner: Any, name: str, context: ErrorContext
) -> Finding | None:
    """The finding when ``node`` (``<loop variable>.<name>``) failed on one member of a
    loop's collection whose other members have ``name``; None otherwise."""
    if not isinstance(node.value, ast.Name):
        return None
    variable = node.value.id
    loop = _enclosing_loop(line, variable)
    if loop is None:
        return None
    members = _members(loop, line, context)
    if members is None or not any(member is owner for member in members):
        return None
    having: list[str] = []
    lacking: list[str] = []
    for member in members:
        class_name = _type_name(type(member))
        bucket = having if _has(member, name) else lacking
        if class_name not in bucket:
            bucket.append(class_name)
    if not having or not lacking or set(having) & set(lacking):
        return None  # one class both with and without it: not a matter of classes
    iterable = line.frame.segment(loop.iter)
    if not iterable or "\n" in iterable:
        return None
    classes_of = {_type_name(type(member)): type(member) for member in members}
    written = [_written(classes_of[class_name], line, context) for class_name in having]
    stopped = _type_name(type(owner))
    article = "an" if stopped[:1].lower() in "aeiou" else "a"
    rule = (
        f"the loop over {code(iterable)} reaches members of other classes than the ones "
        f"{code('.' + name)} was written for: {_listed(having)} "
        f"{'has' if len(having) == 1 else 'have'} {code(name)}, {_listed(lacking)} "
        f"{'does' if len(lacking) == 1 else 'do'} not (it stopped at {article} "
        f"{code(stopped)}). The name is right; the loop must skip the members that lack it"
    )
    test = f"hasattr({variable}, {name!r})"
    if all(written) and len(written) <= _MAX_NAMED:
        classes = written[0] if len(written) == 1 else f"({', '.join(written)})"  # type: ignore[arg-type]
        condition = f"isinstance({variable}, {classes})"
    else:
        condition = test
    filtered = f"[{variable} for {variable} in {iterable} if {condition}]"
    header = rewrite(line.frame, loop, loop.iter, filtered)
    header = header.splitlines()[0] if header else None
    if header is None or not header.rstrip().endswith(":"):
        return Finding(rule + ".", f"test each member first: {code(f'if {condition}:')}")
    other = f", or {code(test)}" if condition != test else ""
    rule += (
        f" ({code(f'if {condition}:')} above the loop's body{other}, or a loop over those "
        "members only)"
    )
    fix = code(header.strip())
    return Finding(rule + ".", fix)
