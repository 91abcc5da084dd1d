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
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.families_arguments import positional_names
from jupyterlab_tfcoach.monitor.errors.family_record import (
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
        if fixed and "\n" not in fixed and len(fixed) <= _MAX_SHOWN:
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
            if not (
                parameter.endswith("shape")
                and isinstance(value, ast.Constant)
                and type(value.value) is int
                and (str(value.value) in text or "'int'" in text)
            ):
                continue
            written = _written(line, call)
            number = value.value
            key = _key_sentence(text, _NOT_A_SHAPE)
            rule = (
                f"{code(written) if written else 'The call'} was given {code(str(number))} as "
                f"{code(parameter)}: a shape is a tuple of sizes, one per axis (the batch axis "
                f"left out), and a bare int is not one{': Keras says ' + key if key else ''}. "
                f"For {number} values per example, write the tuple {code(f'({number},)')} "
                "(the comma makes it a tuple)."
            )
            return Finding(rule, _rewritten(line, call, value, f"({number},)"))
    return None


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
        scheduled = _scheduled(owner, attribute, value, context)
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
# (``tf.concat([a, b])``: "Missing required positional argument").
_MISSING_REQUIRED = re.compile(r"^Missing required positional argument")
# The value written for a missing ``axis`` of the join functions, with what it means.
_JOIN_AXIS = {"concat": "0", "stack": "0"}


def _read_missing_required(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """The callee's required parameters (``inspect.signature`` of the library function the
    call names) that the call gives neither by position nor by keyword."""
    import inspect

    from jupyterlab_tfcoach.monitor.errors.calls import library_callee

    call = line.call
    if not isinstance(call, ast.Call) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    callee = library_callee(call.func, line.frame, context)
    if callee is None:
        return None
    try:
        parameters = list(inspect.signature(callee).parameters.values())
    except (TypeError, ValueError):
        return None
    given = {keyword.arg for keyword in call.keywords}
    missing = [
        parameter.name
        for index, parameter in enumerate(parameters)
        if parameter.default is inspect.Parameter.empty
        and parameter.kind
        in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        and index >= len(call.args)
        and parameter.name not in given
    ]
    written = line.frame.segment(call) or ""
    if not missing or not written or "\n" in written:
        return None
    function = line.frame.segment(call.func) or ""
    names = ", ".join(code(name) for name in missing)
    signature = f"{function}({', '.join(p.name for p in parameters if p.name != 'name')})"
    rule = (
        f"{code(signature)} needs {names}, which {code(written)} does not give (TensorFlow's "
        "message does not name it)"
    )
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
    return Finding(rule + ".", None, section="shape-dtype-device")


MISSING_REQUIRED = ErrorFamily(
    "a required argument of a TensorFlow function left out",
    messages=(Message(_MISSING_REQUIRED),),
    read=_read_missing_required,
    section="shape-dtype-device",
    exception_type="TypeError",
)
