"""Operands of different dtypes, and arithmetic on a ``None`` gradient.

The dtype fix names the operand to cast, found in the failing line by the op the message
names (``Sub`` is ``-`` or ``tf.subtract``), and always casts towards the float side:
integers go to the float dtype, float64 goes to float32, never a float down to an int;
but a float32 side made only by TensorFlow constructors left at their default dtype
(``1e-6 * tf.eye(n)`` beside a float64 kernel, in cells that spell float64) is widened with
``dtype=`` instead, since the learner made that tensor and chose float64 for the data.
An operand that is a name read more than once is cast where it gets its value (a
parameter as the first line of its function, a name of the cells where it is assigned):
a cast at the failing place alone would move the error to the next use. Another operand
(``batch["x"]``, ``clock.ticks``) that later lines of the cell give to an operator or a call
again is cast in each of those lines too, every line printed in the fix.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    ParsedError,
    code,
    innermost_function,
    is_postfix_safe,
    kind_of,
    rewrite,
    rewrite_all,
    value_kind,
)
from jupyterlab_tfcoach.monitor.errors.families_signatures import is_graph_function_input
from jupyterlab_tfcoach.monitor.errors.float64_sources import made_earlier
from jupyterlab_tfcoach.monitor.errors.function_reads import (
    Lookup,
    names_in_source_order,
    reads_through_calls,
)
from jupyterlab_tfcoach.monitor.errors.index_dtypes import LIST_OPS, argmax_origin, list_operands
from jupyterlab_tfcoach.monitor.errors.loop_accumulators import accumulator_start
from jupyterlab_tfcoach.monitor.errors.mixed_class_ids import SECTION as MIXED_CLASS_IDS_SECTION
from jupyterlab_tfcoach.monitor.errors.mixed_class_ids import explain_mixed_class_ids
from jupyterlab_tfcoach.monitor.errors.origins import origin_sentence, read_again
from jupyterlab_tfcoach.monitor.errors.tape_statements import gradient_statement, tape_block

if TYPE_CHECKING:
    from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine

_EAGER_DTYPE = re.compile(
    r"cannot compute (?P<op>\w+) as input #(?P<index>\d+)\(zero-based\) was expected to be "
    r"a (?P<expected>\w+) tensor but is a (?P<actual>\w+) tensor"
)
_GRAPH_DTYPE = re.compile(
    r"Input '(?P<input>\w+)' of '(?P<op>\w+)' Op has type (?P<actual>\w+) that does not match "
    r"type (?P<expected>\w+) of argument '(?P<argument>\w+)'"
)
# Python's `/` on tensors checks dtypes before any op runs.
_DIVISION_DTYPE = re.compile(
    r"`x` and `y` must have the same dtype, got tf\.(?P<left>\w+) != tf\.(?P<right>\w+)"
)
# Eager kernels name float32 "float" and float64 "double".
_DTYPE_NAMES = {"float": "float32", "double": "float64", "half": "float16"}
# Op -> (Python operator node, its symbol, the tf functions that build it).
_OPS: dict[str, tuple[type[ast.operator] | type[ast.cmpop], str, tuple[str, ...]]] = {
    "AddV2": (ast.Add, "+", ("add",)),
    "Add": (ast.Add, "+", ("add",)),
    "Sub": (ast.Sub, "-", ("subtract",)),
    "Mul": (ast.Mult, "*", ("multiply",)),
    "RealDiv": (ast.Div, "/", ("divide", "truediv")),
    "MatMul": (ast.MatMult, "@", ("matmul",)),
    "BatchMatMulV2": (ast.MatMult, "@", ("matmul",)),
    "BatchMatMulV3": (ast.MatMult, "@", ("matmul",)),
    "Pow": (ast.Pow, "**", ("pow",)),
    "FloorDiv": (ast.FloorDiv, "//", ("floordiv",)),
    "FloorMod": (ast.Mod, "%", ("floormod", "mod")),
    # Logical ops take bool only; `&` and `|` on tensors build them.
    "LogicalAnd": (ast.BitAnd, "&", ("logical_and",)),
    "LogicalOr": (ast.BitOr, "|", ("logical_or",)),
    # Comparisons on tensors build these ops (``tf.argmax(p, 1) == labels``).
    "Equal": (ast.Eq, "==", ("equal",)),
    "NotEqual": (ast.NotEq, "!=", ("not_equal",)),
    "Less": (ast.Lt, "<", ("less",)),
    "LessEqual": (ast.LtE, "<=", ("less_equal",)),
    "Greater": (ast.Gt, ">", ("greater",)),
    "GreaterEqual": (ast.GtE, ">=", ("greater_equal",)),
}
# Ops whose input #0 is a condition, bool whatever the other inputs are
# (families_dtype_contract.py).
_CONDITION_OPS = ("SelectV2", "Select")
# Graph ops name their inputs; the first one is the left operand.
_FIRST_INPUTS = ("x", "a")
_LABEL_NAMES = re.compile(r"(^|_)(y|labels?|y_true|targets?|classes|ys)($|_|\[)")


def _op_name(name: str) -> str:
    """The op as the user's code built it: on CPUs where TensorFlow uses oneDNN, eager
    kernels report the rewritten op (``_MklMatMul``, ``_MklNativeBatchMatMulV2``)."""
    for prefix in ("_MklNative", "_Mkl"):
        if name.startswith(prefix) and name[len(prefix) :] in _OPS:
            return name[len(prefix) :]
    return name


def _dtype(name: str) -> str:
    return _DTYPE_NAMES.get(name, name)


def _is_float(dtype: str) -> bool:
    return dtype.startswith(("float", "bfloat", "half"))


def _is_int(dtype: str) -> bool:
    return dtype.startswith(("int", "uint"))


def _cast_plan(dtypes: tuple[str, str]) -> tuple[int, str] | None:
    """Which operand (0 = left) to cast and to what; never a float down to an int."""
    left, right = dtypes
    if _is_int(left) and _is_float(right):
        return 0, right
    if _is_float(left) and _is_int(right):
        return 1, left
    if _is_float(left) and _is_float(right):
        if "float32" in dtypes:
            return (0 if right == "float32" else 1), "float32"
        return None
    if _is_int(left) and _is_int(right):
        # The narrower integer goes to the wider one (no values lost).
        def width(dtype: str) -> int:
            digits = "".join(ch for ch in dtype if ch.isdigit())
            return int(digits) if digits else 0

        return (0, right) if width(left) < width(right) else (1, left)
    return None


def _parse(parsed: ParsedError) -> tuple[str, tuple[str, str], str] | None:
    """(op, (left dtype, right dtype), a sentence saying what TF reported)."""
    where = " inside a tf.function" if parsed.inside_tf_function else ""
    eager = _EAGER_DTYPE.search(parsed.message)
    if eager and is_graph_function_input(parsed.message):
        return None  # a traced function's input, not an op's operands: an error family's
    if eager:
        op, index = _op_name(eager.group("op")), int(eager.group("index"))
        expected, actual = _dtype(eager.group("expected")), _dtype(eager.group("actual"))
        if index not in (0, 1) or (op in _CONDITION_OPS and index == 0):
            return None  # a where's condition is bool by the op's contract: a family's
        other = 1 - index
        dtypes = (actual, expected) if index == 0 else (expected, actual)
        detail = (
            f"Input #{index} (zero-based) of the {op} op{where} is {actual} but the op expected "
            f"{expected}, the dtype of input #{other}."
        )
        return op, dtypes, detail
    graph = _GRAPH_DTYPE.search(parsed.message)
    if graph:
        op = _op_name(graph.group("op"))
        expected, actual = graph.group("expected"), graph.group("actual")
        first = graph.group("argument") in _FIRST_INPUTS
        dtypes = (expected, actual) if first else (actual, expected)
        detail = (
            f"The {op} op{where} got operands of different dtypes: "
            f"'{graph.group('argument')}' is {expected} and '{graph.group('input')}' is {actual}."
        )
        return op, dtypes, detail
    division = _DIVISION_DTYPE.search(parsed.message)
    if division:
        left, right = division.group("left"), division.group("right")
        detail = f"A division `/`{where} got a {left} tensor on the left and {right} on the right."
        return "RealDiv", (left, right), detail
    return None


def _operations(op: str, frame: CellFrame) -> list[tuple[ast.expr, ast.expr, ast.expr]]:
    """(node, left, right) for each place in the failing line that builds ``op``."""
    if op not in _OPS:
        return []
    operator, _symbol, functions = _OPS[op]
    found: list[tuple[ast.expr, ast.expr, ast.expr]] = []
    for part in frame.header():
        for node in ast.walk(part):
            if isinstance(node, ast.BinOp) and type(node.op) is operator:
                found.append((node, node.left, node.right))
            elif (
                isinstance(node, ast.Compare)
                and len(node.ops) == 1
                and type(node.ops[0]) is operator
            ):
                found.append((node, node.left, node.comparators[0]))
            elif isinstance(node, ast.Call) and len(node.args) >= 2:
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in functions and not any(isinstance(a, ast.Starred) for a in node.args[:2]):
                    found.append((node, node.args[0], node.args[1]))
    return found


def _dtype_of(node: ast.expr, frame: CellFrame, context: ErrorContext) -> str | None:
    found, value = context.resolve(node, frame)
    if not found or kind_of(value) not in ("tensor", "array"):
        return None
    try:
        dtype = value.dtype
        name = dtype.name if kind_of(value) == "tensor" else str(dtype)
    except Exception:
        return None
    return name if type(name) is str else None


def _locate(
    op: str, dtypes: tuple[str, str], context: ErrorContext
) -> tuple[CellFrame, ast.expr, ast.expr, ast.expr] | None:
    for frame in context.frames():
        candidates = _operations(op, frame)
        if not candidates:
            continue
        exact = [c for c in candidates if frame.at_position(c[0])]
        if exact:
            return (frame, *exact[0])
        # Several candidates: keep those whose named operands have the reported dtypes.
        fitting = [
            c
            for c in candidates
            if all(
                _dtype_of(operand, frame, context) in (None, dtype)
                for operand, dtype in zip(c[1:], dtypes, strict=True)
            )
        ]
        if len(fitting) == 1:
            return (frame, *fitting[0])
        # ``w * labels + (1 - w) * tf.gather(labels, i)``: both products fit, but only
        # the first has operands whose dtypes are all known; its op runs first.
        known = [
            c
            for c in fitting
            if all(
                _dtype_of(operand, frame, context) == dtype
                for operand, dtype in zip(c[1:], dtypes, strict=True)
            )
        ]
        if len(known) == 1:
            return (frame, *known[0])
        return None
    return None


def _string_numbers(
    op: str, dtypes: tuple[str, str], detail: str, context: ErrorContext
) -> str | None:
    """Numbers written as strings (``tf.constant(["21", "35"]) + 1``): ``tf.cast`` cannot
    turn text into numbers, ``tf.strings.to_number`` parses it (the other operand's dtype
    as ``out_type``)."""
    index = dtypes.index("string")
    other = dtypes[1 - index]
    if not (_is_int(other) or _is_float(other)):
        return None
    located = _locate(op, dtypes, context)
    if located is None:
        return None
    frame, node, left, right = located
    operand = (left, right)[index]
    node_source, operand_source = frame.segment(node), frame.segment(operand)
    if not node_source or not operand_source or "\n" in node_source:
        return None
    tf = context.module_alias("tensorflow", "tf")
    parse = f"{tf}.strings.to_number({operand_source}, out_type={tf}.{other})"
    fixed = rewrite(frame, node, operand, parse)
    if not fixed or "\n" in fixed:
        return None
    return (
        f"{detail} {code(operand_source)} holds text (string tensors), even when the text "
        f"is digits: arithmetic needs numbers, and `tf.cast` cannot turn strings into "
        f"numbers; `tf.strings.to_number` parses them. Fix: {code(fixed)}."
    )


def explain_dtype_mismatch(parsed: ParsedError, context: ErrorContext) -> tuple[str, str] | None:
    """A dtype clash between two operands; under a mixed global policy, with its cause."""
    explained = _explain_dtype_mismatch(parsed, context)
    if explained is None:
        return None
    found = _parse(parsed)
    policy = _mixed_policy()
    if found is None or policy is None:
        return explained
    sixteen = next((d for d in found[1] if d in _SIXTEEN_BITS), None)
    if sixteen is None or "float32" not in found[1]:
        return explained
    return (
        f"{explained[0]} The {sixteen} side comes from Keras: the global policy "
        f'`{policy}` (`keras.mixed_precision.set_global_policy("{policy}")`) makes every '
        f"layer created after it compute in {sixteen}, outputs included. Keep the model's "
        'last layer in float32 (`dtype="float32"` on it) so what it gives your code is '
        "float32, or cast where the two meet, as above.",
        "mixed-precision",
    )


_SIXTEEN_BITS = ("float16", "half", "bfloat16")


def _mixed_policy() -> str | None:
    """The name of Keras's global dtype policy when it is a mixed one (``mixed_float16``),
    read from Keras's own state in ``sys.modules`` (never imported here)."""
    import sys

    state = sys.modules.get("keras.src.backend.common.global_state")
    tracker = getattr(state, "GLOBAL_STATE_TRACKER", None) if state is not None else None
    policy = getattr(tracker, "dtype_policy", None) if tracker is not None else None
    if policy is None or not str(type(policy).__module__).startswith("keras."):
        return None
    try:
        name = policy.name
    except Exception:
        return None
    return name if type(name) is str and name.startswith("mixed_") else None


