"""The cell's exception explained, for the errors the course covers: the report's ``error``.

Only exceptions whose type comes from Python itself or from TensorFlow/Keras
are read (``str(exc)``): a user's own exception class may do anything in its
``__str__``. Errors raised inside a ``tf.function`` arrive wrapped as
``in user code: <frames> <InnerType>: <message>``; the inner part is explained.
Anything not recognised gives ``None``: no explanation, no noise.

This package: ``explain`` and ``parse`` here try the explainers in ``_EXPLAINERS`` in
order (the few that need only the message are here too); each returns ``(text, course
section)`` or None. The others, by what went wrong:

- ``context.py``: what an explainer may know besides the message (the failing statement
  in the user's cells, what a name there holds), read without running user code;
- ``dtypes.py``: operands of different dtypes, arithmetic on a ``None`` gradient;
- ``graph.py``: graph building (AutoGraph branches, tensors as Python bools, tensors that
  leak out of a trace, variables created on a later trace);
- ``keras.py``: where Keras weights live (read-only weights, an optimizer meeting new
  variables, state added to a built layer);
- ``shapes.py``: a missing batch or channel axis;
- ``variable_copies.py``: weights copied into new tf.Variables on every call of a
  tf.function (the copy is plain tensors, not variables made once outside);
- ``tape_loops.py``: a tape recorded once before a loop that changes the weights and
  takes a gradient at every step (the tape belongs in the loop, not ``persistent=True``);
- ``failing_line.py``: the failing line read as a teacher reads it (the call, what each
  value named there holds), and ``families.py``: the last explainer, which gives every
  TensorFlow/Keras error raised through the user's code an entry naming them, with the
  rule and fix of the error's family when one is recognised (``FAMILIES``: one record per
  family, ``family_record.py``, kept by theme in ``families_*.py``); ``calls.py``: one such
  family, arguments that do not fit the callee's signature or a dataset's elements;
- ``numpy_calls.py``: NumPy functions on tensors being traced (a custom loss, a layer's
  ``call``, a tf.function): the failing line written with ``keras.ops``;
- ``runnable_fixes.py``: applied to every entry: each fix's code runs in the user's
  namespace (a module alias it lacks respelled, or its import named first).
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable, Collection
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    ParsedError,
    code,
    rewrite,
    strip_ansi,
)
from jupyterlab_tfcoach.monitor.errors.dtypes import (
    explain_dtype_mismatch,
    explain_none_gradient,
    loss_outside_tape,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import read_failing_line
from jupyterlab_tfcoach.monitor.errors.families import explain_failing_line, line_facts
from jupyterlab_tfcoach.monitor.errors.graph import (
    explain_escaped_tensor,
    explain_new_variables,
    explain_tensor_as_bool,
    explain_uninitialized_branch,
)
from jupyterlab_tfcoach.monitor.errors.graph_cuts import graph_cut_in_tape
from jupyterlab_tfcoach.monitor.errors.keras import (
    explain_read_only_weight,
    explain_state_after_build,
    explain_unknown_variable,
)
from jupyterlab_tfcoach.monitor.errors.numpy_calls import (
    NumpyLine,
    numpy_calls_as_graph_ops,
    numpy_on_traced_tensors,
)
from jupyterlab_tfcoach.monitor.errors.numpy_outside import computed_outside
from jupyterlab_tfcoach.monitor.errors.runnable_fixes import runnable
from jupyterlab_tfcoach.monitor.errors.shapes import explain_missing_axis
from jupyterlab_tfcoach.monitor.errors.summed_gradients import summed_gradients
from jupyterlab_tfcoach.monitor.errors.tape_loops import recorded_before_loop
from jupyterlab_tfcoach.monitor.locations import CellLocator
from jupyterlab_tfcoach.monitor.report import ErrorEntry, error_entry

MAX_MESSAGE = 2000
_TRUSTED_MODULE_PREFIXES = ("tensorflow.", "keras.")
_TRUSTED_NUMPY = ("AxisError", "LinAlgError")

_INNER_ERROR = re.compile(
    r"^\s*(?P<type>[A-Za-z_][\w.]*(?:Error|Exception)): (?P<message>.*)$", re.MULTILINE
)

Explanation = tuple[str, str]


def _is_trusted(exception_type: type) -> bool:
    module = getattr(exception_type, "__module__", "")
    if module == "builtins":
        return getattr(builtins, exception_type.__name__, None) is exception_type
    if (
        type(module) is str
        and module.startswith("numpy")
        and exception_type.__name__ in (_TRUSTED_NUMPY)
    ):
        # NumPy's own message, about an array the learner got from predict or .numpy().
        return True
    return type(module) is str and module.startswith(_TRUSTED_MODULE_PREFIXES)


def parse(exception: BaseException) -> ParsedError | None:
    exception_type = type(exception)
    if not _is_trusted(exception_type):
        return None
    # The whole text is searched (TF puts key phrases near the end of long messages);
    # only the stored ``message`` is capped.
    # Keras 3 wraps parts of its messages in terminal bold escapes.
    full = strip_ansi(str(exception))
    type_name = exception_type.__name__
    if full.lstrip().startswith("in user code:"):
        inner = list(_INNER_ERROR.finditer(full))
        if inner:
            last = inner[-1]
            rest = full[last.end() :].strip()
            text = (last.group("message") + (f"\n{rest}" if rest else "")).strip()
            return ParsedError(
                last.group("type").rsplit(".", 1)[-1], text[:MAX_MESSAGE], True, full
            )
        return ParsedError(type_name, full[:MAX_MESSAGE], True, full)
    return ParsedError(type_name, full[:MAX_MESSAGE], False, full)


def _tape_reused(parsed: ParsedError, context: ErrorContext) -> Explanation | None:
    if "non-persistent GradientTape can only be used to compute one set" not in parsed.message:
        return None
    rule = (
        "A GradientTape releases its recorded operations after the first gradient() (or "
        "jacobian()) call, so a second call fails."
    )
    fix = _one_gradient_call(context)
    if fix is not None:
        return f"{rule} {fix}", "gradient-tape"
    return (
        f"{rule} Create it with tf.GradientTape(persistent=True) to take several gradients "
        "(then `del tape`), or pass all sources to one gradient() call.",
        "gradient-tape",
    )


def _gradient_of(statement: ast.stmt | None) -> tuple[str, str, ast.Call] | None:
    """``grad_b = tape.gradient(loss, b)`` -> ("grad_b", "tape", the call)."""
    if not (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and isinstance(statement.value, ast.Call)
        and isinstance(statement.value.func, ast.Attribute)
        and statement.value.func.attr == "gradient"
        and isinstance(statement.value.func.value, ast.Name)
        and len(statement.value.args) == 2
        and not statement.value.keywords
    ):
        return None
    call = statement.value
    return statement.targets[0].id, call.func.value.id, call  # type: ignore[attr-defined]


def _one_gradient_call(context: ErrorContext) -> str | None:
    """The second ``tape.gradient`` and the first one on the same tape, in the user's
    names: one call for both sources (``a, b = tape.gradient(loss, [x, y])``), or the
    tape made persistent when the calls cannot be merged."""
    frames = context.frames()
    if not frames:
        return None
    frame = frames[0]
    failing = _gradient_of(frame.statement())
    tree = frame.tree()
    if failing is None or tree is None:
        return None
    second, tape, call = failing
    earlier = [
        found
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and node.lineno < frame.position.line
        for found in [_gradient_of(node)]
        if found is not None and found[1] == tape
    ]
    target = frame.segment(call.args[0])
    if earlier and target and all(frame.segment(e[2].args[0]) == target for e in earlier):
        first, _, first_call = earlier[-1]
        sources = [frame.segment(first_call.args[1]), frame.segment(call.args[1])]
        if all(s and "\n" not in s and not s.startswith("[") for s in sources):
            joined = f"{first}, {second} = {tape}.gradient({target}, [{sources[0]}, {sources[1]}])"
            return (
                f"{code(first + ' = ' + (frame.segment(first_call) or ''))} already used "
                f"{code(tape)}. Fix: ask for both gradients in one call, in place of the "
                f"two lines: {code(joined)}."
            )
    looped = recorded_before_loop(frame, tape, call)
    if looped is not None:
        return looped
    statement = frame.statement()
    summed = summed_gradients(frame, tape, statement) if isinstance(statement, ast.Assign) else None
    if summed is not None:
        return summed
    tf = context.module_alias("tensorflow", "tf")
    return (
        f"{code(tape)} was already used for a gradient. Pass all sources to one gradient() "
        f"call, or make the tape persistent to take several gradients (and {code(f'del {tape}')}"
        f" it after the last one). Fix: "
        f"{code(f'with {tf}.GradientTape(persistent=True) as {tape}:')}."
    )


def _numpy_in_function(parsed: ParsedError, context: ErrorContext) -> Explanation | None:
    # `np.mean(x)` while a tf.function traces: the tensor is symbolic, not one that escaped.
    to_numpy = "to a numpy array" in parsed.message
    numpy_line = numpy_on_traced_tensors(context, parsed.inside_tf_function) if to_numpy else None
    if numpy_line is not None:
        return _numpy_functions(numpy_line), "numpy-in-graphs"
    numpy_call = parsed.inside_tf_function and to_numpy
    if "'SymbolicTensor' object has no attribute 'numpy'" not in parsed.message and not numpy_call:
        return None
    rule = (
        "Inside a tf.function, tensors are symbolic placeholders while the graph is traced: they "
        "have no value yet, so .numpy() does not exist and NumPy functions cannot take them."
    )
    fix = _without_numpy(context) or computed_outside(context)
    if fix is not None:
        return f"{rule} {fix}", "numpy-in-graphs"
    return (
        f"{rule} Keep the computation in TensorFlow ops (tf.reduce_mean rather than np.mean; "
        "use tf.print to see values) and call .numpy() on the function's result outside.",
        "numpy-in-graphs",
    )


def _numpy_functions(numpy_line: NumpyLine) -> str:
    """The NumPy functions of the failing line, and the line with graph ops instead."""
    functions = " and ".join(code(function) for function in numpy_line.functions)
    plural = len(numpy_line.functions) > 1
    return (
        f"{functions} {'are NumPy functions' if plural else 'is a NumPy function'}: NumPy "
        "computes on values, but here the tensors are symbolic: Keras traces a loss, a "
        "layer's `call` and a train step into a graph (as tf.function traces its body), "
        "and while it traces, the tensors have no values yet, so NumPy cannot run on them. "
        "keras.ops has the same functions, with the same arguments, as graph ops. Fix: "
        f"replace {code(numpy_line.line)} by {code(numpy_line.fixed)}."
    )


def _without_numpy(context: ErrorContext) -> str | None:
    """``if avg.numpy() > 1.0:`` -> ``if avg > 1.0:``: the tensor itself works in the
    comparison (AutoGraph turns a tensor ``if`` into tf.cond)."""
    frames = context.frames()
    if not frames:
        return None
    frame = frames[0]
    for part in frame.header():
        parents = {
            id(child): outer for outer in ast.walk(part) for child in ast.iter_child_nodes(outer)
        }
        for node in ast.walk(part):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "numpy"
                and not node.args
            ):
                continue
            # Climb through operators: ``np.mean(x.numpy() == y)`` gives NumPy the comparison.
            child, parent = node, parents.get(id(node))
            while isinstance(parent, (ast.Compare, ast.BinOp, ast.UnaryOp)):
                child, parent = parent, parents.get(id(parent))
            if _needs_an_array(parent, child):
                # ``x.numpy().max()``: a tensor fails too; ``np.mean(x.numpy() == y)``
                # works once NumPy's functions are graph ops as well.
                return _numpy_functions_too(frame, part, parents, context)
            tensor = frame.segment(node.func.value)
            shown = frame.segment(part)
            if not tensor or not shown or "\n" in shown:
                return None
            fixed = rewrite(frame, part, node, tensor)
            statement = frame.statement()
            if fixed and isinstance(statement, (ast.If, ast.While)):
                keyword = "if" if isinstance(statement, ast.If) else "while"
                shown, fixed = f"{keyword} {shown}:", f"{keyword} {fixed}:"
            if not fixed:
                return None
            return (
                f"{code(tensor)} is such a tensor. Keep the computation in TensorFlow ops "
                f"(AutoGraph turns an `if` on a tensor into tf.cond; tf.print shows values "
                f"while the function runs). Fix: use the tensor itself, without .numpy(): "
                f"replace {code(shown)} by {code(fixed)}."
            )
    return None


def _numpy_functions_too(
    frame: CellFrame, part: ast.AST, parents: dict[int, ast.AST], context: ErrorContext
) -> str | None:
    """The fix of ``np.mean(pred.numpy() == y)``: without ``.numpy()`` and with graph ops
    for NumPy's functions (``np.mean(pred == y)`` still gives NumPy a symbolic tensor)."""
    found = numpy_calls_as_graph_ops(frame, part, parents, context)
    shown = frame.segment(part)
    if found is None or not shown or "\n" in shown or "\n" in found[0]:
        return None
    fixed, tensors, functions = found
    named = " and ".join(code(function) for function in functions)
    return (
        f"{' and '.join(code(tensor) for tensor in tensors)} "
        f"{'are such tensors' if len(tensors) > 1 else 'is such a tensor'}, and without "
        f".numpy() {named} would still be given a symbolic tensor. Their graph ops compute "
        "the same while the function runs (keras.ops keeps NumPy's names and arguments). "
        f"Fix: drop .numpy() and use the graph ops: replace {code(shown)} by {code(fixed)}."
    )


