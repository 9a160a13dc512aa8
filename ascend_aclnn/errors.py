"""Exceptions: one class per CANN status code, as pynvml does for NVML.

``AclnnError(status, api, ...)`` returns an instance of the class registered for that
status, so ``except AclnnParamInvalidError`` and ``except AclnnError`` both work, and a
parameter error (161001/161002) is also a ``ValueError``.
"""
from __future__ import annotations

from typing import Any

from .cann.constants import STATUS


class AclnnError(RuntimeError):
    """A CANN call (aclnn*, aclrt*, acl*) returned a non-zero status, or an argument check
    that the operator would make failed before any C call."""

    _by_status: dict[int, type["AclnnError"]] = {}

    def __new__(cls, status: int, api: str, detail: str | None = None,
                recent: str | None = None, argument: str | None = None) -> "AclnnError":
        if cls is AclnnError:
            cls = AclnnError._by_status.get(status, AclnnError)
        return super().__new__(cls)

    def __init__(self, status: int, api: str, detail: str | None = None,
                 recent: str | None = None, argument: str | None = None) -> None:
        self.status: int = int(status)
        self.api: str = api
        self.detail: str | None = detail
        self.recent: str | None = recent or None  # aclGetRecentErrMsg()'s text, when CANN had one
        self.argument: str | None = argument
        super().__init__(self._compose())

    @property
    def status_name(self) -> str:
        return STATUS.get(self.status, (f"UNKNOWN_STATUS_{self.status}", ""))[0]

    @property
    def explanation(self) -> str:
        return STATUS.get(self.status, ("", "status code not in this binding's table"))[1]

    def _compose(self) -> str:
        lines = [f"{self.api} failed: {self.status_name} ({self.status}): {self.explanation}"]
        if self.detail:
            lines.append(f"  {self.argument}: {self.detail}" if self.argument else f"  {self.detail}")
        if self.recent:
            lines.append(f"  CANN says: {self.recent}")
        return "\n".join(lines)

    def __reduce__(self) -> tuple[Any, ...]:
        return (AclnnError, (self.status, self.api, self.detail, self.recent, self.argument))


class AclnnParamError(AclnnError, ValueError):
    """Bad arguments: ACLNN_ERR_PARAM_NULLPTR (161001) or ACLNN_ERR_PARAM_INVALID (161002)."""


# Statuses whose class is also a MemoryError: `except MemoryError` catches running out of
# memory on either backend (the numpy backend raises AclRtMemoryAllocationError too).
_MEMORY_STATUSES = (207001, 200000)  # ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_ERROR_BAD_ALLOC


def _class_name(symbol: str) -> str:
    for prefix, head in (("ACLNN_ERR_", "Aclnn"), ("ACL_ERROR_RT_", "AclRt"), ("ACL_ERROR_", "Acl")):
        if symbol.startswith(prefix):
            words = symbol[len(prefix):].removesuffix("_ERROR").split("_")
            return head + "".join(w.capitalize() for w in words) + "Error"
    raise ValueError(symbol)


def _register_status_classes() -> dict[str, type[AclnnError]]:
    made = {}
    for status, (symbol, explanation) in STATUS.items():
        if status == 0:
            continue
        bases: tuple[type, ...] = (AclnnParamError,) if status in (161001, 161002) else (AclnnError,)
        if status in _MEMORY_STATUSES:  # out of memory, on the device or (numpy backend) the host
            bases += (MemoryError,)
        name = _class_name(symbol)
        assert name not in made, f"two statuses map to the class name {name}"
        made[name] = type(name, bases, {"__doc__": f"{symbol} ({status}): {explanation}.",
                                        "__module__": __name__})
        AclnnError._by_status[status] = made[name]
    return made


globals().update(_register_status_classes())
AclnnParamNullptrError: type[AclnnParamError] = AclnnError._by_status[161001]  # type: ignore[assignment]
AclnnParamInvalidError: type[AclnnParamError] = AclnnError._by_status[161002]  # type: ignore[assignment]


class CannLoadError(OSError):
    """The CANN libraries, or an operator's symbols, could not be found or loaded."""


class DeviceMismatchError(ValueError):
    """A DeviceArray was used with a backend or device other than the one it lives on."""


class PlanMismatchError(ValueError):
    """A plan was run with arguments that differ from the ones it was made for (a shape,
    dtype or attribute value): make a new plan for them."""