def _explain_dtype_mismatch(parsed: ParsedError, context: ErrorContext) -> tuple[str, str] | None:
    found = _parse(parsed)
    if found is None:
        return None
    op, dtypes, detail = found
    plan = _cast_plan(dtypes)
    never = "TensorFlow never converts dtypes between tensors by itself."
    if plan is None and "string" in dtypes:
        from jupyterlab_tfcoach.monitor.errors.families_model_data import (
            adapts_on_pairs,
            wrong_kind_of_data,
        )

        if adapts_on_pairs(parsed, context) or wrong_kind_of_data(parsed, context):
            return None  # a layer or a model given the wrong kind of data: a family's
        parsed_numbers = _string_numbers(op, dtypes, detail, context)
        if parsed_numbers is not None:
            return parsed_numbers, "dtype-casting"
    if plan is None and op in _LOGICAL and "bool" in dtypes:
        logical = _logical_operand(op, dtypes, context)
        if logical is not None:
            return logical, "dtype-casting"
    if plan is None:
        return (
            f"{detail} {never} Create both operands with the same dtype or cast one with tf.cast.",
            "dtype-casting",
        )
    index, target = plan
    tf = context.module_alias("tensorflow", "tf")
    if _is_int(dtypes[index]) and _is_float(target):
        mixed = explain_mixed_class_ids(op, dtypes, index, context)
        if mixed is not None:
            return f"{detail} {mixed}", MIXED_CLASS_IDS_SECTION
        started = _integer_accumulator(context, op, index, dtypes, tf)
        if started is not None:
            return started, "python-loops"
    side = "left" if index == 0 else "right"
    symbol = _OPS[op][1] if op in _OPS else ""
    where = f"the {side} side of `{symbol}`" if symbol else f"input #{index}"
    located = _locate(op, dtypes, context)
    if located is None and op in LIST_OPS:
        listed = _list_elements(op, dtypes, (index, target), f"{detail} {never}", context, tf)
        if listed is not None:
            return listed, "dtype-casting"
    if located is not None:
        frame, node, left, right = located
        operand = (left, right)[index]
        if isinstance(node, ast.Call):
            where = f"the {('first', 'second')[index]} argument"
        node_source, operand_source = frame.segment(node), frame.segment(operand)
        other_source = frame.segment((left, right)[1 - index])
        argmax = argmax_origin((left, right)[1 - index], frame, context, dtypes[index])
        if argmax is not None and node_source and "\n" not in node_source:
            return (
                f"In {code(node_source)}, {code(other_source or '')} is {dtypes[1 - index]} "
                f"while {code(operand_source or '')} is {dtypes[index]}. {never} "
                f"{argmax[0]}. Fix: {code(argmax[1])}.",
                "dtype-casting",
            )
        scales = _operator_scales(
            frame, context, operand, (left, right)[1 - index], dtypes, index, tf
        )
        if scales is not None:
            return f"{detail} {never} {scales}", "dtype-casting"
        widened = _widened_constructors(
            frame, context, (left, right)[1 - index], operand, dtypes[1 - index], dtypes[index], tf
        )
        if widened is not None and node_source and "\n" not in node_source:
            made, fix = widened
            return (
                f"In {code(node_source)}, {code(operand_source or '')} ({where}) is "
                f"{dtypes[index]} while {code(other_source or '')} is {dtypes[1 - index]}. "
                f"{never} {made} makes {dtypes[1 - index]} unless given a dtype: make it "
                f"{dtypes[index]} like {code(operand_source or '')} (casting "
                f"{code(operand_source or '')} down to {dtypes[1 - index]} would drop the "
                f"precision the rest of the computation keeps). Fix: {code(fix)}.",
                "dtype-casting",
            )
        variable = _integer_variable(operand, frame, context, dtypes[index], target)
        if variable is not None:
            return (
                f"In {code(node_source or '')}, {code(operand_source or '')} ({where}) is "
                f"{dtypes[index]} while {code(other_source or '')} is {dtypes[1 - index]}. "
                f"{never} {variable}",
                "dtype-casting",
            )
        earlier = (
            made_earlier(frame, context, operand, dtypes[index], target, tf)
            if _is_float(dtypes[index]) and _is_float(target)
            else None
        )
        if earlier is not None and node_source and "\n" not in node_source:
            return (
                f"In {code(node_source)}, {code(operand_source or '')} ({where}) is "
                f"{dtypes[index]} while {code(other_source or '')} is {dtypes[1 - index]}. "
                f"{never} {earlier}",
                "dtype-casting",
            )
        at_source = _cast_at_source(frame, context, operand, dtypes[index], target, tf)
        if at_source is not None and node_source and "\n" not in node_source:
            return (
                f"In {code(node_source)}, {code(operand_source or '')} ({where}) is "
                f"{dtypes[index]} while {code(other_source or '')} is {dtypes[1 - index]}. "
                f"{never} {at_source}",
                "dtype-casting",
            )
        cast = f"{tf}.cast({operand_source}, {tf}.{target})"
        fixed = rewrite(frame, node, operand, cast) if operand_source else None
        repeated = _cast_everywhere(frame, operand, cast) if operand_source else None
        if node_source and fixed and repeated is not None:
            # The same expression meets the other dtype again later in the cell: a cast
            # at the failing place alone would move the error to that line.
            lines = sorted(repeated)
            later = " and ".join(f"line {number}" for number in lines[1:])
            fixes = " and, on ".join(
                code(text) if number == lines[0] else f"line {number}, {code(text)}"
                for number, text in sorted(repeated.items())
            )
            return (
                f"In {code(node_source)}, {code(operand_source or '')} ({where}) is "
                f"{dtypes[index]} while {code(other_source or '')} is {dtypes[1 - index]}. "
                f"{never}{origin_sentence(operand, frame, context)} The cell reads "
                f"{code(operand_source or '')} the same way again on {later}: cast it to "
                f"{target} in every place, or the error moves to the next one. Fix: {fixes}.",
                "dtype-casting",
            )
        if node_source and fixed and "\n" not in node_source and "\n" not in fixed:
            return (
                f"In {code(node_source)}, {code(operand_source or '')} ({where}) is "
                f"{dtypes[index]} while {code(other_source or '')} is {dtypes[1 - index]}. "
                f"{never}{_labels_hint(operand_source or '', dtypes[index])}"
                f"{origin_sentence(operand, frame, context)} Cast "
                f"{code(operand_source or '')} to {target}: {code(fixed)}."
                + _same_dtype_elsewhere(frame, context, operand, dtypes[index], target),
                "dtype-casting",
            )
    argument = _argument_of_dtype(context, dtypes[index], target, tf)
    if argument is not None:
        return f"{detail} {never} {argument}", "dtype-casting"
    if located is None and {_is_int(d) for d in dtypes} == {True, False}:
        floats = python_float_arguments(context)
        if floats:
            # The op is the library's own, on what the call was given: a cast "of the
            # operand" names nothing the learner wrote; a Python float given where the
            # library counts (a length, a step) is what mixed its arithmetic.
            listed = " and ".join(
                f"{code(written)} (use {code(f'int({value})')})" for written, value in floats
            )
            return (
                f"{detail} Neither operand is on a line you wrote: the op is inside the "
                f"library, computing with what your call gave it, and the call passes the "
                f"Python float {listed}. A Python float becomes float32 where the library "
                "works in whole numbers (lengths, steps, counts: int32), and the two meet "
                "in one op. Pass a whole number.",
                "dtype-casting",
            )
    return (
        f"{detail} {never} Cast the {dtypes[index]} operand ({where}) to {target}: "
        f"{code(f'{tf}.cast(x, {tf}.{target})')} with x that operand.",
        "dtype-casting",
    )


