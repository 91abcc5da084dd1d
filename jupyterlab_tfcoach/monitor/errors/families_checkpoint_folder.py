"""A checkpoint restored from its folder instead of its prefix (issue #25):
``tf.train.Checkpoint(model=net).restore("ckpts")`` after a ``CheckpointManager`` or
``ckpt.save("ckpts/run")`` wrote ``ckpts/ckpt-3.index`` and ``ckpts/ckpt-3.data-...``.

``restore`` and ``read`` take a checkpoint's prefix (``ckpts/ckpt-3``), not the folder
holding it; TensorFlow opens the folder as a file (``DataLossError ... Is a directory``),
or finds no file for a prefix written without its save number (``NotFoundError ...
Failed to find any matching files``). The reading takes the path from the failing call,
checks on disk that the folder (the path, or the folder a numberless prefix lies in)
has the ``checkpoint`` index file that ``save`` keeps, and fixes the call with
``tf.train.latest_checkpoint(folder)``, which reads that index for the newest prefix.
A folder without that file gets no fix: ``latest_checkpoint`` would give None there.
"""

from __future__ import annotations

import ast
import os
import re

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    tf_alias,
)

# Module 3's section on saving and restoring what a model learned.
SECTION = "keras-saving"
_A_FOLDER = re.compile(r"Unable to open table file (?P<path>.+?): .*Is a directory")
_NO_PREFIX = re.compile(r"Failed to find any matching files for (?P<path>\S+)")
_RESTORING = ("restore", "read")
# The index file ``Checkpoint.save`` and ``CheckpointManager.save`` keep beside the
# prefixes: what ``tf.train.latest_checkpoint`` reads.
_INDEX_FILE = "checkpoint"


def _folder_with_index(path: str) -> str | None:
    try:
        return path if os.path.isfile(os.path.join(path, _INDEX_FILE)) else None
    except Exception:
        return None


def _read_checkpoint_folder(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in _RESTORING
        and call.args
        and line.statement is not None
    ):
        return None
    given = call.args[0]
    source = line.frame.segment(given)
    found, path = value_of(given, line.frame, context)
    if isinstance(given, ast.Constant):
        found, path = True, given.value
    if not source or "\n" in source or not found or type(path) is not str:
        return None
    if os.path.normpath(path) != os.path.normpath(error.group("path")):
        return None
    tf = tf_alias(context)
    method = call.func.attr
    is_folder = error.match is not None and error.match.re is _A_FOLDER
    if is_folder:
        folder_written = source
        if _folder_with_index(path) is None:
            return None
        rule = (
            f"`{method}` takes a checkpoint's prefix (the folder and the name its files "
            f"start with, `.../ckpt-3`), and {code(source)} is the folder holding the "
            f"checkpoints ({path!r}), which TensorFlow tried to open as a file"
        )
    else:
        folder = os.path.dirname(path)
        if not folder or _folder_with_index(folder) is None:
            return None
        folder_written = repr(folder)
        rule = (
            f"no checkpoint has the prefix {code(source)} ({path!r}): `save` adds the "
            f"save number to the prefix it is given (`{os.path.basename(path)}-1`, "
            f"`{os.path.basename(path)}-2`, ...), so {code(source)} names no file"
        )
    rule += (
        f"; `{tf}.train.latest_checkpoint(folder)` reads the folder's `checkpoint` file and "
        "gives the newest prefix (a CheckpointManager's `latest_checkpoint` gives the same)"
    )
    fixed = rewrite(
        line.frame, line.statement, given, f"{tf}.train.latest_checkpoint({folder_written})"
    )
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix)


CHECKPOINT_FOLDER = ErrorFamily(
    "a checkpoint restored from its folder, not its prefix",
    messages=(Message(_A_FOLDER), Message(_NO_PREFIX)),
    read=_read_checkpoint_folder,
    section=SECTION,
)
