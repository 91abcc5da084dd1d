"""A float16 value the learner's own statement made inf or NaN from finite inputs.

float16 holds numbers up to 65504 and none closer to 0 than about 6e-8. Computing by hand
in float16 (a cast copy, a mixed-precision model's activations) breaks silently in three
ways, each told from the statement that made the first non-finite value of the cell:

- an epsilon written as a literal too small for float16 (``1e-8``) rounds to exactly 0,
  so the ``x / (s + eps)`` it guards divides 0 by 0 where ``s`` is 0: NaN. Fix: the
  literal raised to about float16's own machine epsilon, ``1e-3``;
- a cast to float16 of a number above 65504, often a count (``tf.size(x)`` of a large
  tensor) cast to the data's dtype: inf;
- a sum, mean, norm or other reduction over a float16 value whose total passes 65504: inf,
  then NaN.

For the last two the fix is the computation in float32: the float16 inputs cast once
(``h32 = tf.cast(h, tf.float32)``) and read by the statement and the ones that use its
result.

After a completed cell, from its top-level ``name = ...`` statements (each name bound
once): the first whose value is a float16 tensor or array holding inf or NaN while every
array, tensor or number it reads (none rebound later in the cell) is finite. Values are
read with TensorFlow's own ``numpy`` (at most ``MAX_ELEMENTS``), only for float16 results.
A statement whose cause is none of the three stays silent, as do finite results and
results of inputs already non-finite.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe
from jupyterlab_tfcoach.monitor.errors.held_values import numpy_values
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import library_attribute
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source, subtree_nodes

SECTION = "mixed-precision"
MAX_CELL_CHARS = 30_000
MAX_STATEMENTS = 80
MAX_ELEMENTS = 2_000_000
FLOAT16_MAX = 65504.0
# Half of float16's smallest subnormal number: a literal below it rounds to 0.
FLOAT16_ZERO_BELOW = 2.0**-25
_HELD = frozenset({"tensor", "array", "variable"})
_CASTS = frozenset({"cast", "astype", "float16", "half", "convert_to_tensor", "constant"})
_REDUCTIONS = frozenset(
    {
        "reduce_sum",
        "reduce_mean",
        "reduce_std",
        "reduce_variance",
        "reduce_euclidean_norm",
        "sum",
        "mean",
        "std",
        "var",
        "variance",
        "norm",
        "global_norm",
        "l2_loss",
        "moments",
    }
)
_COUNTS = frozenset({"size", "len"})
_WRITTEN_NONFINITE = frozenset({"inf", "nan", "infty", "-inf", "infinity", "-infinity"})


def _values(described: Any) -> Any | None:
    """A NumPy copy of a tensor, variable or array (a scalar tensor's too), or None."""
    held = numpy_values(described, MAX_ELEMENTS)
    if held is not None or described.shape != () or described.kind == "array":
        return held
    to_numpy = library_attribute(described.value, "numpy")
    numpy = sys.modules.get("numpy")
    if to_numpy is None or numpy is None:
        return None
    value = to_numpy()
    return numpy.asarray(value) if isinstance(value, numpy.generic) else None


def _float16(described: Any) -> bool:
    return (
        described is not None
        and described.kind in _HELD
        and (described.dtype or "") in ("float16", "half")
    )


def _single_assignments(tree: ast.Module) -> tuple[list[ast.Assign], dict[str, list[int]]]:
    """The cell's top-level ``name = ...`` statements, and the lines each name is bound
    on at the top level (by any assignment or loop)."""
    found: list[ast.Assign] = []
    bound: dict[str, list[int]] = {}
    for statement in tree.body:
        for node in subtree_nodes(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound.setdefault(node.id, []).append(statement.lineno)
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            found.append(statement)
    return found[:MAX_STATEMENTS], bound


def _reads(node: ast.AST) -> list[str]:
    names: list[str] = []
    for child in subtree_nodes(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
            if child.id not in names:
                names.append(child.id)
    return names


def _finite_inputs(
    numpy: Any, statement: ast.Assign, bound: Mapping[str, list[int]], namespace: Mapping[str, Any]
) -> list[str] | None:
    """The names of float16 values the statement reads, when every value it reads is
    finite and none is bound again at or after it; else None."""
    sixteen: list[str] = []
    for node in subtree_nodes(statement.value):
        # ``np.inf``, ``float("nan")``: the statement writes its non-finite value itself.
        if isinstance(node, ast.Attribute) and node.attr.lower() in _WRITTEN_NONFINITE:
            return None
        if isinstance(node, ast.Constant) and str(node.value).lower() in _WRITTEN_NONFINITE:
            return None
    for name in _reads(statement.value):
        if any(line >= statement.lineno for line in bound.get(name, ())):
            return None
        if name not in namespace:
            continue
        value = namespace[name]
        if type(value) is float:
            if value != value or value in (float("inf"), float("-inf")):
                return None
            continue
        described = describe(name, value)
        if described is None or described.kind not in _HELD:
            continue
        if not (described.dtype or "").startswith(("float", "half", "bfloat")):
            continue
        held = _values(described)
        if held is None or not bool(numpy.all(numpy.isfinite(held))):
            return None
        if _float16(described):
            sixteen.append(name)
    return sixteen


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS or "=" not in source:
        return []
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    statements, bound = _single_assignments(tree)
    for statement in statements:
        target = statement.targets[0]
        assert isinstance(target, ast.Name)
        if len(bound.get(target.id, ())) != 1:
            continue
        # The result's dtype first (a float16 result is rare), its values after.
        described = describe(target.id, namespace.get(target.id))
        if not _float16(described):
            continue
        held = _values(described)
        if held is None or bool(numpy.all(numpy.isfinite(held))):
            continue
        sixteen = _finite_inputs(numpy, statement, bound, namespace)
        if sixteen is None:
            continue
        note = _explained(
            numpy, tree, source, statement, statements, held, sixteen, bound, namespace
        )
        if note is not None:
            return [note]
    return []


def _nonfinite_words(numpy: Any, held: Any) -> str:
    has_nan = bool(numpy.any(numpy.isnan(held)))
    has_inf = bool(numpy.any(numpy.isinf(held)))
    return "inf and NaN" if has_nan and has_inf else ("NaN" if has_nan else "inf")


def _tiny_literal(node: ast.AST) -> ast.Constant | None:
    """A non-zero number literal that float16 rounds to 0."""
    for child in subtree_nodes(node):
        if (
            isinstance(child, ast.Constant)
            and type(child.value) is float
            and 0.0 < abs(child.value) < FLOAT16_ZERO_BELOW
        ):
            return child
    return None


def _zeroed_constant(
    numpy: Any,
    statement: ast.Assign,
    statements: list[ast.Assign],
    namespace: Mapping[str, Any],
) -> tuple[str | None, ast.Assign, ast.Constant] | None:
    """(the name, its statement, the literal) of a float16 value of zeros the statement
    reads, made earlier in the cell from a literal float16 rounds to 0; or the literal
    written in the statement itself (name None)."""
    inline = _tiny_literal(statement.value)
    if inline is not None:
        return None, statement, inline
    made = {s.targets[0].id: s for s in statements if s.lineno < statement.lineno}  # type: ignore[union-attr]
    for name in _reads(statement.value):
        origin = made.get(name)
        if origin is None:
            continue
        described = describe(name, namespace.get(name))
        if not _float16(described):
            continue
        held = _values(described)
        if held is None or held.size == 0 or bool(numpy.any(held != 0)):
            continue
        literal = _tiny_literal(origin.value)
        if literal is not None:
            return name, origin, literal
    return None


def _denominator(
    source: str, statement: ast.Assign, name: str | None, literal: ast.Constant
) -> str | None:
    """The text of the divisor the zero-rounded epsilon is part of: ``sd16 + eps``."""
    for node in subtree_nodes(statement.value):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
            continue
        for part in subtree_nodes(node.right):
            if part is literal or (isinstance(part, ast.Name) and part.id == name):
                return ast.get_source_segment(source, node.right)
    return None


def _cast_of(node: ast.expr) -> ast.Call | None:
    if isinstance(node, ast.Call) and call_name(node) in _CASTS:
        return node
    return None


def _count_of(node: ast.expr, namespace: Mapping[str, Any]) -> tuple[str, int] | None:
    """(the array's name, its number of entries) for ``tf.size(x)`` or ``len(x)``."""
    if not (isinstance(node, ast.Call) and call_name(node) in _COUNTS and len(node.args) == 1):
        return None
    argument = node.args[0]
    if not isinstance(argument, ast.Name):
        return None
    described = describe(argument.id, namespace.get(argument.id))
    if described is None or described.shape is None or None in described.shape:
        return None
    if call_name(node) == "len":
        return (argument.id, int(described.shape[0])) if described.shape else None
    count = 1
    for size in described.shape:
        count *= int(size)  # type: ignore[arg-type]
    return argument.id, count


def _reduction_of(node: ast.expr, sixteen: list[str]) -> ast.Call | None:
    """The first reduction call of ``node`` that reads one of the float16 inputs."""
    for child in subtree_nodes(node):
        if (
            isinstance(child, ast.Call)
            and call_name(child) in _REDUCTIONS
            and any(name in sixteen for name in _reads(child))
        ):
            return child
    return None


def _dependents(statement: ast.Assign, statements: list[ast.Assign]) -> list[ast.Assign]:
    """The later top-level assignments that read the statement's result, transitively."""
    target = statement.targets[0]
    assert isinstance(target, ast.Name)
    tainted = {target.id}
    found: list[ast.Assign] = []
    for later in statements:
        if later.lineno <= statement.lineno:
            continue
        if tainted & set(_reads(later.value)):
            found.append(later)
            tainted.add(later.targets[0].id)  # type: ignore[union-attr]
    return found


def _renamed(source: str, statement: ast.stmt, old: str, new: str) -> str | None:
    """The one-line statement's text with every read of ``old`` written ``new``, and every
    float16 dtype it writes (``tf.float16``, ``"float16"``) written float32."""
    text = ast.get_source_segment(source, statement)
    if text is None or "\n" in text:
        return None
    start = statement.col_offset
    replacements: list[tuple[ast.AST, str]] = []
    for node in subtree_nodes(statement):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id == old:
            replacements.append((node, new))
        elif isinstance(node, ast.Attribute) and node.attr in ("float16", "half"):
            replacements.append((node, f"{ast.get_source_segment(source, node.value)}.float32"))
        elif isinstance(node, ast.Constant) and node.value in ("float16", "half"):
            replacements.append((node, '"float32"'))
    replacements.sort(key=lambda pair: pair[0].col_offset, reverse=True)  # type: ignore[attr-defined]
    line = source.splitlines()[statement.lineno - 1].encode("utf-8")
    encoded = line[start : statement.end_col_offset]
    for node, replacement in replacements:
        a = node.col_offset - start  # type: ignore[attr-defined]
        b = node.end_col_offset - start  # type: ignore[attr-defined]
        encoded = encoded[:a] + replacement.encode("utf-8") + encoded[b:]
    return encoded.decode("utf-8")


def _float32_name(name: str, namespace: Mapping[str, Any]) -> str:
    return name[:-2] + "32" if name.endswith("16") else f"{name}32"


def _library_alias(namespace: Mapping[str, Any], module: str) -> str | None:
    wanted = sys.modules.get(module)
    if wanted is None:
        return None
    for alias in ("tf", "np", module):
        if namespace.get(alias) is wanted:
            return alias
    return None


def _float32_fix(
    source: str,
    statement: ast.Assign,
    statements: list[ast.Assign],
    sixteen: list[str],
    namespace: Mapping[str, Any],
) -> str | None:
    """The statement and its dependents computed from float32 copies of the inputs."""
    if len(sixteen) != 1:
        return None
    name = sixteen[0]
    described = describe(name, namespace.get(name))
    if described is None:
        return None
    copy = _float32_name(name, namespace)
    if described.kind == "array":
        numpy_alias = _library_alias(namespace, "numpy")
        dtype = f"{numpy_alias}.float32" if numpy_alias else '"float32"'
        cast = f"{copy} = {name}.astype({dtype})"
    else:
        tf = _library_alias(namespace, "tensorflow")
        if tf is None:
            return None
        cast = f"{copy} = {tf}.cast({name}, {tf}.float32)"
    lines = []
    for written in (statement, *_dependents(statement, statements)):
        renamed = _renamed(source, written, name, copy)
        if renamed is None:
            return None
        lines.append(renamed)
    return (
        f"before line {statement.lineno}, `{cast}`, then "
        + ", ".join(f"`{line}`" for line in lines)
        + f" (each read of `{name}` there made `{copy}`)"
    )


def _explained(
    numpy: Any,
    tree: ast.Module,
    source: str,
    statement: ast.Assign,
    statements: list[ast.Assign],
    held: Any,
    sixteen: list[str],
    bound: Mapping[str, list[int]],
    namespace: Mapping[str, Any],
) -> Note | None:
    target = statement.targets[0]
    assert isinstance(target, ast.Name)
    written = ast.get_source_segment(source, statement)
    if written is None or "\n" in written:
        return None
    result = _nonfinite_words(numpy, held)
    head = f"`{written}` (line {statement.lineno} of this cell) holds {result}, from finite values"
    after = _after(numpy, statement, statements, namespace)
    zeroed = _zeroed_constant(numpy, statement, statements, namespace)
    if zeroed is not None:
        name, origin, literal = zeroed
        literal_text = ast.get_source_segment(source, literal) or repr(literal.value)
        origin_text = ast.get_source_segment(source, origin)
        if origin_text is None or "\n" in origin_text:
            return None
        fixed = _replaced(source, origin, literal, "1e-3")
        what = (
            f"`{name}` is 0: `{origin_text}` (line {origin.lineno}) asks float16 for {literal_text}"
            if name is not None
            else f"the literal {literal_text} becomes 0 in float16 arithmetic"
        )
        guarded = _denominator(source, statement, name, literal)
        effect = (
            f"so `{guarded}` is 0 wherever the rest of it is 0, and dividing by it gives NaN "
            "(0 / 0) or inf"
            if guarded is not None
            else "so where what it was added to is 0 the division or log it guards meets 0"
        )
        text = (
            f"{head}. {what}, below float16's smallest positive number (about 6e-08): it "
            f"rounds to exactly 0, {effect}{after}. Nothing raises. float16 keeps about 3 "
            "significant digits, so an epsilon only counts next to values near 1 from about "
            "its machine epsilon, 0.001, up."
        )
        if fixed is not None:
            text += f" Fix: line {origin.lineno} written as `{fixed}`."
        return reports.note(text, SECTION)
    cast = _cast_of(statement.value)
    if cast is not None and cast.args and bool(numpy.any(numpy.isinf(held))):
        count = _count_of(cast.args[0], namespace)
        counted = ast.get_source_segment(source, cast.args[0]) or "the value"
        if count is not None:
            cause = (
                f"it casts to float16 a count, `{counted}` = {count[1]} entries of "
                f"`{count[0]}`, and float16's largest number is 65504: anything above is inf"
            )
        else:
            cause = (
                f"it casts `{counted}` to float16, whose largest number is 65504: anything "
                "above is inf"
            )
    else:
        reduction = _reduction_of(statement.value, sixteen)
        if reduction is None:
            return None
        reduced = ast.get_source_segment(source, reduction) or "the reduction"
        cause = (
            f"`{reduced}` adds up float16 values, and the total passes 65504, float16's "
            "largest number: inf, and inf / inf or inf - inf is NaN"
        )
    text = (
        f"{head}: {cause}{after}. Nothing raises. Counts and sums over many values do not "
        "fit float16: compute them in float32"
    )
    fix = _float32_fix(source, statement, statements, sixteen, namespace)
    text += f". Fix: {fix}." if fix is not None else "."
    return reports.note(text, SECTION)


def _after(
    numpy: Any, statement: ast.Assign, statements: list[ast.Assign], namespace: Mapping[str, Any]
) -> str:
    """``, and `rms` (line 5), computed from it, is NaN`` for the dependents that broke."""
    broken = []
    for later in _dependents(statement, statements):
        name = later.targets[0].id  # type: ignore[union-attr]
        described = describe(name, namespace.get(name))
        if described is None or described.kind not in _HELD:
            continue
        values = _values(described)
        if values is None or not (described.dtype or "").startswith(("float", "half")):
            continue
        if not bool(numpy.all(numpy.isfinite(values))):
            broken.append(f"`{name}` (line {later.lineno}, {_nonfinite_words(numpy, values)})")
        elif values.size and not bool(numpy.any(values != 0)):
            broken.append(f"`{name}` (line {later.lineno}, 0)")
    if not broken:
        return ""
    verb = "is" if len(broken) == 1 else "are"
    return f"; computed from it, {', '.join(broken[:3])} {verb} broken too"


def _replaced(source: str, statement: ast.stmt, node: ast.AST, replacement: str) -> str | None:
    text = ast.get_source_segment(source, statement)
    if text is None or "\n" in text or node.lineno != statement.lineno:  # type: ignore[attr-defined]
        return None
    line = source.splitlines()[statement.lineno - 1].encode("utf-8")
    a, b = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
    return (
        line[statement.col_offset : a]
        + replacement.encode("utf-8")
        + line[b : statement.end_col_offset]
    ).decode("utf-8")