def _list_elements(
    op: str,
    dtypes: tuple[str, str],
    plan: tuple[int, str],
    detail: str,
    context: ErrorContext,
    tf: str,
) -> str | None:
    """Two elements of the list ``tf.concat``/``tf.stack``/``tf.add_n`` was given, of
    different dtypes (the message's inputs #0 and #1 are the list's first two): named in
    the learner's call; the int64 one an ``argmax`` made is asked for the other dtype
    where it is made, else the element the plan casts is cast in the call."""
    found = list_operands(op, context.frames())
    if found is None:
        return None
    frame, call, elements = found
    if len(elements) < 2:
        return None
    index, target = plan
    sources = [frame.segment(element) for element in elements[:2]]
    call_source = frame.segment(call)
    if not all(sources) or not call_source or "\n" in call_source:
        return None
    said = (
        f"In {code(call_source)}, {code(sources[1] or '')} (element 1 of the list) is "
        f"{dtypes[1]} while {code(sources[0] or '')} (element 0) is {dtypes[0]}. {detail}"
    )
    argmax = argmax_origin(elements[1 - index], frame, context, dtypes[index])
    if argmax is not None:
        return f"{said} {argmax[0]}. Fix: {code(argmax[1])}."
    cast = f"{tf}.cast({sources[index]}, {tf}.{target})"
    # The whole statement when it is one line (``joined = tf.concat(...)``), else the call.
    statement = frame.statement()
    outer: ast.AST = call
    if statement is not None and any(node is call for node in ast.walk(statement)):
        outer = statement
    fixed = rewrite(frame, outer, elements[index], cast)
    if (not fixed or "\n" in fixed) and outer is not call:
        fixed = rewrite(frame, call, elements[index], cast)
    if not fixed or "\n" in fixed:
        return None
    return f"{said} Fix: cast {code(sources[index] or '')} to {target}, {code(fixed)}."


