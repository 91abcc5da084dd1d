"""The learner's name for an object: the public name a notebook namespace binds to it.

Entries and notes name what the learner wrote (``model``, ``train_ds``, ``lin``), so the
parts of the monitor that only hold an object (a traced method's ``self``, a used-up
iterator and its dataset) or only its id (a fitted model, its History: weak references
and ids only) ask here. The search is by identity, given as the object's id so a caller
that kept only the id can ask too; it reads a plain ``dict``'s own items (a namespace of
another type is not read: its methods could be the user's code), skips names starting
with ``_`` (IPython's ``_``, ``__``, ``_i3``...), and stops after ``MAX_NAMES`` names: a
notebook namespace of a few thousand names is scanned in well under a millisecond, and
only when an entry needs the name. ``None`` is never named: a name bound to None says
nothing about an object.
"""

from __future__ import annotations

from typing import Any

MAX_NAMES = 20_000


def name_bound_to(object_id: int | None, namespace: Any) -> str | None:
    """The first public name in ``namespace`` bound to the object whose id is
    ``object_id`` (``id(obj)``), or None."""
    if object_id is None or object_id == id(None) or type(namespace) is not dict:
        return None
    try:
        for name, value in list(namespace.items())[:MAX_NAMES]:
            if id(value) == object_id and type(name) is str and not name.startswith("_"):
                return name
    except Exception:
        return None
    return None


MAX_LISTED = 100


def name_or_item_bound_to(object_id: int | None, namespace: Any) -> str | None:
    """``name_bound_to``, else ``models[0]`` for an object held as an item of a plain list or
    tuple that a public name holds (at most ``MAX_LISTED`` items read per list)."""
    found = name_bound_to(object_id, namespace)
    if found is not None or object_id is None or type(namespace) is not dict:
        return found
    try:
        for name, value in list(namespace.items())[:MAX_NAMES]:
            if type(name) is not str or name.startswith("_") or type(value) not in (list, tuple):
                continue
            for index, item in enumerate(value[:MAX_LISTED]):
                if id(item) == object_id:
                    return f"{name}[{index}]"
    except Exception:
        return None
    return None
