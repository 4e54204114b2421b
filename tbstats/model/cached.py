"""A computed attribute kept on its instance, computed without a lock shared by every instance.

Python 3.11's :func:`functools.cached_property` computes under one lock per attribute of the class, shared by
every instance: two threads working on different views of one batch (``compute(..., workers=2)``) waited on
each other whenever both computed, say, their own ``Dense.games``, a compiled pass of milliseconds. This one
takes no lock: the value is computed and set in the instance's ``__dict__``, after which Python reads it from
there without calling the descriptor again (as :func:`functools.cached_property` does from Python 3.12 on).
Two threads asking one instance at once may both compute it; the values are pure, so either serves.

>>> class Square:
...     def __init__(self, n):
...         self.n = n
...     @cached_property
...     def value(self):
...         print("computed")
...         return self.n * self.n
>>> s = Square(3)
>>> s.value
computed
9
>>> s.value
9
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class cached_property(Generic[T]):
    """Like :func:`functools.cached_property`, without its lock (see the module's text)."""

    def __init__(self, func: Callable[[Any], T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> cached_property[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> T | cached_property[T]:
        if instance is None:
            return self
        value = self.func(instance)
        instance.__dict__[self.name] = value   # (a frozen dataclass too: its __setattr__ is not involved)
        return value