# TensorFlow constructors that make float32 unless given ``dtype=``, with how many
# positional arguments may come before ``dtype`` (a call with more already names it).
_FLOAT32_CONSTRUCTORS = {
    "eye": 3,
    "linalg.eye": 3,
    "ones": 1,
    "zeros": 1,
    "random.normal": 3,
    "random.uniform": 3,
    "random.truncated_normal": 3,
}


def _chosen_dtype(context: ErrorContext, dtype: str) -> bool:
    """Whether the cells spell ``dtype`` (``tf.float64``, ``"float64"``, ``tf.double``):
    the learner computes in it on purpose, so its data is not to be cast down."""
    from jupyterlab_tfcoach.monitor.errors.cell_sources import error_cells

    spelled = re.compile(rf"\b{dtype}\b" + (r"|\bdouble\b" if dtype == "float64" else ""))
    try:
        return any(spelled.search(cell.source) for cell in error_cells(context))
    except Exception:
        return False


def _widened_constructors(
    frame: CellFrame,
    context: ErrorContext,
    narrow: ast.expr,
    wide: ast.expr,
    narrow_dtype: str,
    wide_dtype: str,
    tf: str,
) -> tuple[str, str] | None:
    """(the constructors named, the failing statement with ``dtype=`` given to each) when
    the narrower float operand's dtype comes only from TensorFlow constructors left at their
    float32 default (``1e-6 * tf.eye(n)`` meeting a float64 kernel): the user made that
    tensor, so it is the one to widen; casting the float64 data (a name holding a float64
    tensor or array, read in the other operand, where the cells spell float64: chosen, not
    NumPy's default) down would drop precision
    the rest of the computation keeps. None when a name in the operand holds anything but a
    Python number (a variable of weights: widening the constructor would not end the clash)."""
    if (narrow_dtype, wide_dtype) != ("float32", "float64"):
        return None
    if not any(
        isinstance(node, ast.Name) and _dtype_of(node, frame, context) == wide_dtype
        for node in ast.walk(wide)
    ):
        return None  # no float64 data the learner holds: both sides made here, cast as ever
    if not _chosen_dtype(context, wide_dtype):
        return None  # float64 only by NumPy's default: the data goes to float32 as ever
    statement = frame.statement()
    if statement is None or statement.lineno != statement.end_lineno:
        return None
    calls: list[ast.Call] = []
    inside: set[int] = set()
    for node in ast.walk(narrow):
        if not isinstance(node, ast.Call):
            continue
        function = ast.unparse(node.func)
        prefix = f"{tf}."
        name = function[len(prefix) :] if function.startswith(prefix) else None
        before_dtype = _FLOAT32_CONSTRUCTORS.get(name or "")
        if before_dtype is None:
            continue
        if len(node.args) > before_dtype or any(k.arg in (None, "dtype") for k in node.keywords):
            return None  # its dtype is written (or passed on): not the default
        if any(isinstance(a, ast.Starred) for a in node.args):
            return None
        calls.append(node)
        inside.update(id(n) for n in ast.walk(node))
    if not calls:
        return None
    for node in ast.walk(narrow):
        if id(node) in inside or not isinstance(node, ast.expr):
            continue
        if isinstance(node, ast.Call):
            return None  # another call's result: its dtype is not the constructor's
        if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
            found, value = context.resolve(node, frame)
            if not found or type(value) not in (int, float):
                return None  # values of its own (a variable, a tensor): float32 too
    replacements: list[tuple[ast.AST, str]] = []
    for call in calls:
        written = frame.segment(call)
        if not written or not written.endswith(")"):
            return None
        body = written[:-1].rstrip()
        joiner = " " if body.endswith(",") else ", "
        replacements.append((call, f"{body}{joiner}dtype={tf}.{wide_dtype})"))
    fixed = rewrite_all(frame, statement, replacements)
    if fixed is None or "\n" in fixed:
        return None
    made = " and ".join(code(frame.segment(call) or "") for call in calls)
    return made, fixed


_LOGICAL = ("LogicalAnd", "LogicalOr")
_MAX_REPEATS = 3


def _cast_everywhere(frame: CellFrame, operand: ast.expr, cast: str) -> dict[int, str] | None:
    """{line: statement with ``operand`` cast} for the failing statement and each later
    one-line statement of the cell (in the same function, if any) that gives the same
    expression to an operator or a call (``batch["x"]`` in ``tf.matmul(batch["x"], W)``
    on the next line); None when no later line reads it so (the one-place fix stands)."""
    tree, statement = frame.tree(), frame.statement()
    if tree is None or statement is None or isinstance(operand, ast.Name):
        return None  # a name read again is cast where it is made (``_cast_at_source``)
    wanted = ast.dump(operand)
    function = innermost_function(tree, frame.position.line)
    scope: ast.AST = function if function is not None else tree
    end = statement.end_lineno or statement.lineno
    found: dict[int, str] = {}
    for candidate in ast.walk(scope):
        if not isinstance(candidate, ast.stmt) or hasattr(candidate, "body"):
            continue
        if candidate is not statement and candidate.lineno <= end:
            continue
        places = [
            child
            for parent in ast.walk(candidate)
            if isinstance(parent, (ast.BinOp, ast.Call)) and not _is_cast(parent)
            for child in (
                [parent.left, parent.right]
                if isinstance(parent, ast.BinOp)
                else [*parent.args, *(k.value for k in parent.keywords)]
            )
            if ast.dump(child) == wanted
        ]
        if not places:
            continue
        fixed = rewrite_all(frame, candidate, [(place, cast) for place in places])
        if not fixed or "\n" in fixed:
            return None
        found[candidate.lineno] = fixed
    if len(found) < 2 or statement.lineno not in found or len(found) > _MAX_REPEATS + 1:
        return None
    return found


def _is_cast(node: ast.AST) -> bool:
    func = node.func if isinstance(node, ast.Call) else None
    return isinstance(func, ast.Attribute) and func.attr in ("cast", "astype")


def _logical_operand(op: str, dtypes: tuple[str, str], context: ErrorContext) -> str | None:
    """A logical op given a number tensor (a 0/1 mask stored as uint8): logical ops take
    bool only. The mask is named back to the array it was built from, and made bool there
    (nonzero is True, as a cast to bool does); without such an origin, at the operand."""
    index = 0 if dtypes[0] != "bool" else 1
    wrong = dtypes[index]
    if wrong == "bool" or not (_is_int(wrong) or _is_float(wrong)):
        return None
    located = _locate(op, dtypes, context)
    if located is None:
        return None
    frame, node, left, right = located
    operand = (left, right)[index]
    node_source, operand_source = frame.segment(node), frame.segment(operand)
    if not node_source or not operand_source or "\n" in node_source:
        return None
    if _dtype_of(operand, frame, context) not in (None, wrong):
        return None
    where = (
        f"the {('first', 'second')[index]} argument"
        if isinstance(node, ast.Call)
        else (f"the {('left', 'right')[index]} side of `{_OPS[op][1]}`")
    )
    said = (
        f"In {code(node_source)}, {code(operand_source)} ({where}) is {wrong}, and a logical "
        f"op takes bool tensors only: TensorFlow never converts dtypes by itself."
    )
    from jupyterlab_tfcoach.monitor.errors.origins import rewrite_origin, value_origin

    origin = value_origin(operand, frame, context)
    if origin is not None:
        read = origin.cell.segment(origin.read)
        fixed = rewrite_origin(origin, f"{read} != 0") if read else None
        if fixed and "\n" not in fixed:
            return (
                f"{said} {code(origin.name)} was built from {code(origin.source)}, "
                f"{origin.description}, by {code(origin.statement)} ({origin.where}): a mask "
                f"of 0s and 1s stored as numbers. Make it bool where it is built, nonzero as "
                f"True, then run this line again. Fix: {code(fixed)}."
            )
    wrapped = operand_source if is_postfix_safe(operand) else f"({operand_source})"
    test = f"{wrapped} != 0" if isinstance(node, ast.Call) else f"({wrapped} != 0)"
    statement = frame.statement()
    fixed = rewrite(frame, statement if statement is not None else node, operand, test)
    if not fixed or "\n" in fixed:
        return None
    return f"{said} Make it bool, nonzero as True. Fix: {code(fixed)}."


