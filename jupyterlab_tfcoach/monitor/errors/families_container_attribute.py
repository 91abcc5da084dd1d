"""An attribute read on a tuple, list or dict whose items have it: ``ds.element_spec.shape``
on a dataset of pairs, ``model.outputs.dtype``, ``weights.shape`` for a list of arrays.

A dataset of ``(x, y)`` pairs has a tuple of two specs as its ``element_spec``; a model of
two outputs returns a list; ``get_weights()`` gives a list of arrays. Each item has
``.shape``/``.dtype``, the container does not, and Python says only ``'tuple' object has
no attribute 'shape'``, raised in the learner's line after TensorFlow returned (no library
frame). The reading finds the attribute node on the failing line, reads the value it was
read from (names and library attributes only, nothing called), and claims the error only
when that value is a tuple, list or dict of at most a few dozen items that are all
TensorFlow, Keras or NumPy objects having that attribute: then the cause is the
container, and the entry says how many items there are, what each is, and how to reach
one (the first item indexed, the fix) or all of them (a comprehension).
"""

from __future__ import annotations

import ast
import inspect
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, kind_of, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    segment_of,
)

_NO_ATTRIBUTE = re.compile(
    r"^'(?P<container>tuple|list|dict)' object has no attribute '(?P<attribute>\w+)'$"
)
_MAX_ITEMS = 32
_LIBRARIES = ("tensorflow", "keras", "tf_keras", "numpy")
_MAX_FIX = 200
# How the entry names the items of the usual kinds (a class name for the others).
_KIND_WORDS = {
    "tensor": "tensor",
    "variable": "variable",
    "keras_variable": "Keras variable",
    "array": "NumPy array",
}


def _library_item(item: Any, attribute: str) -> str | None:
    """What a TensorFlow/Keras/NumPy object whose class has ``attribute`` is (read
    statically on the class: nothing runs): a kind word, else its class name as code;
    None for anything else."""
    cls = type(item)
    module = getattr(cls, "__module__", "")
    if type(module) is not str or not module.startswith(_LIBRARIES):
        return None
    try:
        inspect.getattr_static(cls, attribute)
    except AttributeError:
        return None
    kind = _KIND_WORDS.get(kind_of(item))
    if kind is not None:
        return kind
    name = getattr(cls, "__name__", "")
    return code(name) if type(name) is str and name.isidentifier() else None


def _receiver(line: FailingLine, attribute: str) -> ast.Attribute | None:
    """The one ``<expr>.<attribute>`` on the failing line (None if none or several)."""
    found = [
        node
        for part in line.frame.header()
        for node in ast.walk(part)
        if isinstance(node, ast.Attribute) and node.attr == attribute
    ]
    return found[0] if len(found) == 1 else None


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    container, attribute = error.group("container"), error.group("attribute")
    node = _receiver(line, attribute)
    if node is None:
        return None
    found, value = value_of(node.value, line.frame, context)
    if not found or type(value).__name__ != container or type(value) not in (tuple, list, dict):
        return None
    if not 0 < len(value) <= _MAX_ITEMS:
        return None
    keys: list[Any] = list(value) if type(value) is dict else list(range(len(value)))
    items = [value[key] for key in keys]
    kinds = [_library_item(item, attribute) for item in items]
    if any(kind is None for kind in kinds):
        return None  # the learner's own data: not this family's to read
    if type(value) is dict and not all(type(key) is str and key.isidentifier() for key in keys):
        return None
    source, whole = segment_of(line, node.value), segment_of(line, node)
    if not source or not whole:
        return None
    names = sorted(set(kinds))  # type: ignore[arg-type]
    each = names[0] if len(names) == 1 else " or ".join(names[:3])
    article = "an" if each.strip("`")[:1].lower() in ("a", "e", "i", "o", "u") else "a"
    count = len(items)
    first = f'"{keys[0]}"' if type(value) is dict else "0"
    indexed = f"{source}[{first}].{attribute}"
    if type(value) is dict:
        every = f"{{key: item.{attribute} for key, item in {source}.items()}}"
        listed = ", ".join(f'"{key}"' for key in keys[:6]) + (", ..." if count > 6 else "")
        what = f"a dict of {count} item{'s' if count != 1 else ''} (keys {listed})"
    else:
        every = f"[item.{attribute} for item in {source}]"
        what = f"a {container} of {count} item{'s' if count != 1 else ''}"
    rule = (
        f"{code(source)} is {what}, each {article} {each} with {code('.' + attribute)}; the "
        f"{container} itself has no {code('.' + attribute)}. Read it on the item you mean "
        f"({code(indexed)} for the first), or on every one: {code(every)}"
    )
    statement = line.frame.statement()
    fixed = (
        rewrite(line.frame, statement, node, indexed)
        if statement is not None and not hasattr(statement, "body")
        else None
    )
    if not fixed or "\n" in fixed or len(fixed) > _MAX_FIX:
        return Finding(rule + ".", None)
    return Finding(rule + ".", code(fixed))


CONTAINER_ATTRIBUTE = ErrorFamily(
    "an attribute read on a tuple, list or dict of library objects that have it",
    messages=(Message(_NO_ATTRIBUTE),),
    read=_read,
    section="shape-dtype-device",
    exception_type="AttributeError",
    without_library=True,
)
