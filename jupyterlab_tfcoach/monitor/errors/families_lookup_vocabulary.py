"""A value a lookup layer never saw, with no index kept for such values (issue #25).

``city_lookup = layers.StringLookup(output_mode="one_hot", num_oov_indices=0)`` adapted on
the training cities, then called on a city it never saw: TensorFlow's assertion says
``When `num_oov_indices=0` all inputs should be in vocabulary, found OOV values
["west"]``. Recognised by that message; the reading finds the layer the failing line
calls, the statement that made it (in the running cell before the line, or in the cells)
and the ``num_oov_indices=0`` written there. The fix is that statement without the
keyword: the default keeps one index for every unseen value (``[UNK]``), so data that
holds values the training data did not (validation, test, new examples) still maps.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import CellFrame, ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.families_arguments import layer_constructor
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)

SECTION = "keras-model-api"
_NO_OOV = re.compile(
    r"When `num_oov_indices=0` all inputs should be in vocabulary, found OOV values "
    r"\[(?P<values>[^\]]{0,200})\]"
)
_MAX_SHOWN = 200


def _without_keyword(call: ast.Call, keyword: ast.keyword, frame: CellFrame) -> str:
    """The call as written, without one keyword argument."""
    segment = frame.segment
    parts = [segment(a) for a in call.args] + [
        segment(k) for k in call.keywords if k is not keyword
    ]
    return f"{segment(call.func)}({', '.join(p for p in parts if p)})"


def _read_no_oov(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    call = line.call
    if not isinstance(call, ast.Call):
        return None
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else call.func
    if not isinstance(receiver, ast.Name):
        return None
    site = layer_constructor(receiver.id, line, context)
    if site is None:
        return None
    frame, statement, made, where = site
    keyword = next((k for k in made.keywords if k.arg == "num_oov_indices"), None)
    written = frame.segment(statement)
    if keyword is None or not written or "\n" in written:
        return None
    values = error.group("values").strip()
    name = receiver.id
    rule = (
        f"{code(name)} was made with {code('num_oov_indices=0')} ({where}: {code(written)}), "
        f"so it keeps no index for values its `adapt` never saw, and the line gives it "
        f"{values}, which is not in its vocabulary. With the default "
        f"{code('num_oov_indices=1')} every unseen value shares one index (`[UNK]`, the "
        'first; with `output_mode="one_hot"` one more column): data beyond the training '
        "set (validation, test, new examples) holds such values"
    )
    fixed = rewrite(frame, statement, made, _without_keyword(made, keyword, frame))
    if not fixed or "\n" in fixed or len(fixed) > _MAX_SHOWN:
        return Finding(rule + ".", None)
    return Finding(rule + ".", f"{code(fixed)}, then adapt it again")


NO_OOV_INDEX = ErrorFamily(
    "a value a lookup layer never saw, with no out-of-vocabulary index",
    messages=(Message(_NO_OOV),),
    read=_read_no_oov,
    section=SECTION,
)