def _argument_of_dtype(context: ErrorContext, wrong: str, target: str, tf: str) -> str | None:
    """The op failed inside a library function (``tf.nn.sigmoid_cross_entropy_with_logits
    (labels=y, logits=z)``): when exactly one argument of the failing line's call has the
    refused dtype and another has the wanted one, that argument is the operand to cast,
    where the call gives it."""
    from jupyterlab_tfcoach.monitor.errors.failing_line import read_failing_line

    line = read_failing_line(context)
    call = line.call if line is not None else None
    if line is None or not isinstance(call, ast.Call) or line.statement is None:
        return None
    given = [*call.args, *(keyword.value for keyword in call.keywords if keyword.arg)]
    dtypes_given = []
    for node in given[:8]:
        operand = next((o for o in line.operands if o.source == line.frame.segment(node)), None)
        dtypes_given.append((node, operand.dtype if operand is not None else None))
    wrong_ones = [node for node, dtype in dtypes_given if dtype == wrong]
    if len(wrong_ones) != 1 or not any(dtype == target for _, dtype in dtypes_given):
        return None
    floats = [node for node, dtype in dtypes_given if dtype == target]
    scales = _pixel_scales(context, line, call, wrong_ones[0], floats, wrong, tf)
    if scales is not None:
        return scales
    source = line.frame.segment(wrong_ones[0])
    fixed = rewrite(
        line.frame, line.statement, wrong_ones[0], f"{tf}.cast({source}, {tf}.{target})"
    )
    if not source or not fixed or "\n" in fixed:
        return None
    keyword = next((k.arg for k in call.keywords if k.value is wrong_ones[0]), None)
    named = f"{code(source)} (`{keyword}=`)" if keyword else code(source)
    hint = _labels_hint(keyword or source, wrong)
    return (
        f"Of the arguments of {code(line.frame.segment(call.func) or '')}, {named} is the "
        f"{wrong} one while the function computes in {target}.{hint} "
        f"Cast it where it is given. Fix: {code(fixed)}."
    )


def _operator_scales(
    frame: CellFrame,
    context: ErrorContext,
    operand: ast.expr,
    other: ast.expr,
    dtypes: tuple[str, str],
    index: int,
    tf: str,
) -> str | None:
    """An integer pixel image met by a float image in [0, 1] in an operator or a tf
    function on the line (``frames_u8 - recon``): their scales differ, not only their
    dtypes (``pixel_scales.py``)."""
    from jupyterlab_tfcoach.monitor.errors.failing_line import value_of
    from jupyterlab_tfcoach.monitor.errors.pixel_scales import PIXEL_DTYPES, mixed_scales

    statement = frame.statement()
    if dtypes[index] not in PIXEL_DTYPES or statement is None:
        return None
    found, integer_value = value_of(operand, frame, context)
    if not found:
        return None
    found, float_value = value_of(other, frame, context)
    if not found:
        return None
    return mixed_scales(
        frame, statement, operand, integer_value, dtypes[index], other, float_value, None, tf
    )


def _pixel_scales(
    context: ErrorContext,
    line: FailingLine,
    call: ast.Call,
    integer_node: ast.expr,
    float_nodes: list[ast.expr],
    wrong: str,
    tf: str,
) -> str | None:
    """An integer pixel image given with a float image in [0, 1] (``pixel_scales.py``)."""
    from jupyterlab_tfcoach.monitor.errors.failing_line import value_of
    from jupyterlab_tfcoach.monitor.errors.pixel_scales import mixed_scales

    if len(float_nodes) != 1 or line.statement is None:
        return None
    found, integer_value = value_of(integer_node, line.frame, context)
    if not found:
        return None
    found, float_value = value_of(float_nodes[0], line.frame, context)
    if not found:
        return None
    return mixed_scales(
        line.frame,
        line.statement,
        integer_node,
        integer_value,
        wrong,
        float_nodes[0],
        float_value,
        call,
        tf,
    )


def _uses(scope: ast.AST, name: str) -> int:
    return sum(
        1
        for node in ast.walk(scope)
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
    )


def _cast_at_source(
    frame: CellFrame,
    context: ErrorContext,
    operand: ast.expr,
    dtype: str,
    target: str,
    tf: str,
) -> str | None:
    """One cast where the operand's name gets its value, when the name is read more than
    once (``A * tf.exp(-k * t) * tf.cos(w * t + phi)``: a cast of the ``t`` that failed
    first moves the error to the next ``t``): a function's parameter is cast once as the
    first line of its body, a name of the cells where it is assigned (NumPy arrays with
    ``.astype``, tensors with ``tf.cast``). The name is the operand, or the one name of the
    operand's dtype it reads (``t`` in ``1 - t[:, None]``); a name read once on the line
    but again below it in the cell is fixed where it is made too."""
    name = _dtype_source_name(operand, frame, context, dtype)
    if name is None:
        return None
    tree, statement = frame.tree(), frame.statement()
    if tree is None or statement is None:
        return None
    function = innermost_function(tree, frame.position.line)
    scope: ast.AST = function if function is not None else statement
    uses = _uses(scope, name)
    # A name the cell reads again below the failing line fails there next (or carries the
    # wrong dtype on): its value is fixed where it is made.
    again = read_again(name, frame) if function is None else None
    if uses < 2 and again is None:
        return None
    count = "twice" if uses == 2 else f"{uses} times"
    if function is not None:
        arguments = function.args
        parameters = [
            a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)
        ]
        if name not in parameters or any(
            isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
            for node in ast.walk(function)
        ):
            return None
        fixed = f"{name} = {tf}.cast({name}, {tf}.{target})"
        return (
            f"{code(function.name)} reads {code(name)} {count}: a cast at this one place would "
            f"move the error to the next. Cast it once, where it comes in. Fix: as the first "
            f"line of {code(function.name)}'s body, {code(fixed)}."
        )
    from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells

    running = frame.source()
    for cell, assignment in assignments_in_cells(name, context):
        if cell.source == running and assignment.lineno >= frame.position.line:
            continue
        written, value = cell.segment(assignment), cell.segment(assignment.value)
        if not written or not value or "\n" in written:
            return None
        found, held = context.lookup(name, frame)
        if not found:
            return None
        if kind_of(held) == "array":
            np = context.module_alias("numpy", "np")
            wrapped = value if is_postfix_safe(assignment.value) else f"({value})"
            fixed = f"{name} = {wrapped}.astype({np}.{target})"
        elif _made_by_constant(assignment.value):
            fixed = f"{name} = {value[:-1].rstrip()}, dtype={tf}.{target})"
        else:
            fixed = f"{name} = {tf}.cast({value}, {tf}.{target})"
        where = f"line {assignment.lineno} of {cell.label}"
        reads = (
            f"The line reads {code(name)} {count}"
            if uses >= 2
            else f"The cell reads {code(name)} again on line {again}"
        )
        return (
            f"{reads}: a cast at this one place would move the "
            f"error to the next. Make it {target} once, where it is made ({code(written)}, "
            f"{where}). Fix: {code(fixed)}."
        )
    if again is None:
        return None
    return _cast_in_block(frame, tree, name, target, tf, again)


