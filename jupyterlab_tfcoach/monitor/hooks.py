"""Hooks on TensorFlow's and Keras's methods: installed on their classes, restored exactly.

The monitor sees what happens inside a cell by replacing a few methods of the libraries'
classes with wrappers that call the original: ``Function.__init__``/``__call__``
(``traces/registry.py``), ``AutoTrackable.__setattr__`` and Keras ``Layer.__setattr__``
(``variables/attribute_hook.py``), ``GradientTape.gradient``
(``variables/tape_gradients.py``), ``BaseOptimizer._filter_empty_gradients``
(``variables/stopped_learning.py``), Keras 3's ``fit``/``evaluate``/``predict``
(``training/fit_watch.py``), the helpers of Keras's ``clone_model`` (on their module,
``training/fit_config.py``), tf.data's ``OwnedIterator.__next__`` and ``__init__`` and
``StructuredFunctionWrapper.__init__`` (``symptoms/datasets.py``), ``ResourceVariable``'s
``assign_sub``/``assign_add`` (``symptoms/float16_updates.py``). ``MethodHooks`` does the
installing and restoring for all of them, the same way:

- the original is the method the class itself defines (its own ``__dict__``: nothing
  inherited, no descriptor run); a class that does not define it is not hooked;
- each hook carries ``HOOK_MARK`` pointing at the original it wraps, so installing again
  (a monitor loaded a second time, or after an unload that could not restore) wraps the
  original, never a hook of ours;
- restoring puts the original back only while our hook is still the class's attribute:
  if something else wrapped the method since, its wrapper (which calls ours) stays;
- a class that refuses the assignment is left as it is (``install`` says False).

What a hook does is its watcher's: the function ``make_hook(original)`` returns must run
the original exactly once with the arguments it got, catch every exception of its own
work, and set ``__tracebackhide__`` (IPython leaves such frames out of the user's
tracebacks). Nothing here imports TensorFlow (the classes come from ``sys.modules``, see
``tftypes.loaded_class``) or keeps anything of the user's: only the libraries' classes
and their original methods.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Set on every hook we install, pointing at the original it wraps.
HOOK_MARK = "__tfcoach_original__"

HookMaker = Callable[[Any], Callable[..., Any]]


def original_method(owner: type, name: str) -> Any | None:
    """The method ``owner`` itself defines under ``name``, or the original a hook of ours
    there wraps; None when the class does not define it."""
    try:
        current = owner.__dict__.get(name)
    except Exception:
        return None
    if current is None:
        return None
    return getattr(current, HOOK_MARK, current)


@dataclass(frozen=True)
class InstalledHook:
    owner: type
    name: str
    original: Any

    def restore(self) -> None:
        """Put the original back, if our hook is still the one there."""
        try:
            if getattr(self.owner.__dict__.get(self.name), HOOK_MARK, None) is self.original:
                setattr(self.owner, self.name, self.original)
        except Exception:
            pass


class MethodHooks:
    """The hooks one watcher installed, restored together."""

    def __init__(self) -> None:
        self._installed: list[InstalledHook] = []

    def install(self, owner: type, name: str, make_hook: HookMaker) -> bool:
        """Replace ``owner.<name>`` with ``make_hook(original)``; False when the class does
        not define the method itself or refuses the new one."""
        original = original_method(owner, name)
        if original is None:
            return False
        hook = functools.wraps(original)(make_hook(original))
        setattr(hook, HOOK_MARK, original)
        try:
            setattr(owner, name, hook)
        except Exception:
            return False
        self._installed.append(InstalledHook(owner, name, original))
        return True

    def restore(self) -> None:
        """Restore every hook installed here (see ``InstalledHook.restore``)."""
        installed, self._installed = self._installed, []
        for hook in installed:
            hook.restore()

    def __bool__(self) -> bool:
        return bool(self._installed)
