"""The golden reference: one plain NumPy function per operator, the math as the Atlas
A2/A3 kernels do it, written to be checked by eye against the operator's documentation.

A module per operator family. Arguments come in the aclnn parameter order without the
outputs; the result is the output, or a tuple of outputs. The kernels' arithmetic is kept
exactly: float32 index arithmetic where they use it, float32 sums in the order the kernel
adds, 16-bit inputs computed in float32 and rounded once. These functions are what the
operator descriptions name as their reference (so what compare, gradcheck and the tests
take as golden); the numpy backend runs faster kernels of the same arithmetic
(ascend_aclnn/backends/numpy/), checked against these bit for bit. Nothing here imports
from the rest of the package: only NumPy, ml_dtypes and this package's own modules.

**The contract** every operator's function keeps, reference and fast kernel alike (the
numpy backend checks it on every call and raises ReferenceContractError naming the
operator, so a broken function fails at its source, not deep inside a later step):

- it takes the operator's converted arguments in C order (tensors as NumPy arrays, which
  may be strided views and must not be written), and returns one result per output, a
  tuple when the operator has several (None for an output its ``required_by`` flag turned
  off);
- each result is a NumPy ndarray, **C-contiguous**, of exactly the shape and dtype the
  description's ``infer`` gives (the backend casts it to the dtype of an ``out=`` array,
  never the function);
- each result is **its own memory**: it shares none with an input (they may be the
  caller's arrays, and a result may become the caller's) nor with another result. A
  result the function keeps no reference to may be handed to the caller as it is.
"""
from __future__ import annotations

import importlib
import pkgutil



class ReferenceContractError(RuntimeError):
    """An operator's NumPy function returned what the contract above forbids: a bug in
    that function (or in a fast kernel), never in the caller's arguments."""


# One module per family (ascend_aclnn/ops/__init__.py defines the word), found by a scan;
# modules starting with "_" are shared helpers.
FAMILIES = tuple(importlib.import_module(f"{__name__}.{m.name}") for m in pkgutil.iter_modules(__path__)
                 if not m.name.startswith("_"))
# Every public function of the families, by name: a new operator's function, or a new
# family module, is found here with no edit.
__all__ = sorted(name for m in FAMILIES for name, fn in vars(m).items()
                 if callable(fn) and getattr(fn, "__module__", None) == m.__name__ and not name.startswith("_"))
globals().update({name: fn for m in FAMILIES for name, fn in vars(m).items() if name in __all__})