def _cast_in_block(
    frame: CellFrame, tree: ast.AST, name: str, target: str, tf: str, again: int
) -> str | None:
    """The name made inside a loop or branch of the running cell, above the failing line
    (``pred = tf.cast(p >= t, tf.int32)`` in a ``for`` body), and read again below it: the
    one assignment is fixed where it is, a ``tf.cast`` given the wanted dtype instead."""
    made = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id == name
    ]
    if len(made) != 1 or made[0].lineno >= frame.position.line:
        return None
    assignment = made[0]
    value = assignment.value
    written = frame.segment(assignment)
    if not written or "\n" in written:
        return None
    wanted = f"{tf}.{target}"
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "cast"
        and len(value.args) == 2
        and not value.keywords
    ):
        fixed = rewrite(frame, assignment, value.args[1], wanted)
    else:
        source = frame.segment(value)
        fixed = f"{name} = {tf}.cast({source}, {wanted})" if source else None
    if not fixed or "\n" in fixed:
        return None
    return (
        f"The cell reads {code(name)} again on line {again}: a cast at this one place would "
        f"move the error to the next. Make it {target} once, where it is made "
        f"({code(written)}, line {assignment.lineno}). Fix: {code(fixed)}."
    )


def _dtype_source_name(
    operand: ast.expr, frame: CellFrame, context: ErrorContext, dtype: str
) -> str | None:
    """The name whose value gives the failing operand its dtype: the operand itself when it
    is a name, else the one name it reads holding an array or tensor of that dtype
    (``t`` in ``1 - t[:, None]``)."""
    if isinstance(operand, ast.Name):
        return operand.id
    names = {
        node.id
        for node in ast.walk(operand)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }
    held: list[str] = []
    for name in sorted(names):
        found, value = context.lookup(name, frame)
        if not found or kind_of(value) not in ("array", "tensor", "variable"):
            continue
        try:
            stored = value.dtype
            named = str(stored) if kind_of(value) == "array" else stored.name
        except Exception:
            continue
        if named == dtype:
            held.append(name)
    return held[0] if len(held) == 1 else None


def _made_by_constant(value: ast.expr) -> bool:
    """``tf.constant(xs)``: given ``dtype=``, it makes the tensor in that dtype."""
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in ("constant", "convert_to_tensor")
        and len(value.args) == 1
        and not value.keywords
    )


def _accumulated_name(statement: ast.stmt | None, op: str, index: int) -> str | None:
    """The name a loop statement accumulates into with the integer operand of ``op``:
    ``total += v`` (the target is the op's left input), ``total = total + v`` or
    ``best = tf.maximum(best, v)`` (the target read in its own new value)."""
    if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
        operator = _OPS.get(op, (None,))[0]
        if index == 0 and operator is not None and isinstance(statement.op, operator):
            return statement.target.id
        return None
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        if isinstance(target, ast.Name) and any(
            isinstance(node, ast.Name) and node.id == target.id
            for node in ast.walk(statement.value)
        ):
            return target.id
    return None


def _integer_accumulator(
    context: ErrorContext, op: str, index: int, dtypes: tuple[str, str], tf: str
) -> str | None:
    """The failing statement adds floats to a loop variable that starts as an integer
    (``total = 0`` before the loop): the fix starts it as a float. A cast inside the loop
    would change the variable's dtype between iterations, which a graph loop refuses."""
    frames = [frame for frame in context.frames() if frame.statement() is not None]
    if not frames:
        return None
    frame = frames[0]
    statement = frame.statement()
    name = _accumulated_name(statement, op, index)
    if name is None or statement is None:
        return None
    target = dtypes[1 - index]
    start = accumulator_start(frame, name, target, tf)
    if start is None:
        return None
    written = frame.segment(statement) or ""
    return (
        f"{code(name)} is a loop variable: it starts as an integer, {code(start.statement)} "
        f"(line {start.line}), so the loop carries it as {dtypes[index]}, and "
        f"{code(written)} gives it {target} values. A loop in a tf.function keeps each "
        "variable's dtype from one iteration to the next, so casting inside the loop does "
        f"not help: start {code(name)} as a float. Fix: {code(start.fixed)}."
    )


def _same_dtype_elsewhere(
    frame: CellFrame, context: ErrorContext, operand: ast.expr, dtype: str, target: str
) -> str:
    """Other values of the failing statement with the dtype being cast away (``b`` in
    ``x @ W + b`` with ``W`` and ``b`` float64): casting one of them only moves the error
    to the next operation, so they are named too."""
    statement = frame.statement()
    if statement is None:
        return ""
    operand_source = frame.segment(operand)
    # The operand's own names are inside the cast: they do not meet the result again.
    inside = {id(node) for node in ast.walk(operand)}
    others: list[str] = []
    for node in ast.walk(statement):
        if not isinstance(node, (ast.Name, ast.Attribute)) or isinstance(node.ctx, ast.Store):
            continue
        if id(node) in inside:
            continue
        source = frame.segment(node)
        if not source or source == operand_source or source in others:
            continue
        found, value = context.resolve(node, frame)
        kind = value_kind(value) if found else None
        if kind not in ("tensor", "array", "variable", "keras_variable"):
            continue  # a library class's own ``dtype`` is read below, nothing of the user's
        try:
            stored_dtype = value.dtype
            name = stored_dtype if type(stored_dtype) is str else str(stored_dtype.name)
        except Exception:
            continue
        if name == dtype:
            others.append(source)
    if not others:
        return ""
    listed = ", ".join(code(name) for name in others[:4])
    verb = "is" if len(others) == 1 else "are"
    return (
        f" {listed} {verb} {dtype} too and meet{'s' if len(others) == 1 else ''} the result "
        f"next: cast {'it' if len(others) == 1 else 'them'} the same way, or create these "
        f"values as {target} once (e.g. `dtype={target}` where they are made)."
    )


# ------------------------------------------------------------------ integer variables
_VARIABLE_CONSTRUCTORS = ("Variable",)
_MAX_HISTORY_CELLS = 200
# Parsing the history is bounded (explaining an error stays within its budget).
_MAX_HISTORY_CHARS = 200_000


def _integer_variable(
    operand: ast.expr, frame: CellFrame, context: ErrorContext, dtype: str, target: str
) -> str | None:
    """An integer tf.Variable (or Keras variable) meeting floats: casting it at the use
    would run, but a gradient never flows into an integer variable, so it could never
    train. The fix is its creation with a float initial value, on the line that made it
    (the failing cell, else the cell history ``In``, read only)."""
    if not _is_int(dtype) or not _is_float(target):
        return None
    found, value = context.resolve(operand, frame)
    if not found or value_kind(value) not in ("variable", "keras_variable"):
        return None
    name = frame.segment(operand) or ""
    tf = context.module_alias("tensorflow", "tf")
    rule = (
        f"{code(name)} is a variable created from a Python int, so its dtype was taken "
        f"from the int ({dtype}); casting it where it is used would run, but a gradient "
        f"never flows into an integer variable, so {code(name)} could never train."
    )
    created = _creation(name, frame, context, tf, target)
    if created is None:
        return (
            f"{rule} Fix: where {code(name)} is created, write its initial value as a "
            f"float ({code('0.0')}, not {code('0')}) or pass {code(f'dtype={tf}.{target}')} "
            f"to the {code(f'{tf}.Variable(...)')} call."
        )
    statement, fixed, where = created
    return f"{rule} {code(statement)} ({where}) made it. Fix: create it as a float: {code(fixed)}."


