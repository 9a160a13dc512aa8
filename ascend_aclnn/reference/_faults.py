"""Inputs a device kernel would fault on."""
from __future__ import annotations


class KernelFault(ValueError):
    """The arguments pass every check, but the kernel would fault on them on the device
    (for example a mask naming positions outside the input). On the NPU this surfaces at
    the next stream synchronisation; the numpy backend raises the same error there."""
