"""One policy for reading what a value is (``errors/context.py``: ``class_mro``,
``value_kind``, ``kind_of``, ``instance_attribute``): classes whose metaclass is the
user's are not read at all, properties never run."""

from __future__ import annotations

import abc
from typing import ClassVar

from jupyterlab_tfcoach.monitor.errors.context import (
    class_mro,
    instance_attribute,
    kind_of,
    value_kind,
)


class Pretended:
    """A base the hostile metaclass claims (a library class, in a real attack)."""


class _Recording(type):
    calls: ClassVar[list[str]] = []

    def mro(cls) -> list[type]:  # type: ignore[override]
        return [cls, Pretended, object] if cls.__name__ == "Claimed" else super().mro()

    def __getattribute__(cls, name: str) -> object:
        _Recording.calls.append(name)
        return super().__getattribute__(name)


class Claimed(metaclass=_Recording):
    @property
    def __dict__(self) -> dict[str, object]:  # type: ignore[override]
        raise RuntimeError("a user property ran")


class Plain:
    def __init__(self) -> None:
        self.kept = 1

    @property
    def shape(self) -> object:
        raise RuntimeError("a user property ran")


class Abstract(abc.ABC):  # noqa: B024 (an ABCMeta class with no abstract method)
    pass


def test_a_user_metaclass_is_not_read() -> None:
    _Recording.calls.clear()
    value = Claimed()
    assert class_mro(value) == ()
    assert value_kind(value) is None and kind_of(value) is None
    assert instance_attribute(value, "anything") == (False, None)
    # Neither the metaclass's attribute hook nor the class's properties ran.
    assert _Recording.calls == []


def test_plain_and_abc_classes_are_read_without_their_properties() -> None:
    value = Plain()
    assert class_mro(value) == (Plain, object)
    assert instance_attribute(value, "kept") == (True, 1)
    assert instance_attribute(value, "shape") == (False, None)
    assert class_mro(Abstract()) == (Abstract, abc.ABC, object)
    assert value_kind(value) is None and kind_of(3) is None
