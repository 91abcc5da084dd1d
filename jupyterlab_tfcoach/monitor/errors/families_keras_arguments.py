"""Keras's argument validation, read against the call as written (issue #25).

Keras checks a call's arguments against each other and against their kind before it
does anything, and its message names the arguments (``Only one of `clipnorm`,
`clipvalue` and `global_clipnorm` can be set``, ``Cannot convert '5' to a shape``, ``its
learning rate is not settable``). No message list: the family matches the message's
words to the keyword names written in the failing statement's calls (or to the attribute
it assigns), and when the rule is clear gives the statement rewritten:

- two or more keywords the message says exclude each other (``only one of``, ``mutually
  exclusive``, ``not both``, ``together``): the call keeping the first as written;
- a shape keyword (``shape``, ``input_shape``, ``target_shape``...) given a bare int the
  message refuses as a shape: the int wrapped in a tuple, ``shape=(5,)``;
- an attribute assigned (``opt.learning_rate = 0.01``) that the message names as not
  settable: the statement that created the object, in the cells, given that value as its
  keyword instead (``opt = keras.optimizers.SGD(learning_rate=0.01)``).

Each entry names the call and the argument(s) with their values as written and quotes
Keras's key sentence. An unknown keyword is ``families_arguments``' (its closest name).
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells, cell_frame
from jupyterlab_tfcoach.monitor.errors.context import (
    ErrorContext,
    code,
    on_one_source_line,
    rewrite,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.families_arguments import positional_names
from jupyterlab_tfcoach.monitor.errors.family_record import (
    GENERAL_SECTION,
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)

KERAS_SECTION = "keras-model-api"
_MESSAGE_CHARS = 1500
_MAX_SHOWN = 160
_EXCLUSIVE = re.compile(
    r"\bonly one of\b|\bmutually exclusive\b|\bnot both\b|\bboth\b.*\bcannot\b|"
    r"\bcannot be (?:set|passed|used|specified|provided) (?:together|at the same time)\b|"
    r"\bat most one of\b",
    re.IGNORECASE,
)
_NOT_A_SHAPE = re.compile(r"\bshape\b|\btuple\b|\biterable\b", re.IGNORECASE)
_NOT_SETTABLE = re.compile(
    r"\bnot settable\b|\bcannot (?:be )?set\b|\bcan't set\b|\bhas no setter\b|\bread-only\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`'\"])|\n+")


def _text(error: Recognised) -> str:
    return (error.parsed.full_message or error.parsed.message or "")[:_MESSAGE_CHARS]


def _named(name: str, text: str) -> bool:
    """Whether the message names ``name`` as a word (in backticks, quotes or bare)."""
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text) is not None


def _key_sentence(text: str, pattern: re.Pattern[str]) -> str | None:
    """The message's sentence the rule rests on, quoted; the ``Received:`` tail cut."""
    for sentence in _SENTENCE_END.split(text):
        sentence = sentence.strip()
        if pattern.search(sentence):
            sentence = re.sub(r"\s*Received:.*$", "", sentence).rstrip(" .,;")
            if sentence:
                return f'"{sentence}"' if len(sentence) <= 240 else None
    return None


def _calls(line: FailingLine) -> list[ast.Call]:
    """The calls of the failing statement, the failing one first."""
    found = [line.call] if isinstance(line.call, ast.Call) else []
    if line.statement is not None:
        found += [
            node
            for node in ast.walk(line.statement)
            if isinstance(node, ast.Call) and node is not line.call
        ]
    return found


def _written(line: FailingLine, node: ast.AST) -> str | None:
    text = line.frame.segment(node)
    return text if text and "\n" not in text and len(text) <= _MAX_SHOWN else None


