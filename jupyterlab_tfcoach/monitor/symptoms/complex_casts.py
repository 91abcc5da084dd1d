"""A complex tensor cast to a real dtype, where its magnitude was meant.

``tf.cast(z, tf.float32)`` of a complex ``z`` (an STFT, an FFT, ``tf.complex(re, im)``)
keeps the real part and drops the imaginary part; so does NumPy's ``z.astype(np.float32)``
(with a warning that scrolls by). The real part of a spectrum is not its magnitude: it is
negative as often as positive and changes with each frame's phase, so a "spectrogram"
made this way is mostly noise and a model trained on it learns little. Nothing raises.
The magnitude is ``tf.abs(z)`` (its square for the power); ``tf.math.real(z)`` says so
when the real part is really what is wanted.

Read after a completed cell holding ``cast`` or ``astype`` (a substring test otherwise),
in each scope of the cell (its top level, each ``def``), in order: a call
``cast(X, D)`` (``tf.cast``, ``tf.dtypes.cast``, ``keras.ops.cast``) or ``X.astype(D)``
whose ``D`` names a real dtype (``float32``, ``tf.float64``, ``"float16"``, an int), and
whose ``X`` is complex: a call of ``stft``, ``fft``/``rfft`` (1-3 D, NumPy's ``fftn``
too) or ``complex`` written in place, a name the scope bound to one, or (at the top
level, a name the cell does not bind again after the cast) a name holding a complex tensor, variable
or array after the cell (its dtype read by ``describe``). The note names the statement,
the operand as it is and the fix: the cast replaced by the magnitude, ``tf.abs(X)`` (kept
under the cast when the dtype asked for is not the magnitude's own).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import value_at
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    function_scopes,
    numpy_name,
    parsed_source,
    scope_statements,
    source_segment,
    subtree_nodes,
    walk_nodes,
)

SECTION = "dtype-casting"
MAX_CELL_CHARS = 30_000
# Calls whose result is complex whatever their real inputs.
_COMPLEX_MAKERS = frozenset(
    {"stft", "fft", "fft2", "fftn", "fft2d", "fft3d", "rfft", "rfft2", "rfftn", "rfft2d",
     "rfft3d", "complex"}
)  # fmt: skip
_REAL_DTYPES = frozenset(
    {"float16", "float32", "float64", "bfloat16", "half", "double", "single", "int8",
     "int16", "int32", "int64", "uint8", "uint16", "float", "int"}
)  # fmt: skip
# The real dtype ``abs`` gives for each complex one.
_MAGNITUDE_DTYPES = {"complex64": "float32", "complex128": "float64"}


def _real_dtype(node: ast.AST | None) -> str | None:
    """``float32`` for ``tf.float32``, ``np.float32``, ``"float32"``, ``float``."""
    if isinstance(node, ast.Attribute):
        name: object = node.attr
    elif isinstance(node, ast.Name):
        name = node.id
    elif isinstance(node, ast.Constant):
        name = node.value
    else:
        return None
    return name if isinstance(name, str) and name in _REAL_DTYPES else None


def _cast_parts(call: ast.Call) -> tuple[ast.expr, str, str] | None:
    """``(operand, dtype, how)`` for ``cast(X, D)`` (how: the call's module text) or
    ``X.astype(D)`` (how: ``"astype"``) with a real ``D``."""
    name = call_name(call)
    if name == "cast" and call.args:
        dtype = call.args[1] if len(call.args) > 1 else None
        for keyword in call.keywords:
            if keyword.arg == "dtype":
                dtype = keyword.value
        real = _real_dtype(dtype)
        func = call.func
        if real is None:
            return None
        module = ast.unparse(func.value) if isinstance(func, ast.Attribute) else ""
        return call.args[0], real, module
    if name == "astype" and isinstance(call.func, ast.Attribute):
        dtype = call.args[0] if call.args else None
        for keyword in call.keywords:
            if keyword.arg == "dtype":
                dtype = keyword.value
        real = _real_dtype(dtype)
        if real is None:
            return None
        return call.func.value, real, "astype"
    return None


def _maker(node: ast.AST) -> str | None:
    """The complex-making call's text (``tf.signal.stft``) when ``node`` is one."""
    if isinstance(node, ast.Call) and call_name(node) in _COMPLEX_MAKERS:
        return ast.unparse(node.func)
    return None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a complex value cast to a real dtype, if the cell has one."""
    if len(source) > MAX_CELL_CHARS or ("cast" not in source and "astype" not in source):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    # The lines of the cell's casts to a real dtype: a statement without one has nothing
    # to tell, and most cells have none.
    cast_lines = [
        node.lineno
        for node in walk_nodes(tree)
        if isinstance(node, ast.Call) and _cast_parts(node) is not None
    ]
    if not cast_lines:
        return []
    for scope in function_scopes(tree):
        top_level = scope is tree
        where = "" if top_level else f" in `{getattr(scope, 'name', '')}`"
        made: dict[str, str] = {}  # name -> the complex-making call it was bound to
        statements = list(scope_statements(getattr(scope, "body", [])))
        for index, statement in enumerate(statements):
            last = statement.end_lineno or statement.lineno
            if any(statement.lineno <= line <= last for line in cast_lines):
                # A name bound again later in the cell held something else at the cast.
                # Read only for a statement that casts: the walk over the later
                # statements would otherwise be repeated for every statement of the cell.
                rebound = {
                    target.id
                    for later in statements[index + 1 :]
                    if isinstance(later, ast.Assign | ast.AugAssign | ast.AnnAssign)
                    for target in subtree_nodes(later)
                    if isinstance(target, ast.Name) and isinstance(target.ctx, ast.Store)
                }
                note = _statement_note(source, statement, made, rebound, where, namespace)
                if note is not None:
                    return [note]
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target = statement.targets[0]
                if isinstance(target, ast.Name):
                    maker = _maker(statement.value)
                    if maker is not None:
                        made[target.id] = maker
                    else:
                        made.pop(target.id, None)
    return []


def _statement_note(
    source: str,
    statement: ast.stmt,
    made: Mapping[str, str],
    rebound: set[str],
    where: str,
    namespace: Mapping[str, Any],
) -> Note | None:
    top_level = not where
    if not isinstance(statement, ast.Assign | ast.Expr | ast.Return | ast.AugAssign):
        return None
    for node in subtree_nodes(statement):
        if not isinstance(node, ast.Call):
            continue
        parts = _cast_parts(node)
        if parts is None:
            continue
        operand, dtype, how = parts
        maker = _maker(operand)
        complex_dtype: str | None = None
        described = ""
        if maker is None and isinstance(operand, ast.Name):
            maker = made.get(operand.id)
            if maker is None and top_level and operand.id not in rebound:
                held = value_at(operand, dict(namespace), operand.id)
                if held is not None and held.dtype is not None and "complex" in held.dtype:
                    complex_dtype = held.dtype
                    described = held.description
        if maker is None and complex_dtype is None:
            continue
        if (
            maker is not None
            and top_level
            and isinstance(operand, ast.Name)
            and (operand.id not in rebound)
        ):
            held = value_at(operand, dict(namespace), operand.id)
            if held is not None and held.dtype is not None and "complex" in held.dtype:
                complex_dtype, described = held.dtype, held.description
        return _note(source, statement, node, operand, dtype, how, maker, complex_dtype,
                     described, where, namespace)  # fmt: skip
    return None


def _functions(how: str, namespace: Mapping[str, Any]) -> tuple[str, str] | None:
    """The magnitude and real-part functions in the cast's own library."""
    if how == "astype":
        numpy = numpy_name(namespace) or "np"
        return f"{numpy}.abs", f"{numpy}.real"
    if how.split(".")[0] in ("tf", "tensorflow"):
        return f"{how.split('.')[0]}.abs", f"{how.split('.')[0]}.math.real"
    if how.endswith("ops"):
        return f"{how}.abs", f"{how}.real"
    return None


def _note(
    source: str,
    statement: ast.stmt,
    call: ast.Call,
    operand: ast.expr,
    dtype: str,
    how: str,
    maker: str | None,
    complex_dtype: str | None,
    described: str,
    where: str,
    namespace: Mapping[str, Any],
) -> Note | None:
    functions = _functions(how, namespace)
    operand_text = source_segment(source, operand)
    call_text = source_segment(source, call)
    line = source_segment(source, statement)
    if functions is None or operand_text is None or call_text is None or line is None:
        return None
    if "\n" in line:
        line = call_text
    magnitude, real = functions
    if complex_dtype is not None and _MAGNITUDE_DTYPES.get(complex_dtype) == dtype:
        fixed_call = f"{magnitude}({operand_text})"
    elif how == "astype":
        fixed_call = (
            f"{magnitude}({operand_text}).astype({ast.unparse(call.args[0])})"
            if (call.args)
            else None
        )
    else:
        fixed_call = call_text.replace(operand_text, f"{magnitude}({operand_text})", 1)
    if fixed_call is None:
        return None
    fixed_line = line.replace(call_text, fixed_call, 1)
    if described:
        what = f"`{operand_text}` is {described}"
    else:
        what = f"`{operand_text}` is complex"
    if maker is not None:
        what += f" (made by `{maker}`)"
    text = (
        f"`{line}` (line {statement.lineno}{where}) casts a complex value to {dtype}: {what}, and "
        "a cast from a complex dtype keeps only the real part, dropping the imaginary "
        "part. The real part is not the magnitude: it is negative about as often as "
        "positive and changes with the phase, so the result is not the spectrum's size "
        "that was meant (a spectrogram, an amplitude). Nothing raises. Take the "
        f"magnitude: `{fixed_line}` (square it for the power); if the real part is "
        f"really what is wanted, say so with `{real}({operand_text})`."
    )
    return reports.note(text, SECTION)