# Roots of the calls that take a tensor where the learner passed ``x.numpy()``.
_TENSOR_CALL_ROOTS = frozenset({"tf", "tensorflow", "keras", "ops"})


def _needs_an_array(parent: ast.AST | None, array: ast.AST) -> bool:
    """Whether the value of ``x.numpy()`` is used where the tensor itself would fail too:
    a method or attribute of the array (``.max()``, ``.tolist()``), or an argument of any
    call but a TensorFlow/Keras one (``np.mean``, ``mean`` from numpy, ``float``)."""
    if isinstance(parent, ast.Attribute):
        return True
    if isinstance(parent, ast.Call) and array is not parent.func:
        root = parent.func
        while isinstance(root, ast.Attribute):
            root = root.value
        return not (isinstance(root, ast.Name) and root.id in _TENSOR_CALL_ROOTS)
    return False


def _no_gradients(parsed: ParsedError, context: ErrorContext) -> Explanation | None:
    if "No gradients provided for any variable" not in parsed.message:
        return None
    pinpointed = _loss_outside_the_tape(context) or _graph_cut_in_the_tape(context)
    if pinpointed is not None:
        return pinpointed, "gradient-tape"
    return (
        "The optimizer got None as the gradient for every variable: the loss does not depend on "
        "the trainable variables it was given. Typical causes: a variable rebound to a tensor "
        "(`w = w - ...` or `self.w = self.w - ...`), the computation done outside the "
        "GradientTape, or a conversion through NumPy that cuts the graph.",
        "stopped-learning",  # the section that shows this error, next to the None warning
    )