def _rewritten(line: FailingLine, call: ast.Call, node: ast.AST, replacement: str) -> str | None:
    """The statement with ``node`` (in ``call``) replaced; for a statement over several
    lines, the call alone, said to replace the old one."""
    statement = line.statement
    if statement is not None:
        fixed = rewrite(line.frame, statement, node, replacement)
        if fixed and on_one_source_line(statement) and len(fixed) <= _MAX_SHOWN:
            return code(fixed)
    fixed_call = rewrite(line.frame, call, node, replacement)
    old = _written(line, call)
    if fixed_call and old and "\n" not in fixed_call and len(fixed_call) <= _MAX_SHOWN:
        return f"in place of {code(old)}, {code(fixed_call)}"
    return None


def _without_keywords(call: ast.Call, line: FailingLine, dropped: list[ast.keyword]) -> str | None:
    """The call's source without the keywords ``dropped``."""
    old = line.frame.segment(call)
    kept = [line.frame.segment(a) for a in call.args] + [
        line.frame.segment(k) for k in call.keywords if all(k is not d for d in dropped)
    ]
    func = line.frame.segment(call.func)
    if old is None or func is None or any(part is None for part in kept):
        return None
    return f"{func}({', '.join(part for part in kept if part)})"


# ------------------------------------------------------------------ the readings
def _exclusive(error: Recognised, line: FailingLine) -> Finding | None:
    text = _text(error)
    if not _EXCLUSIVE.search(text):
        return None
    for call in _calls(line):
        given = [k for k in call.keywords if k.arg and _named(k.arg, text)]
        if len(given) < 2:
            continue
        shown = [_written(line, k) for k in given]
        if any(s is None for s in shown):
            return None
        written = _written(line, call)
        key = _key_sentence(text, _EXCLUSIVE)
        names = " and ".join(code(s) for s in shown if s)
        rule = (
            f"{code(written) if written else 'The call'} was given {names} together, and Keras "
            f"accepts one of them only{': ' + key if key else ''}"
        )
        replacement = _without_keywords(call, line, given[1:])
        if replacement is None:
            return Finding(rule + ". Keep the one you mean and drop the others.", None)
        dropped = ", ".join(code(s or "") for s in shown[1:])
        fix = _rewritten(line, call, call, replacement)
        rule += f". Keep one: {code(shown[0] or '')} here, dropping {dropped}."
        return Finding(rule, fix)
    return None