def integer_variable_fix(
    name: str, frame: CellFrame, context: ErrorContext
) -> tuple[str, str, str] | None:
    """(``c = tf.Variable(0)``, ``c = tf.Variable(0.0)``, where): the statement that
    created the integer variable ``name``, and it creating a float32 one."""
    return _creation(name, frame, context, context.module_alias("tensorflow", "tf"), "float32")


def _creation(
    name: str, frame: CellFrame, context: ErrorContext, tf: str, target: str
) -> tuple[str, str, str] | None:
    """(``b = tf.Variable(0)``, ``b = tf.Variable(0.0)``, where) for the statement that
    created ``name``: searched in the failing cell, then the cell history, newest first."""
    sources: list[tuple[str, str]] = [(frame.source(), "in this cell")]
    history = context.namespace.get("In")
    budget = _MAX_HISTORY_CHARS
    if type(history) is list:
        for number in range(len(history) - 1, max(len(history) - _MAX_HISTORY_CELLS, 0), -1):
            text = history[number]
            if type(text) is str:
                budget -= len(text)
                if budget < 0:
                    break
                sources.append((text, f"cell In[{number}]"))
    for source, where in sources:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and ast.get_source_segment(source, node.targets[0]) == name
                and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, (ast.Attribute, ast.Name))
                and (
                    node.value.func.attr
                    if isinstance(node.value.func, ast.Attribute)
                    else node.value.func.id
                )
                in _VARIABLE_CONSTRUCTORS
                and node.value.args
                and not any(k.arg == "dtype" for k in node.value.keywords)
            ):
                continue
            statement = ast.get_source_segment(source, node)
            initial = node.value.args[0]
            if not statement or "\n" in statement:
                continue
            floated = _float_literal(initial, source) if target == "float32" else None
            if floated is not None:
                # One line (checked above): byte columns of that line, relative to the statement.
                encoded = statement.encode("utf-8")
                begin = initial.col_offset - node.col_offset
                end = (initial.end_col_offset or 0) - node.col_offset
                fixed = (encoded[:begin] + floated.encode() + encoded[end:]).decode("utf-8")
            else:
                fixed = f"{statement[:-1]}, dtype={tf}.{target})"
            return statement, fixed, where
    return None