def _gradients_given(call: ast.AST | None) -> str | None:
    """``grads`` of ``opt.apply_gradients(zip(grads, variables))`` (also ``list(zip(...))``
    and Keras 3's ``opt.apply(grads, variables)``)."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.args):
        return None
    first = call.args[0]
    if call.func.attr == "apply" and isinstance(first, ast.Name):
        return first.id
    if call.func.attr != "apply_gradients":
        return None
    if isinstance(first, ast.Call) and isinstance(first.func, ast.Name) and first.func.id == "list":
        first = first.args[0] if first.args else first
    if (
        isinstance(first, ast.Call)
        and isinstance(first.func, ast.Name)
        and first.func.id == "zip"
        and first.args
        and isinstance(first.args[0], ast.Name)
    ):
        return first.args[0].id
    return None


def _loss_outside_the_tape(context: ErrorContext) -> str | None:
    """The line that computed the loss outside the tape, when the gradients the optimizer
    got all None came from ``tape.gradient`` in the failing cell."""
    line = read_failing_line(context)
    if line is None:
        return None
    gradients = _gradients_given(line.call)
    if gradients is None:
        return None
    frame = line.frame
    return loss_outside_tape(
        gradients, frame, holds="holds only None", lookup=lambda name: context.lookup(name, frame)
    )


def _graph_cut_in_the_tape(context: ErrorContext) -> str | None:
    """The step inside the tape that left TensorFlow (``predict``, ``.numpy()``, NumPy) on
    the variables' path to the loss, when the gradients the optimizer got all None came
    from ``tape.gradient`` in the failing cell."""
    line = read_failing_line(context)
    if line is None:
        return None
    gradients = _gradients_given(line.call)
    if gradients is None:
        return None
    frame = line.frame
    return graph_cut_in_tape(gradients, frame, lambda name: context.lookup(name, frame))


def _augmented_assignment(parsed: ParsedError, context: ErrorContext) -> Explanation | None:
    if "with `tf.Variable`s is not supported" not in parsed.message:
        return None
    return (
        "`w -= x` / `w += x` on a tf.Variable is not supported: it would replace the variable with "
        "a new tensor. Update the variable in place with w.assign_sub(x) / w.assign_add(x).",
        "rebinding-variables",
    )


_EXPLAINERS: tuple[Callable[[ParsedError, ErrorContext], Explanation | None], ...] = (
    explain_dtype_mismatch,
    explain_missing_axis,
    explain_none_gradient,
    _tape_reused,
    explain_new_variables,
    _numpy_in_function,
    explain_tensor_as_bool,
    explain_uninitialized_branch,
    explain_escaped_tensor,
    _no_gradients,
    _augmented_assignment,
    explain_read_only_weight,
    explain_unknown_variable,
    explain_state_after_build,
    # Last: every other TF/Keras error raised through the user's code, by its failing line.
    explain_failing_line,
)


def _with_failing_line(parsed: ParsedError, context: ErrorContext, explanation: str) -> str:
    """A specific explainer's rule and fix, after the facts of the failing line (where, the
    call, the names it computed, what each value holds) that the rule does not say itself."""
    try:
        line = read_failing_line(context)
        if line is None:
            return explanation
        return f"{line_facts(parsed, context, line, explanation)} {explanation}"
    except Exception:
        return explanation


def explain(
    exception: BaseException | None, shell: Any = None, reported_rebinds: Collection[str] = ()
) -> ErrorEntry | None:
    """The report's ``error`` object, or None for no error / an unknown one.

    With the IPython ``shell``, an explanation can name the user's own expressions (the
    cells' source and the user namespace); without it, it stays generic.
    ``reported_rebinds``: variables the report's ``variables`` entries already explain as
    rebound to a tensor; an error with that cause refers to them rather than repeat them.
    """
    if exception is None:
        return None
    try:
        parsed = parse(exception)
        if parsed is None:
            return None
        namespace = getattr(shell, "user_ns", None) if shell is not None else None
        cell_files = CellLocator(shell).cell_files() if shell is not None else None
        context = ErrorContext(exception, parsed, namespace, cell_files)
        context.reported_rebinds = frozenset(reported_rebinds)
        for explainer in _EXPLAINERS:
            found = explainer(parsed, context)
            if found is not None:
                explanation, section = found
                if explainer is not explain_failing_line:
                    explanation = _with_failing_line(parsed, context, explanation)
                explanation = runnable(explanation, context)
                return error_entry(parsed.type, parsed.message, explanation, section)
    except Exception:
        return None
    return None
