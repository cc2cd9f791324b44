"""Values that must never leave the head: the hidden truth, and anything derived
from it per task (a score record holds the error and the coverage, which give the
truth away). They refuse every way of being copied out of the process (pickle, and
so Ray's cloudpickle) and print as `<redacted>`, so a stray log line, a traceback or
an object sent to a worker cannot carry them off."""

from __future__ import annotations

from typing import Any, NoReturn


class Sealed:
    """Mixin: no pickling, a redacted repr; copies are the object itself (immutable)."""

    __slots__ = ()

    def _refuse(self) -> NoReturn:
        raise TypeError(
            f"{type(self).__name__} must not be pickled or sent anywhere: it holds hidden "
            "truth and stays in the head process"
        )

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        self._refuse()

    def __reduce__(self) -> NoReturn:
        self._refuse()

    def __getstate__(self) -> NoReturn:
        self._refuse()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(<redacted>)"

    __str__ = __repr__

    def __copy__(self) -> Any:
        return self

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Any:
        return self
