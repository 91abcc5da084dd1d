"""Why a function traced again, in the user's terms: one reason per changed argument
(shape, dtype, Python value, kind), each with the fix it calls for.

A reason names the parameter and, when the calling cell line passes something else, the
argument as written there (``learning_rate``: ``lr_now`` in ``sgd_update(g, lr_now)``),
read from that line only when the call traced (``call_arguments``); a fix that changes
the call is written in the call itself. The cause and fix of a new Python value are said
once per cell, function and argument; its later values are only named (``repeated``).
"""

from __future__ import annotations

import ast

from jupyterlab_tfcoach.monitor.report import LAST_BATCH, RetraceReason, retrace_reason
from jupyterlab_tfcoach.monitor.traces import signatures as sig

MAX_REASONS_PER_TRACE = 4


def at_site(call_site: str | None) -> str:
    return f" (call at {call_site})" if call_site else ""


_MAX_WRITTEN = 60


def call_arguments(
    line: str | None, function_name: str, positional: int, parameters: tuple[str, ...]
) -> dict[str, str]:
    """Parameter -> argument source for the call of ``function_name`` on a cell ``line``."""
    if not line or len(line) > 300:
        return {}
    try:
        tree = ast.parse(line + " pass" if line.rstrip().endswith(":") else line)
    except SyntaxError:
        try:
            tree = ast.parse(line.strip().rstrip(":").removeprefix("return ").strip() or "0")
        except SyntaxError:
            return {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if called != function_name:
            continue
        written: dict[str, str] = {}
        positional_names = parameters[:positional]
        for index, argument in enumerate(node.args):
            if isinstance(argument, ast.Starred) or index >= len(positional_names):
                break
            written[positional_names[index]] = ast.unparse(argument)
        for keyword in node.keywords:
            if keyword.arg is not None and keyword.arg in parameters:
                written[keyword.arg] = ast.unparse(keyword.value)
        return {
            name: text
            for name, text in written.items()
            if len(text) <= _MAX_WRITTEN and "\n" not in text
        }
    return {}


def _named(argument: str, written: dict[str, str] | None) -> str:
    """```learning_rate``` or ```learning_rate`` (``lr_now`` at the call)``."""
    given = (written or {}).get(argument)
    # Only a name the learner holds (`lr_now`, `cfg.rate`, `rates[i]`) helps find the value;
    # a literal or a call written at the call site is already in the traceback's line.
    if given and given != argument and _names_a_value(given):
        return f"`{argument}` (`{given}` at the call)"
    return f"`{argument}`"


def _names_a_value(text: str) -> bool:
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return isinstance(node, ast.Name)


def _tensor_at_call(
    argument: str, written: dict[str, str] | None, call: str | None, dtype: str
) -> str | None:
    """The call with the argument wrapped in a tensor: ``f(x, tf.constant(lr_now,
    tf.float32))``, when the call passes a name (or ``a.b``) for ``argument``."""
    given = (written or {}).get(argument)
    # ast columns count UTF-8 bytes: only ASCII lines are cut by them.
    if not given or not call or not call.isascii():
        return None
    if not given.replace(".", "_").isidentifier():
        return None
    try:
        tree = ast.parse(call + " pass" if call.rstrip().endswith(":") else call)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        arguments = [*node.args, *(keyword.value for keyword in node.keywords)]
        for value in arguments:
            if ast.unparse(value) == given:
                segment = ast.get_source_segment(call, node)
                inner = ast.get_source_segment(call, value)
                if not segment or not inner:
                    continue
                start = value.col_offset - node.col_offset
                end = value.end_col_offset - node.col_offset  # type: ignore[operator]
                return f"{segment[:start]}tf.constant({given}, tf.{dtype}){segment[end:]}"
    return None


def _dimensions(shape: str | None) -> list[str] | None:
    """``"(32, 4)"`` -> ``["32", "4"]``; None for an unknown rank."""
    if shape is None or not shape.startswith("("):
        return None
    return [part.strip() for part in shape.strip("(),").split(",") if part.strip()]


def _is_smaller_batch(before: str | None, after: str | None) -> bool:
    """Only the first of two or more dimensions changed, and it got smaller: a last
    partial batch. A 1-D tensor that got shorter is as likely a shorter sequence."""
    old, new = _dimensions(before), _dimensions(after)
    if not old or not new or len(old) < 2 or len(old) != len(new) or old[1:] != new[1:]:
        return False
    return old[0].isdigit() and new[0].isdigit() and int(new[0]) < int(old[0])


def _is_shorter_vector(before: str | None, after: str | None) -> bool:
    """A 1-D tensor that got shorter (read as a batch only beside a batch of rows)."""
    old, new = _dimensions(before), _dimensions(after)
    if not old or not new or len(old) != 1 or len(new) != 1:
        return False
    return old[0].isdigit() and new[0].isdigit() and int(new[0]) < int(old[0])


def last_batch_reason(
    found: list[sig.Difference],
    call_site: str | None,
    shape_retraces: int,
    written: dict[str, str] | None = None,
) -> RetraceReason | None:
    """The one extra trace a dataset's last, smaller batch costs, told as information.

    A loop over ``ds.batch(n)`` whose size is not a multiple of ``n`` ends each epoch on a
    shorter batch: the function traces once more for it and every later epoch reuses both
    traces. That is normal, so nothing is to change (an input_signature or
    ``drop_remainder`` would only save one trace). Only when it is the function's first
    retrace on a shape and every argument that changed lost rows on its first axis alone,
    to the same size; a second new shape gets the usual advice. A 1-D argument (the
    labels of an ``(x, y)`` batch) that got shorter to that same size counts too, beside at
    least one argument of two or more dimensions that lost rows alone."""
    if shape_retraces != 1 or not found:
        return None
    if any(d.kind != "shape" for d in found):
        return None
    batches = [d for d in found if _is_smaller_batch(d.before, d.after)]
    if not batches:
        return None
    if any(d not in batches and not _is_shorter_vector(d.before, d.after) for d in found):
        return None
    sizes = {(_dimensions(d.before) or [""])[0] for d in found}
    new_sizes = {(_dimensions(d.after) or [""])[0] for d in found}
    if len(sizes) != 1 or len(new_sizes) != 1:
        return None
    first = batches[0]
    named = " and ".join(_named(d.argument, written) for d in found)
    text = (
        f"Traced once more{at_site(call_site)} for a smaller batch: {named} went from "
        f"{first.before} to {first.after} on the first axis only, the last, partial batch "
        "of a dataset whose size is not a multiple of the batch size. One extra trace for "
        "it is normal and later epochs reuse both traces: nothing to change."
    )
    return retrace_reason(LAST_BATCH, first.argument, first.before, first.after, text)


def _is_flag(value: str | None) -> bool:
    """A bool, None or string Python argument: usually a mode switch with few values."""
    return value is not None and (value in ("True", "False", "None") or value[:1] in ("'", '"'))


def _is_simple_name(path: str) -> bool:
    return path.isidentifier()


def tensor_dtype_for(signature: sig.Signature | None, value: str | None) -> str:
    """The dtype a Python number argument should become: the one the function works in.

    ``tf.constant(0.1)`` is float32 but ``tf.constant(1)`` is int32: an int passed to a
    function whose tensors are float must still become a float tensor.
    """
    dtypes = [
        leaf.dtype for leaf in (signature or {}).values() if leaf.kind == sig.TENSOR and leaf.dtype
    ]
    floats = [d for d in dtypes if d.startswith(("float", "bfloat", "half"))]
    if floats:
        return max(set(floats), key=floats.count)
    text = value or ""
    is_float = any(mark in text for mark in (".", "e", "inf", "nan"))
    if not is_float:
        ints = [d for d in dtypes if d.startswith(("int", "uint"))]
        return max(set(ints), key=ints.count) if ints else "int32"
    return "float32"


def _spec(leaf: sig.Leaf, varying: set[int] | None, rank_changed: bool) -> str | None:
    """``tf.TensorSpec(shape=[None, 4], dtype=tf.float32)`` for one tensor leaf."""
    dims = _dimensions(leaf.shape)
    if dims is None or rank_changed:
        shape = "None"
    else:
        shape = (
            "["
            + ", ".join("None" if i in (varying or set()) else dim for i, dim in enumerate(dims))
            + "]"
        )
    return f"tf.TensorSpec(shape={shape}, dtype=tf.{leaf.dtype})"


def _varying_dimensions(
    found: list[sig.Difference],
    signature: sig.Signature | None = None,
    earlier: list[sig.Signature] | None = None,
) -> tuple[dict[str, set[int]], set[str]]:
    """The dimensions that vary per argument, and the arguments whose rank changed: in this
    retrace (``found``) and against every earlier trace of the function (``earlier``), so
    that a fix written after shapes (2, 5), (2, 7), (3, 7) declares both sizes None and
    accepts every shape the function was called with, not only the last two."""
    varying: dict[str, set[int]] = {}
    rank_changed: set[str] = set()

    def compare(argument: str, before: str | None, after: str | None) -> None:
        old, new = _dimensions(before), _dimensions(after)
        if old is None or new is None or len(old) != len(new):
            rank_changed.add(argument)
            return
        varying.setdefault(argument, set()).update(
            i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b
        )

    for difference in found:
        if difference.kind == "shape":
            compare(difference.argument, difference.before, difference.after)
    for path, leaf in (signature or {}).items():
        if leaf.kind != sig.TENSOR:
            continue
        for previous in earlier or []:
            old_leaf = previous.get(path)
            if (
                old_leaf is not None
                and old_leaf.kind == sig.TENSOR
                and old_leaf.shape != leaf.shape
            ):
                compare(path, old_leaf.shape, leaf.shape)
    return varying, rank_changed


def _shape_fix(
    signature: sig.Signature | None,
    found: list[sig.Difference],
    earlier: list[sig.Signature] | None = None,
) -> str:
    """The input_signature to write, in the function's own argument names and dtypes."""
    varying, rank_changed = _varying_dimensions(found, signature, earlier)
    leaves = list((signature or {}).items())
    if leaves and all(leaf.kind == sig.TENSOR and _is_simple_name(path) for path, leaf in leaves):
        specs = [_spec(leaf, varying.get(path), path in rank_changed) for path, leaf in leaves]
        decorator = f"@tf.function(input_signature=[{', '.join(s for s in specs if s)}])"
        return (
            "Fix: declare the shapes once, with None where the size varies: "
            f"{decorator} (or use tf.function(reduce_retracing=True))."
        )
    first = next((d for d in found if d.kind == "shape"), None)
    leaf = (signature or {}).get(first.argument) if first is not None else None
    if first is not None and leaf is not None and leaf.kind == sig.TENSOR:
        example = _spec(leaf, varying.get(first.argument), first.argument in rank_changed)
        return (
            "Fix: give the tf.function an input_signature with None where the size varies "
            f"(for `{first.argument}`: {example}), or use tf.function(reduce_retracing=True)."
        )
    return (
        "Fix: give the tf.function an input_signature with None in the dimension that varies "
        "(e.g. tf.TensorSpec(shape=[None, ...])), or use tf.function(reduce_retracing=True)."
    )


def difference_reason(
    difference: sig.Difference,
    call_site: str | None,
    shape_retraces: int,
    first_shape_in_trace: bool = True,
    signature: sig.Signature | None = None,
    found: list[sig.Difference] | None = None,
    written: dict[str, str] | None = None,
    call: str | None = None,
    repeated: bool = False,
    earlier: list[sig.Signature] | None = None,
) -> RetraceReason:
    argument, before, after = difference.argument, difference.before, difference.after
    where = at_site(call_site)
    named = _named(argument, written)
    if difference.kind == "shape":
        if after is not None and "None" in after and (before is None or "None" not in before):
            text = (
                f"Retraced{where}: TensorFlow relaxed the shape of `{argument}` from {before} "
                f"to {after} (reduce_retracing=True), so other sizes in that dimension "
                "reuse this trace."
            )
        elif not first_shape_in_trace:
            # Same trace, same cause, same fix: said once (a batch (x, y) changes both).
            text = (
                f"Retraced{where}: the shape of {named} changed from {before} to {after} "
                "too (same trace, same fix)."
            )
        else:
            repeat = (
                f" This function has now retraced {shape_retraces} times on shape changes."
                if shape_retraces > 1
                else ""
            )
            batch = (
                " A smaller first dimension is typically the last, partial batch of a "
                "dataset: .batch(n, drop_remainder=True) drops it, or keep it and use None "
                "for the batch dimension."
                if _is_smaller_batch(before, after)
                else ""
            )
            text = (
                f"Retraced{where}: the shape of {named} changed from {before} to {after}; "
                f"every new shape traces again.{repeat}{batch} "
                f"{_shape_fix(signature, found or [difference], earlier)}"
            )
    elif difference.kind == "dtype":
        text = (
            f"Retraced{where}: the dtype of {named} changed from {before} to {after}; "
            "every new dtype traces again. Cast inputs to one dtype (tf.cast) before the call."
        )
    elif difference.kind == "python_value" and _is_flag(before) and _is_flag(after):
        text = (
            f"Retraced{where}: the Python value of {named} changed from {before} to "
            f"{after}. Each distinct Python value gets its own trace (and reuses it when the "
            "value comes back): fine for a switch with a few values such as training=True/"
            "False; only a value that keeps changing needs to become a tensor."
        )
    elif difference.kind == "python_value":
        dtype = tensor_dtype_for(signature, after)
        fixed = _tensor_at_call(argument, written, call, dtype)
        fix = f"`{fixed}`" if fixed else f"tf.constant({argument}, tf.{dtype})"
        if repeated:
            text = (
                f"Retraced{where}: {named} is {after} now, another Python value: same cause, "
                f"same fix ({fix})."
            )
        else:
            text = (
                f"Retraced{where}: the Python value of {named} changed from {before} to "
                f"{after}. A Python argument is part of the trace key, so each new value "
                f"traces again; pass a tensor instead, in the dtype the function works in: "
                f"{fix}."
            )
    elif difference.kind == "kind":
        text = (
            f"Retraced{where}: {named} changed from a {before} to a {after}. A Python value "
            "and a tensor trace separately; pass the same kind every time (preferably a tensor)."
        )
    elif before is None and after is None:
        text = (
            f"Retraced{where}: the structure of `{argument}` changed. Nested Python lists, "
            "tuples and dicts are part of the trace key (their length and every Python value "
            "in them); pass a tensor instead."
        )
    elif after is not None and "traced by identity" in after:
        text = (
            f"Retraced{where}: `{argument}` is {after}. Create it once and pass the same "
            "object on every call."
        )
    else:
        text = f"Retraced{where}: `{argument}` changed from {before} to {after}."
        if "tf.Variable" in str(before) and "tf.Variable" in str(after):
            text += " A tf.Variable argument traces once per shape and dtype."
    return retrace_reason(difference.kind, argument, before, after, text)


def keras_reason(differences: list[sig.Difference], call_site: str | None) -> RetraceReason | None:
    """One reason for a retrace of a step function Keras built (not the user's tf.function),
    or None for the retrace Keras makes on purpose.

    The generic advice (give it an input_signature) cannot be followed for a
    function Keras owns, and a batch (x, y, sample_weight) changes several
    arguments at once: one line says what changed and what the user controls.
    """
    where = at_site(call_site)
    first = differences[0]
    changed = ", ".join(
        (
            f"`{d.argument}` {d.before} -> {d.after}"
            if d.before or d.after
            else f"`{d.argument}` structure"
        )
        for d in differences[:MAX_REASONS_PER_TRACE]
    )
    relaxed = all(
        d.kind == "shape"
        and d.after is not None
        and "None" in d.after
        and "None" not in (d.before or "")
        for d in differences
    )
    if relaxed:
        # Keras builds its step functions with reduce_retracing=True: a batch of another
        # size (typically the last, smaller one) relaxes the shape once and every later
        # size reuses that trace. It is what every fit()/predict() on a dataset whose size
        # is not a multiple of the batch does, like a first trace: not worth a line.
        return None
    text = (
        f"Retraced{where}: the batch given to this step function Keras built changed "
        f"({changed}). Keras retraces it when the batch shape or structure changes, e.g. "
        "train_on_batch()/test_on_batch()/predict_on_batch() with a new batch size or with "
        "and without sample weights. Once is harmless; if it happens on every call, keep "
        "the batch size and arguments the same (or use fit()/evaluate()/predict())."
    )
    return retrace_reason(first.kind, first.argument, first.before, first.after, text)