def _float_literal(node: ast.expr, source: str) -> str | None:
    """``0`` -> ``0.0``; ``[1, 2]`` -> ``[1.0, 2.0]``: integer literals written as floats."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return f"{node.value}.0"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _float_literal(node.operand, source)
        return f"-{inner}" if inner else None
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        parts = [_float_literal(element, source) for element in node.elts]
        if all(parts):
            joined = ", ".join(p for p in parts if p)
            return f"[{joined}]" if isinstance(node, ast.List) else f"({joined})"
    return None


def _labels_hint(source: str, dtype: str) -> str:
    if _is_int(dtype) and _LABEL_NAMES.search(source):
        return (
            " Integer class labels are the usual int side: cast them where they meet float values."
        )
    return ""


# ------------------------------------------------------------------ None gradients
_NONE_OPERAND = re.compile(
    r"unsupported operand type\(s\) for (?P<symbol>\*\*|[*+/@-]): "
    r"'(?P<left>\w+)' and '(?P<right>\w+)'"
)
_SYMBOL_OPS: dict[str, type[ast.operator]] = {
    "*": ast.Mult,
    "+": ast.Add,
    "-": ast.Sub,
    "/": ast.Div,
    "@": ast.MatMult,
    "**": ast.Pow,
}
_GRADIENT_NAMES = re.compile(r"^(g|dw|db|dv|d_\w+|\w*grads?\w*|\w*gradients?\w*)(\[[^\]]*\])?$")


def explain_none_gradient(parsed: ParsedError, context: ErrorContext) -> tuple[str, str] | None:
    match = _NONE_OPERAND.search(parsed.message)
    if match is None or "NoneType" not in (match.group("left"), match.group("right")):
        return None
    frames = context.frames()
    if not frames:
        return None
    # Only the line that failed: gradient arithmetic, not any None in unrelated code.
    frame = frames[0]
    operator = _SYMBOL_OPS[match.group("symbol")]
    none_on_left = match.group("left") == "NoneType"
    gradient: str | None = None
    for part in frame.header():
        for node in ast.walk(part):
            if not (isinstance(node, ast.BinOp) and type(node.op) is operator):
                continue
            operand = node.left if none_on_left else node.right
            source = frame.segment(operand) or ""
            found, value = context.resolve(operand, frame)
            # A None from tape.gradient: a gradient-like name, or a None in a cell that
            # computes gradients. Any other None is not ours to explain.
            if _GRADIENT_NAMES.match(source) or (
                found and value is None and ".gradient(" in frame.source()
            ):
                gradient = source
                break
        if gradient:
            break
    if not gradient:
        return None
    statement = frame.statement()
    why = (
        f"{code(gradient)} is None: tape.gradient returned None for that source. It does so "
        f"when the source is not a tf.Variable the loss was computed from: most often a "
        f"variable rebound to a plain tensor in an earlier step (`w = w - lr * g` makes `w` "
        f"a tensor the tape does not watch), or a variable that takes no part in the loss."
    )
    outside = loss_outside_tape(gradient, frame, lookup=lambda name: context.lookup(name, frame))
    rebinding = _rebinding(statement, frame)
    if outside is not None:
        return outside, "gradient-tape"
    integer = _integer_source(gradient, frame, context)
    if integer is not None:
        return integer, "dtype-casting"
    if rebinding is not None and rebinding[0] in context.reported_rebinds:
        # The variables entries above explain this rebinding and its fix: say what it
        # did here, once, and point there.
        name = rebinding[0]
        return (
            f"{code(gradient)} is None: tape.gradient returns None for `{name}`, which is no "
            f"longer a tf.Variable: this line rebound it to a plain tensor on an earlier "
            f"step, and the tape does not watch a tensor. See the rebinding above for the fix."
        ), "rebinding-variables"
    if rebinding is not None:
        name, change = rebinding
        fix = (
            f" Update the variable in place so it stays a tf.Variable (re-create it first if "
            f"it is already a tensor): {code(f'{name}.assign_sub({change})')}."
        )
    else:
        fix = (
            " Make the loss use every variable you ask gradients for (inside the tape), "
            "update variables with assign_sub rather than `w = w - ...`, and pass only "
            "variables that take part in the loss."
        )
    return why + fix, "rebinding-variables"


def _integer_source(gradient: str, frame: CellFrame, context: ErrorContext) -> str | None:
    """``g = tape.gradient(loss, w)`` where ``w`` is an integer variable: TensorFlow only
    differentiates floating-point values (it warns and returns None), so the fix is ``w``
    created from a float (``_creation``), not anything about the tape."""
    tree = frame.tree()
    if tree is None:
        return None
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and frame.segment(node.targets[0]) == gradient
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr == "gradient"
            and len(node.value.args) == 2
            and isinstance(node.value.args[1], ast.Name)
        ):
            continue
        source = node.value.args[1]  # type: ignore[attr-defined]
        found, value = context.resolve(source, frame)
        if not found or value_kind(value) not in ("variable", "keras_variable"):
            return None
        from jupyterlab_tfcoach.monitor.errors.failing_line import describe

        described = describe(frame.segment(source) or "", value)
        dtype = described.dtype if described is not None else None
        if dtype is None or not _is_int(dtype):
            return None
        name = frame.segment(source) or ""
        tf = context.module_alias("tensorflow", "tf")
        rule = (
            f"{code(gradient)} is None: {code(name)} is an {dtype} variable, and TensorFlow "
            f"only computes gradients for floating-point values (it warns and returns None "
            f"for an integer source). A variable created from a Python int takes the int's "
            f"dtype."
        )
        created = _creation(name, frame, context, tf, "float32")
        if created is None:
            return (
                f"{rule} Fix: where {code(name)} is created, write its initial value as a "
                f"float ({code('3.0')}, not {code('3')})."
            )
        statement, fixed, where = created
        return f"{rule} {code(statement)} ({where}) made it. Fix: {code(fixed)}."
    return None


def _rebinding(statement: ast.stmt | None, frame: CellFrame) -> tuple[str, str] | None:
    """``w = w - lr * g`` -> ("w", "lr * g")."""
    if not (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.value, ast.BinOp)
        and isinstance(statement.value.op, ast.Sub)
    ):
        return None
    target = frame.segment(statement.targets[0])
    left = frame.segment(statement.value.left)
    change = frame.segment(statement.value.right)
    if not target or target != left or not change or "\n" in change:
        return None
    return target, change


# ------------------------------------------------------------------ the loss outside the tape
def _stored_names(node: ast.AST) -> set[str]:
    return {
        inner.id
        for inner in ast.walk(node)
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store)
    }


def _read_names(node: ast.AST) -> set[str]:
    return {
        inner.id
        for inner in ast.walk(node)
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load)
    }


def _assignment_before(tree: ast.Module, name: str, line: int, block: ast.With) -> ast.stmt | None:
    """The last statement before ``line``, outside ``block``, that assigns ``name``."""
    inside = {id(node) for node in ast.walk(block)}
    found: ast.stmt | None = None
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
            and id(node) not in inside
            and node.lineno < line
            and name in _stored_names(node)
            and (found is None or node.lineno > found.lineno)
        ):
            found = node
    return found


def _assignment_between(tree: ast.Module, name: str, after: int, before: int) -> ast.stmt | None:
    """The last statement of lines ``after`` < line < ``before`` that assigns ``name``."""
    found: ast.stmt | None = None
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
            and after < node.lineno < before
            and name in _stored_names(node)
            and (found is None or node.lineno > found.lineno)
        ):
            found = node
    return found


def loss_outside_tape(
    gradient: str, frame: CellFrame, holds: str = "is None", lookup: Lookup | None = None
) -> str | None:
    """``preds`` computed before ``with tf.GradientTape() as g:`` and the loss computed
    from it inside, or the loss computed after the block ended: the tape never saw the
    variables used, so its gradients are None. ``holds``: what is said of ``gradient``
    (``is None``; ``holds only None`` for a list of gradients).

    Read from the cell: the statement that bound the None gradient from
    ``g.gradient(loss, sources)``, the ``with ... as g:`` block before it, the loss's
    assignment there and, among the names it reads (through the block's own
    assignments), one that was assigned before the block from a source variable, or from
    a call of the learner's function that reads one (``omega = params()``; with ``lookup``,
    the namespace the cell runs in: ``function_reads.py``).
    """
    tree = frame.tree()
    if tree is None:
        return None
    found = gradient_statement(tree, gradient)
    if found is None:
        return None
    statement, call = found
    tape = call.func.value.id  # type: ignore[attr-defined]
    target, sources = call.args[0], call.args[1]
    if not isinstance(target, ast.Name):
        return None
    block = tape_block(tree, tape, statement.lineno)
    if block is None:
        return None
    shown_sources = frame.segment(sources) or "the sources"
    block_end = getattr(block, "end_lineno", None) or block.lineno
    after = _assignment_between(tree, target.id, block_end, statement.lineno)
    if after is not None:
        # Dedented by one level: the loss line runs after the tape stopped recording.
        line = frame.segment(after)
        if line and "\n" not in line:
            return (
                f"{code(gradient)} {holds}: the loss {code(target.id)} is computed after the "
                f"{code(f'with ... as {tape}:')} block ended (line {after.lineno}: "
                f"{code(line)}). A tape records only what runs inside its block, so "
                f"{code(f'{tape}.gradient(...)')} finds no path from {code(shown_sources)} to "
                f"the loss and returns None. Fix: indent line {after.lineno}, {code(line)}, into "
                f"the {code(f'with ... as {tape}:')} block."
            )
    source_names = _read_names(sources)
    assigned_inside = {
        node: _stored_names(node)
        for child in block.body
        for node in ast.walk(child)
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
    }
    # The names the loss depends on, followed through the block's own assignments.
    wanted, seen, outside = [target.id], set(), None
    loss_statement = None
    called: tuple[str, list[str]] | None = None
    while wanted and outside is None:
        name = wanted.pop()
        if name in seen:
            continue
        seen.add(name)
        bound = [node for node, names in assigned_inside.items() if name in names]
        if bound:
            if name == target.id:
                loss_statement = bound[-1]
            for node in bound:
                if node.value is not None:  # type: ignore[attr-defined]
                    # First written, first followed (``pop`` takes from the end): a set's
                    # order changes with the hash seed, and so would the name told.
                    wanted.extend(reversed(names_in_source_order(node.value)))  # type: ignore[attr-defined]
            continue
        if name in source_names:
            continue
        earlier = _assignment_before(tree, name, block.lineno, block)
        value = getattr(earlier, "value", None)
        if earlier is None or value is None:
            continue
        if _read_names(value) & source_names:
            outside = (name, earlier)
        elif lookup is not None:
            through = reads_through_calls(value, source_names, lookup)
            if through is not None:
                outside, called = (name, earlier), through
    if outside is None:
        return None
    name, earlier = outside
    line = frame.segment(earlier)
    if not line or "\n" in line:
        return None
    loss = frame.segment(loss_statement) if loss_statement is not None else None
    where = f", before {code(loss)}" if loss and "\n" not in loss and name != target.id else ""
    subject = (
        f"the loss {code(target.id)} is computed"
        if name == target.id
        else f"the loss {code(target.id)} is computed inside {code(f'with ... as {tape}:')} from "
        f"{code(name)}, but {code(name)} was computed"
    )
    reads = ""
    if called is not None:
        function, variables = called
        reads = f", and {code(function)} reads {', '.join(code(v) for v in variables)}"
    return (
        f"{code(gradient)} {holds}: {subject} before the block (line {earlier.lineno}: "
        f"{code(line)}{reads}), so the tape {code(tape)} never recorded how {code(shown_sources)} "
        f"produced it, and {code(f'{tape}.gradient(...)')} returns None for them. Every "
        f"step from the variables to the loss must run inside the tape, on every training "
        f"step. Fix: move {code(line)} inside the {code(f'with ... as {tape}:')} block"
        f"{where}."
    )


_MAX_FLOAT_ARGUMENTS = 3


def python_float_arguments(context: ErrorContext) -> list[tuple[str, str]]:
    """``[("frame_length=LENGTH", "LENGTH")]``: the keyword arguments of the calls on the
    innermost failing line of the cells whose value is a Python float (a name holding one,
    or a float literal), as written; [] when there are none."""
    for frame in context.frames():
        statement = frame.statement()
        if statement is None:
            continue
        found: list[tuple[str, str]] = []
        for node in ast.walk(statement):
            if not isinstance(node, ast.Call):
                continue
            for keyword in node.keywords:
                value = keyword.value
                if keyword.arg is None or len(found) >= _MAX_FLOAT_ARGUMENTS:
                    continue
                if isinstance(value, ast.Name):
                    known, held = context.lookup(value.id, frame)
                    is_float = known and type(held) is float
                else:
                    is_float = isinstance(value, ast.Constant) and type(value.value) is float
                written = frame.segment(value)
                if is_float and written and "\n" not in written:
                    found.append((f"{keyword.arg}={written}", written))
        return found
    return []