def _int_shape(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    text = _text(error)
    if not _NOT_A_SHAPE.search(text):
        return None
    for call in _calls(line):
        named = list(zip(positional_names(call.func, line.frame, context), call.args, strict=False))
        named += [(k.arg, k.value) for k in call.keywords if k.arg]
        for parameter, value in named:
            number = _int_value(value, line, context) if parameter.endswith("shape") else None
            if number is None or not (str(number) in text or "'int'" in text):
                continue
            written = _written(line, call)
            # A name holding the int (``shape=n_features``) stays in the tuple written.
            size = line.frame.segment(value) if not isinstance(value, ast.Constant) else None
            size = size if size and "\n" not in size else str(number)
            held = "" if size == str(number) else f" ({code(size)} holds the int {number})"
            key = _key_sentence(text, _NOT_A_SHAPE)
            rule = (
                f"{code(written) if written else 'The call'} was given {code(size)}{held} as "
                f"{code(parameter)}: a shape is a tuple of sizes, one per axis (the batch axis "
                f"left out), and a bare int is not one{': Keras says ' + key if key else ''}. "
                f"For {number} values per example, write the one-element tuple "
                f"{code(f'({size},)')} (the comma makes it a tuple; {code(f'({size})')} is "
                "the int again)."
            )
            return Finding(rule, _rewritten(line, call, value, f"({size},)"))
    return None


def _int_value(value: ast.expr, line: FailingLine, context: ErrorContext) -> int | None:
    """The Python int an argument is: a literal, or a name (or attribute) holding one."""
    if isinstance(value, ast.Constant):
        return value.value if type(value.value) is int else None
    if not isinstance(value, ast.Name | ast.Attribute):
        return None
    found, held = value_of(value, line.frame, context)
    return held if found and type(held) is int else None


def _attribute_set(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    text = _text(error)
    statement = line.statement
    if not (
        _NOT_SETTABLE.search(text)
        and isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Attribute)
        and isinstance(statement.targets[0].value, ast.Name)
        and _named(statement.targets[0].attr, text)
    ):
        return None
    target = statement.targets[0]
    owner, attribute = target.value.id, target.attr  # type: ignore[attr-defined]
    value = line.frame.segment(statement.value)
    if not value or "\n" in value:
        return None
    key = _key_sentence(text, _NOT_SETTABLE)
    rule = (
        f"{code(f'{owner}.{attribute} = {value}')} sets {code(attribute)} after "
        f"{code(owner)} was created, which Keras refuses here"
        f"{': ' + key if key else ''}"
    )
    if "LearningRateSchedule" in text:
        scheduled = _scheduled(owner, attribute, value, context) or _separate_optimizer(
            owner, attribute, value, context
        )
        if scheduled is not None:
            return Finding(rule + scheduled[0], scheduled[1])
    made = _construction(owner, attribute, context)
    if made is None:
        return Finding(rule + f". Give {code(attribute)} when you create {code(owner)}.", None)
    old, fixed, label = made
    fixed_value = fixed.replace("\0", value)
    return Finding(
        f"{rule}. {code(owner)} was made by {code(old)} ({label}); give it the value there "
        f"(and drop the assignment).",
        f"in place of {code(old)}, {code(fixed_value)}",
    )


def _scheduled(
    owner: str, attribute: str, value: str, context: ErrorContext
) -> tuple[str, str] | None:
    """An optimizer built on a ``LearningRateSchedule`` given a new rate: setting the
    optimizer's rate would throw the schedule away (Keras refuses it). The fix keeps it:
    the schedule's construction again, starting at the new rate, in a new optimizer."""
    for cell, node in assignments_in_cells(owner, context):
        if not isinstance(node.value, ast.Call):
            return None
        keyword = next((k for k in node.value.keywords if k.arg == attribute), None)
        old = cell.segment(node)
        if keyword is None or not old or "\n" in old:
            return None
        schedule = keyword.value
        shown = ""
        if isinstance(schedule, ast.Name):
            shown = f" {code(schedule.id)}"
            made = next(iter(assignments_in_cells(schedule.id, context)), None)
            if made is None or not isinstance(made[1].value, ast.Call):
                return None
            schedule_cell, schedule_call = made[0], made[1].value
        elif isinstance(schedule, ast.Call):
            schedule_cell, schedule_call = cell, schedule
        else:
            return None
        start = next(
            (k.value for k in schedule_call.keywords if k.arg == "initial_learning_rate"),
            schedule_call.args[0] if schedule_call.args else None,
        )
        written = schedule_cell.segment(schedule_call)
        if start is None or not written or "\n" in written:
            return None
        restarted = rewrite(cell_frame(schedule_cell), schedule_call, start, value)
        fixed = rewrite(cell_frame(cell), node, keyword.value, restarted or "")
        if not restarted or not fixed or "\n" in fixed:
            return None
        return (
            f". {code(owner)} was built on the learning-rate schedule{shown} "
            f"({code(written)}): the schedule sets the rate at every step, so the "
            f"optimizer has no rate of its own to change, and replacing the schedule by "
            f"{code(value)} would end the decay. To go on at {code(value)} (fine-tuning), "
            f"start a new schedule of the same kind at that rate in a new optimizer, then "
            f"compile the model again with it (a compiled model keeps its old optimizer).",
            code(fixed),
        )
    return None


def _separate_optimizer(
    owner: str, attribute: str, value: str, context: ErrorContext
) -> tuple[str, str] | None:
    """An optimizer built on a schedule somewhere inside its construction (wrapped, as
    ``LossScaleOptimizer(SGD(learning_rate=sched, momentum=0.9))``, or written over
    several lines), given a float rate for a new phase. The schedule is evaluated at the
    optimizer's step count, so the rate is not the optimizer's to set; the fix is a
    separate optimizer made as the old one was with the float in the schedule's place,
    bound to the same name so the learner's code that reads it applies it."""
    made = next(iter(assignments_in_cells(owner, context)), None)
    if made is None or not isinstance(made[1].value, ast.Call):
        return None
    cell, node = made
    keywords = [
        k
        for k in ast.walk(node.value)
        if isinstance(k, ast.keyword)
        and k.arg == attribute
        and not isinstance(k.value, ast.Constant)
    ]
    if len(keywords) != 1:
        return None
    schedule = keywords[0].value
    schedule_text = cell.segment(schedule) or ""
    try:
        # The float is put in as a name so that it reads as the learner wrote it.
        keywords[0].value = ast.Name(id=value, ctx=ast.Load())
        fixed = f"{owner} = {ast.unparse(node.value)}"
    except Exception:
        return None
    finally:
        keywords[0].value = schedule
    if len(fixed) > _MAX_SHOWN or "\n" in fixed:
        return None
    shown = f" {code(schedule_text)}" if 0 < len(schedule_text) <= 40 else ""
    return (
        f". {code(owner)} was built on the learning-rate schedule{shown}, which Keras "
        f"evaluates at the optimizer's step count ({code(owner + '.iterations')}) before "
        f"every update: the rate is the schedule's, not a value the optimizer holds, so "
        f"there is none to set, and a float in its place would end the schedule. For a "
        f"new phase at {code(value)} (fine-tuning), use a separate optimizer made as "
        f"{code(owner)} was, with {code(value)} in place of the schedule; bound to "
        f"{code(owner)}, the code that reads {code(owner)} applies it (a model compiled "
        f"with the old one must be compiled again, and a `tf.function` traced with it "
        f"defined again).",
        f"in place of {code(f'{owner}.{attribute} = {value}')}, {code(fixed)}",
    )


def _construction(owner: str, attribute: str, context: ErrorContext) -> tuple[str, str, str] | None:
    """``opt = keras.optimizers.SGD(learning_rate=sched)`` in the cells: the statement
    and a template of it with the keyword's value as ``\\0``."""
    for cell, node in assignments_in_cells(owner, context):
        if not isinstance(node.value, ast.Call):
            continue
        old = cell.segment(node)
        keyword = next((k for k in node.value.keywords if k.arg == attribute), None)
        if not old or "\n" in old or keyword is None:
            return None
        frame = cell_frame(cell)
        template = rewrite(frame, node, keyword.value, "\0")
        return (old, template, cell.label) if template else None
    return None


def _read_argument_rule(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    if error.parsed.type not in ("ValueError", "TypeError", "AttributeError"):
        return None
    return (
        _exclusive(error, line)
        or _int_shape(error, line, context)
        or _attribute_set(error, line, context)
    )


ARGUMENT_RULE = ErrorFamily(
    "arguments of a Keras call that break one of its rules",
    messages=(),
    read=_read_argument_rule,
    section=KERAS_SECTION,
)


# ------------------------------------------------------------------ a required argument left out
# TensorFlow's dispatcher refuses a call missing a required parameter without naming it
# (``tf.concat([a, b])``: "Missing required positional argument"); Python refuses a call
# of any other function or class before its code runs (``MultiHeadAttention.__init__()
# missing 1 required positional argument: 'key_dim'``): the traceback never enters the
# library, so the family is claimed by what the failing call names.
_MISSING_REQUIRED = re.compile(r"^Missing required positional argument")
_PYTHON_MISSING = re.compile(
    r"^[\w.]+\(\) missing \d+ required (?:positional |keyword-only )?arguments?: "
)
# Keras binds a layer call's arguments to ``call``'s signature first (``mha(x)``).
_LAYER_CALL_MISSING = re.compile(r"^missing a required argument: '(?P<name>\w+)'")
# What a call argument of an attention layer is, when the learner left it out.
_CALL_MEANINGS = {
    "value": (
        "the sequence the query attends to (for self-attention, the query itself: `layer(x, x)`)"
    ),
    "query": "the sequence that asks (one output per query step)",
}
# The value written for a missing ``axis`` of the join functions, with what it means.
_JOIN_AXIS = {"concat": "0", "stack": "0"}
# What a required parameter learners leave out means (in our words), for the entry.
_MEANINGS = {
    "key_dim": "the size of each attention head's query and key projections",
    "units": "the number of outputs of the layer",
    "filters": "the number of filters (output channels) of the convolution",
    "kernel_size": "the size of the convolution window",
    "output_dim": "the size of each embedding vector",
    "input_dim": "the number of rows of the table: the largest index + 1",
    "num_heads": "the number of attention heads",
    "rate": "the fraction of the inputs to drop",
    "pool_size": "the size of the pooling window",
}
_MAX_SIGNATURE_PARAMETERS = 4


def _read_missing_required(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """The callee's required parameters (``inspect.signature`` of the TensorFlow/Keras
    function or class the failing call names, found statically) that the call gives
    neither by position nor by keyword."""
    import inspect

    from jupyterlab_tfcoach.monitor.errors.families_arguments import (
        keyword_names,
        library_callable,
    )

    call = line.call
    if not isinstance(call, ast.Call) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if any(keyword.arg is None for keyword in call.keywords):
        return None
    if error.matched(_LAYER_CALL_MISSING):
        return _layer_call_missing(error.group("name"), call, line, context)
    found = library_callable(call.func, line.frame, context)
    if found is None:
        return None
    callee, bound = found
    try:
        parameters = list(inspect.signature(callee).parameters.values())
    except (TypeError, ValueError):
        return None
    if bound and parameters:
        parameters = parameters[1:]
    given = {keyword.arg for keyword in call.keywords}
    # A keyword the callee does not take stands for the missing one, misspelt
    # (``Conv2D(8, kernal_size=3)``): ``families_arguments`` names the closest.
    if given - set(keyword_names(callee, parameters)):
        return None
    required = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    missing = [
        parameter.name
        for index, parameter in enumerate(parameters)
        if parameter.default is inspect.Parameter.empty
        and (
            (parameter.kind in required and index >= len(call.args))
            or parameter.kind is inspect.Parameter.KEYWORD_ONLY
        )
        and parameter.name not in given
    ]
    written = line.frame.segment(call) or ""
    if not missing or not written or "\n" in written:
        return None
    function = line.frame.segment(call.func) or ""
    names = ", ".join(code(name) for name in missing)
    signature = f"{function}({_signature(parameters)})"
    python = error.matched(_PYTHON_MISSING)
    said = "Python's message names it" if python else "TensorFlow's message does not name it"
    rule = f"{code(signature)} needs {names}, which {code(written)} does not give ({said})"
    meanings = [f"{code(name)} is {_MEANINGS[name]}" for name in missing if name in _MEANINGS]
    short = function.rsplit(".", 1)[-1]
    if missing == ["axis"] and short in _JOIN_AXIS:
        rule += (
            ": `axis=0` joins along the first axis (more rows, more examples), `axis=-1` "
            "along the last (more features per example)"
        )
        fixed = rewrite(
            line.frame, call, call, f"{written[:-1].rstrip()}, axis={_JOIN_AXIS[short]})"
        )
        if fixed and "\n" not in fixed:
            return Finding(rule + ".", code(fixed), section="joining-indexing")
    if meanings:
        rule += ": " + "; ".join(meanings)
    section = KERAS_SECTION if str(callee.__module__).startswith("keras") else None
    if missing == ["key_dim"]:
        sized = _key_dim(call, line, context)
        if sized is not None:
            value, reason = sized
            fixed = rewrite(
                line.frame,
                line.statement or call,
                call,
                f"{written[:-1].rstrip()}{', ' if call.args or call.keywords else ''}"
                f"key_dim={value})",
            )
            if fixed and "\n" not in fixed:
                return Finding(f"{rule}; {reason}.", code(fixed), section=section)
    if missing == ["max_val"]:
        ranged = _range_of_images(call, line)
        if ranged is not None:
            said, value = ranged
            written_call = written[:-1].rstrip()
            separator = "" if written_call.endswith("(") else ", "
            fixed = rewrite(
                line.frame,
                line.statement or call,
                call,
                f"{written_call}{separator}max_val={value})",
            )
            if fixed and "\n" not in fixed:
                return Finding(f"{rule}; {said}.", code(fixed), section=section or GENERAL_SECTION)
    documented = _documented(callee, short, missing, parameters, call, line)
    if documented is not None:
        said, fix = documented
        return Finding(f"{rule}{said}.", fix, section=section or GENERAL_SECTION)
    return Finding(rule + ".", None, section=section or GENERAL_SECTION)


def _range_of_images(call: ast.Call, line: FailingLine) -> tuple[str, str] | None:
    """(the sentence, the value) for an image metric's missing ``max_val``: the dynamic range
    of the images the call gives, read from their values (1.0 for images in [0, 1], 255.0
    for pixels in [0, 255], 2.0 for [-1, 1]); None when they are not read or fit none."""
    from jupyterlab_tfcoach.monitor.training.clip_ranges import value_range

    ranges = []
    for argument in call.args[:2]:
        operand = line.operand(line.frame.segment(argument) or "")
        found = value_range(operand.value) if operand is not None else None
        if operand is None or found is None:
            return None
        ranges.append((operand.source, *found))
    if not ranges:
        return None
    lowest = min(low for _, low, _ in ranges)
    highest = max(high for _, _, high in ranges)
    if lowest >= 0.0 and highest <= 1.0:
        value, scale = "1.0", "[0, 1]"
    elif lowest >= 0.0 and 2.0 < highest <= 255.0:
        value, scale = "255.0", "[0, 255]"
    elif -1.0 <= lowest < 0.0 and highest <= 1.0:
        value, scale = "2.0", "[-1, 1]"
    else:
        return None
    held = " and ".join(f"{code(name)} from {low:.3g} to {high:.3g}" for name, low, high in ranges)
    return (
        f"`max_val` is the images' dynamic range (the largest possible value minus the "
        f"smallest), read from the data, not a fixed number: {held}, images in {scale}, so "
        f"{value} (255 only for raw pixels)",
        value,
    )


def _documented(
    callee: object,
    short: str,
    missing: list[str],
    parameters: list[object],
    call: ast.Call,
    line: FailingLine,
) -> tuple[str, str | None] | None:
    """The library's own example value of each missing parameter (its docstring's example
    call): said as an example; printed as the fix only when every value is a device string,
    which does not depend on the learner's data (``"/cpu:0"`` runs on any machine)."""
    import inspect

    from jupyterlab_tfcoach.monitor.errors.documented_examples import (
        device_value,
        documented_values,
    )

    positions = {
        parameter.name: index
        for index, parameter in enumerate(parameters)
        if isinstance(parameter, inspect.Parameter)
        and parameter.kind
        in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    }
    values = documented_values(callee, short, missing, positions)
    if values is None:
        return None
    shown = ", ".join(f"{name}={value}" for name, value in values.items())
    said = f"; its documentation shows it given as `{short}({shown})`"
    devices = {name: device_value(value) for name, value in values.items()}
    written = line.frame.segment(call) or ""
    if any(value is None for value in devices.values()) or not written.endswith(")"):
        return f"{said}, a value to adapt to the data", None
    if any(devices[name] != values[name] for name in values):
        said += ' (a GPU\'s name, for a machine that has one; `"/cpu:0"` exists on every machine)'
    opened = written[:-1].rstrip()
    separator = "" if opened.endswith("(") else ", "
    given = ", ".join(f"{name}={devices[name]}" for name in values)
    fixed = rewrite(line.frame, line.statement or call, call, f"{opened}{separator}{given})")
    if not fixed or "\n" in fixed:
        return said, None
    return said, code(fixed)


def _layer_call_missing(
    missing: str, call: ast.Call, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``mha(x)``: a Keras layer (of Keras's own classes) called without a required
    argument of its ``call``; an attention layer given only its query is told the
    self-attention call, the query given again as the value."""
    import inspect

    from jupyterlab_tfcoach.monitor.errors.context import kind_of

    found, layer = context.resolve(call.func, line.frame)
    cls = type(layer)
    if not found or kind_of(layer) != "keras" or not str(cls.__module__).startswith("keras."):
        return None
    try:
        parameters = list(inspect.signature(cls.call).parameters.values())[1:]
    except (TypeError, ValueError):
        return None
    if missing not in [parameter.name for parameter in parameters]:
        return None
    written = line.frame.segment(call) or ""
    layer_name = line.frame.segment(call.func) or ""
    if not written or "\n" in written or not layer_name:
        return None
    signature = f"{cls.__name__}.call({_signature(parameters)})"
    rule = f"{code(signature)} needs {code(missing)}, which {code(written)} does not give"
    if missing in _CALL_MEANINGS:
        rule += f": {code(missing)} is {_CALL_MEANINGS[missing]}"
    attention = "Attention" in cls.__name__
    if attention and missing == "value" and len(call.args) == 1 and not call.keywords:
        query = line.frame.segment(call.args[0]) or ""
        fixed = rewrite(line.frame, line.statement or call, call, f"{layer_name}({query}, {query})")
        if query and fixed and "\n" not in fixed:
            return Finding(rule + ".", code(fixed), section=KERAS_SECTION)
    return Finding(rule + ".", None, section=KERAS_SECTION)


def _signature(parameters: list[object]) -> str:
    """The required parameters and the first few others, as ``help()`` writes them."""
    import inspect

    shown: list[str] = []
    rest = 0
    for parameter in parameters:
        if not isinstance(parameter, inspect.Parameter) or parameter.name == "name":
            continue
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        if parameter.default is inspect.Parameter.empty:
            shown.append(parameter.name)
        elif len(shown) < _MAX_SIGNATURE_PARAMETERS:
            default = parameter.default
            simple = default is None or type(default) in (int, float, bool, str)
            shown.append(f"{parameter.name}={default!r}" if simple else parameter.name)
        else:
            rest += 1
    return ", ".join(shown) + (", ..." if rest else "")


def _key_dim(call: ast.Call, line: FailingLine, context: ErrorContext) -> tuple[int, str] | None:
    """An attention layer's ``key_dim`` from the query it is called on later in the cell
    (``mha = MultiHeadAttention(num_heads=4)`` then ``mha(e_val, e_val)``): the query's
    last axis split over the heads, as the usual ``embed_dim // num_heads``."""
    from jupyterlab_tfcoach.monitor.errors.failing_line import describe, value_of

    statement = line.statement
    heads = next((k.value for k in call.keywords if k.arg == "num_heads"), None)
    if heads is None and call.args:
        heads = call.args[0]
    if not (isinstance(heads, ast.Constant) and type(heads.value) is int and heads.value > 0):
        return None
    if not (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    ):
        return None
    target = statement.targets[0].id
    tree = line.frame.tree()
    if tree is None:
        return None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == target
            and node.lineno > statement.lineno
            and node.args
        ):
            name = line.frame.segment(node.args[0])
            found, query = value_of(node.args[0], line.frame, context)
            described = describe(name or "", query) if found else None
            shape = described.shape if described is not None else None
            size = shape[-1] if shape is not None and len(shape) >= 2 else None
            if not size or not name:
                return None
            per_head = size // heads.value if size % heads.value == 0 else size
            return per_head, (
                f"{code(name)}, the query of {code(target)} below, has {size} features on "
                f"its last axis: {heads.value} heads of {per_head} each"
            )
    return None


MISSING_REQUIRED = ErrorFamily(
    "a required argument of a TensorFlow or Keras function or class left out",
    messages=(
        Message(_MISSING_REQUIRED),
        Message(_PYTHON_MISSING),
        Message(_LAYER_CALL_MISSING),
    ),
    read=_read_missing_required,
    section="shape-dtype-device",
    exception_type="TypeError",
    without_library=True,
)
