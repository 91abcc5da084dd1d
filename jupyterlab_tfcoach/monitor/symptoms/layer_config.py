"""A custom Keras layer or model whose ``get_config`` leaves out a constructor parameter.

``__init__(self, units, factor=1.0, **kwargs)`` with ``get_config`` returning only
``units``: saving writes the config without ``factor``, and loading (``from_config``,
``keras.models.load_model``) builds the layer with the default ``factor=1.0``. Nothing
raises when the missing parameter has a default; the reloaded model computes something
else.

After a cell that completed, only when its text holds ``get_config`` (one substring
test), its source is parsed once (``syntax.parsed_source``, shared) for classes defining
both ``__init__`` and ``get_config`` whose class, as the namespace now holds it, derives
from a Keras class (its MRO read, no code run). The keys ``get_config`` writes are read
from its dict literals, ``config["key"] = ...`` and ``dict(key=...)``; a ``get_config``
that adds anything unreadable (``config.update(extra)``, ``**other``) is left alone. The
parameters of ``__init__`` (but ``self``, ``*args``, ``**kwargs`` and the base layer's
``name``/``trainable``/``dtype``) missing from those keys are named; the fix is the
statement holding the last dict literal with the missing keys added, each as the
attribute ``__init__`` stored it in (``self.factor = factor``).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "keras-saving"
MAX_NOTES = 2
BASE_PARAMETERS = frozenset({"self", "name", "trainable", "dtype"})


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def _is_base_config(node: ast.AST, base_names: set[str]) -> bool:
    """``super().get_config()`` or a name assigned from it."""
    if isinstance(node, ast.Name):
        return node.id in base_names
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get_config"
        and isinstance(node.func.value, ast.Call)
        and isinstance(node.func.value.func, ast.Name)
        and node.func.value.func.id == "super"
    )


def _written_keys(method: ast.FunctionDef) -> tuple[set[str], list[ast.Dict]] | None:
    """The keys ``get_config`` writes and its dict literals; None when it adds something
    unreadable."""
    base_names: set[str] = set()
    for node in ast.walk(method):
        if isinstance(node, ast.Assign) and _is_base_config(node.value, set()):
            base_names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    keys: set[str] = set()
    literals: list[ast.Dict] = []
    for node in ast.walk(method):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if key is None:
                    if not _is_base_config(value, base_names):
                        return None
                elif isinstance(key, ast.Constant) and type(key.value) is str:
                    keys.add(key.value)
                else:
                    return None
            literals.append(node)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            if isinstance(node.slice, ast.Constant) and type(node.slice.value) is str:
                keys.add(node.slice.value)
            else:
                return None
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "update":
                if any(not isinstance(a, ast.Dict) for a in node.args):
                    return None
                keys |= {k.arg for k in node.keywords if k.arg is not None}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "dict":
                keys |= {k.arg for k in node.keywords if k.arg is not None}
                if any(k.arg is None for k in node.keywords) or node.args:
                    return None
    return keys, literals


def _parameters(init: ast.FunctionDef) -> list[str]:
    arguments = init.args
    names = [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
    return [n for n in names if n not in BASE_PARAMETERS]


def _stored_as(init: ast.FunctionDef, parameter: str) -> str | None:
    """``self.factor`` for ``self.factor = factor`` in ``__init__``."""
    for node in ast.walk(init):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Name)
            and node.value.id == parameter
        ):
            for target in node.targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ):
                    return f"self.{target.attr}"
    return None


def _keras_class(value: Any) -> bool:
    if not isinstance(value, type):
        return False
    try:
        mro = type.__dict__["__mro__"].__get__(value)
    except Exception:
        return False
    return any(str(getattr(k, "__module__", "")).startswith("keras") for k in mro[1:])


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The notes for this cell's Keras classes whose get_config leaves out parameters."""
    if "get_config" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    found: list[Note] = []
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef) or not _keras_class(namespace.get(cls.name)):
            continue
        init, config = _method(cls, "__init__"), _method(cls, "get_config")
        if init is None or config is None:
            continue
        written = _written_keys(config)
        if written is None:
            continue
        keys, literals = written
        missing = [p for p in _parameters(init) if p not in keys]
        if missing:
            found.append(_note(cls, init, config, missing, literals, source))
        if len(found) >= MAX_NOTES:
            break
    return found


def _note(
    cls: ast.ClassDef,
    init: ast.FunctionDef,
    config: ast.FunctionDef,
    missing: list[str],
    literals: list[ast.Dict],
    source: str,
) -> Note:
    listed = ", ".join(f"`{m}`" for m in missing)
    several = len(missing) > 1
    text = (
        f"`{cls.name}.__init__` (line {init.lineno} of this cell) takes {listed}, but "
        f"`{cls.name}.get_config` (line {config.lineno}) does not put "
        f"{'them' if several else 'it'} in the config: saving the model leaves "
        f"{'them' if several else 'it'} out, and loading it (`load_model`, "
        f"`{cls.name}.from_config`) builds the layer with "
        f"{'their defaults' if several else 'its default'} (or fails without one). "
        f"Nothing raises when saving: the reloaded model computes something else."
    )
    stored = {m: _stored_as(init, m) for m in missing}
    statement = _fixed_statement(config, literals, stored, source)
    if statement is not None:
        text += f" Add {'them' if several else 'it'} to the config: `{statement}`."
    else:
        entries = ", ".join(f'"{m}": self.{m}' for m in missing)
        text += (
            f" Store each in `__init__` (`self.{missing[0]} = {missing[0]}`) and add "
            f"{'them' if several else 'it'} to the dict get_config returns: `{entries}`."
        )
    return reports.note(text, SECTION)


def _fixed_statement(
    config: ast.FunctionDef,
    literals: list[ast.Dict],
    stored: dict[str, str | None],
    source: str,
) -> str | None:
    """The get_config statement holding its last dict literal, with the missing entries
    added; None when a parameter was not stored or the statement spans several lines."""
    if not literals or any(v is None for v in stored.values()):
        return None
    literal = max(literals, key=lambda d: (d.lineno, d.col_offset))
    statement = next(
        (
            s
            for s in ast.walk(config)
            if isinstance(s, ast.stmt)
            and s is not config
            and any(n is literal for n in ast.walk(s))
            and not isinstance(s, ast.FunctionDef)
        ),
        None,
    )
    if statement is None or statement.lineno != statement.end_lineno:
        return None
    text = ast.get_source_segment(source, statement)
    dict_text = ast.get_source_segment(source, literal)
    if not text or not dict_text or not dict_text.endswith("}"):
        return None
    added = ", ".join(f'"{m}": {value}' for m, value in stored.items())
    inner = dict_text[:-1].rstrip()
    separator = "" if inner.endswith(("{", ",")) else ", "
    fixed_dict = f"{inner}{separator}{added}}}"
    return text.replace(dict_text, fixed_dict, 1)
