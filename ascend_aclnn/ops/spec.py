"""How an operator is described.

One ``OpSpec`` per aclnn operator: its aclnn name and its parameters' kinds, in C order.
That one description gives the C prototype of the first phase, the Python signature and
docstring, the argument conversion and validation (identical on every backend), and the
list of operators the tests iterate over.
"""
from __future__ import annotations

import ctypes
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, NamedTuple, Optional, Sequence

import numpy as np

from ..cann.constants import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, AclFormat
from ..cann.prototypes import SCALAR_CTYPES, handle
from ..errors import AclnnError
from ..tensors import (ACL_DTYPES, ArrayLike, DeviceArray, acl_dtype_problem, bfloat16, dtype_name, host_view,
                       may_overlap, record_given, size_problem)


def describe(value: Any) -> str:
    """How a given value reads in an error message."""
    if isinstance(value, (np.ndarray, DeviceArray)):
        return f"{type(value).__name__} of shape {tuple(value.shape)} and dtype {dtype_name(value.dtype)}"
    if not isinstance(value, (str, bytes)) and hasattr(value, "shape") and hasattr(value, "dtype"):
        try:  # another library's array (a torch tensor, ...): its metadata, not its values
            shape = tuple(value.shape)
        except TypeError:
            shape = None
        if shape is not None:
            kind = f"{type(value).__module__.split('.')[0]}.{type(value).__name__}"
            device = getattr(value, "device", None)
            return f"{kind} of shape {shape} and dtype {value.dtype}" + (f" on {device}" if device is not None else "")
    text = repr(value)  # a message line, not a dump: a tuple of arrays or a long list is cut
    return f"{type(value).__name__} {text if len(text) <= 120 else text[:100] + ' ... ' + text[-15:]}"


def dtype_list(dtypes: Sequence[np.dtype[Any]]) -> str:
    names = [dtype_name(d) for d in dtypes]
    if not names:
        return "any dtype"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


class Checker:
    """Raises the error the operator's first phase would return, before any C call."""

    def __init__(self, api: str):
        self.api = api

    def fail(self, argument: str, detail: str, status: int = ACLNN_ERR_PARAM_INVALID) -> None:
        raise AclnnError(status, self.api, detail, argument=argument)

    def mismatch(self, argument: str, expected: str, got: str, status: int = ACLNN_ERR_PARAM_INVALID) -> None:
        self.fail(argument, f"expected {expected}, got {got}", status)

    def dtype(self, argument: str, t: "TensorArg", allowed: Sequence[np.dtype[Any]]) -> None:
        """The op_api's dtype-list check."""
        if t.dtype not in allowed:
            self.mismatch(argument, f"dtype {dtype_list(allowed)}", dtype_name(t.dtype))

    def same_dtype(self, argument: str, t: "TensorArg", of: str, reference: "TensorArg") -> None:
        """The op_api's check that a tensor has the dtype of another."""
        if t.dtype != reference.dtype:
            self.mismatch(argument, f"dtype {dtype_name(reference.dtype)} (the dtype of {of})", dtype_name(t.dtype))


class TensorArg(NamedTuple):
    """A tensor argument after conversion: the user's object plus its metadata.
    ``given`` is False for an output the binding will allocate itself."""
    value: Optional[ArrayLike]
    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    given: bool = True

    @property
    def ndim(self) -> int:
        return len(self.shape)


@dataclass(frozen=True)
class Param:
    name: str
    c_name: str
    doc: str = ""
    # None passes as a C NULL and CANN decides (raw operators: their headers do not say
    # which pointers are optional).
    nullable: bool = False

    # Plain class attributes, not dataclass fields: kinds override them.
    pointer = False          # a NULL here is ACLNN_ERR_PARAM_NULLPTR (unless nullable)
    default = inspect.Parameter.empty
    type_hint = "Any"        # source text, for signatures and the generated operators module

    @property
    def ctype(self) -> Any:
        return handle

    def convert(self, value: Any, check: Checker) -> Any:
        return value

    def kind_doc(self) -> str:
        return ""


_ARRAYS = "a NumPy array or DeviceArray (or a CPU torch tensor or DLPack host array)"

# np.asarray drops a masked array's mask: computing on the masked-out values would be a
# silently wrong answer (and an out= would keep its old mask over the new values).
_MASKED = ("expected a NumPy array or DeviceArray, got a numpy.ma.MaskedArray, whose mask the operator "
           "would ignore; pass x.filled(value) (or x.data to use the masked-out values too)")


@dataclass(frozen=True)
class Tensor(Param):
    """An input aclTensor. ``acl_format`` is the format the official examples pass.
    ``contiguous``: the kernel reads the raw storage, so a strided view would be read
    wrongly on the NPU; such an argument must be C-contiguous (a DeviceArray always is).
    ``written``: the operator writes it (a caller-provided output of a raw operator, or an
    in-place one): a NumPy array is written back after the call, and the call returns it.
    ``read``: False for a write-only one, whose NumPy contents are not uploaded."""
    dtypes: tuple[Any, ...] = ()
    acl_format: Optional[AclFormat] = AclFormat.ACL_FORMAT_ND  # None: by rank (format_for_rank)
    contiguous: bool = False
    written: bool = False
    read: bool = True
    pointer = True
    type_hint = "TensorLike"

    def convert(self, value: Any, check: Checker, label: Optional[str] = None) -> TensorArg:
        name = label or self.name
        if self.written:
            return Output.convert(self, value, check, name)  # type: ignore[arg-type]
        if type(value) is not np.ndarray and not isinstance(value, DeviceArray):
            if isinstance(value, np.ma.MaskedArray):
                check.fail(name, _MASKED)
            try:
                host = host_view(value)  # a CPU torch tensor or a DLPack producer: a NumPy view
            except TypeError as exc:
                check.fail(name, str(exc))
            if host is not None:
                value = host
            else:
                try:
                    value = np.asarray(value)
                except Exception:
                    check.fail(name, f"expected {_ARRAYS}, got {describe(value)}")
                if value.dtype == object:
                    check.fail(name, f"expected a numeric array, got an object array from {type(value).__name__} "
                                     "(object (|O) has no ACL data type)")
        if value.dtype not in ACL_DTYPES:
            check.fail(name, acl_dtype_problem(value.dtype) or f"{value.dtype} has no ACL data type")
        if not isinstance(value, DeviceArray):
            if self.contiguous and not value.flags.c_contiguous:
                check.fail(name, "expected a C-contiguous array (the operator reads its raw bytes), "
                                 f"got a strided view with strides {value.strides}")
        return TensorArg(value, tuple(value.shape), np.dtype(value.dtype))

    def kind_doc(self) -> str:
        layout = ", C-contiguous" if self.contiguous else ""
        role = ", written by the operator" if self.written else ""
        fmt = self.acl_format.name if self.acl_format is not None else "the format of its rank"
        return f"tensor ({dtype_list(self.dtypes)}; passed as {fmt}{layout}{role})"


@dataclass(frozen=True)
class Output(Tensor):
    """An output aclTensor: allocated by the binding, or given with ``out=``.

    ``required_by``: the name of a bool parameter; when it is False the output is not
    computed and is returned as None. The C call still gets a tensor (the op_api requires
    the pointer), a scratch one, so an ``out=`` array for it is never touched.
    ``zero_fill``: the NPU leaves part of this output unwritten (a padding tail, or all of
    it for an empty input); the binding zero-fills it first so results are reproducible.
    True, or a predicate on the call's Args for the calls that need it.
    """
    required_by: Optional[str] = None
    zero_fill: Any = False  # bool, or Callable[[Args], bool]

    def needs_zero_fill(self, a: "Args") -> bool:
        return bool(self.zero_fill(a) if callable(self.zero_fill) else self.zero_fill)

    def convert(self, value: Any, check: Checker, label: Optional[str] = "out") -> TensorArg:
        label = label or "out"
        if not isinstance(value, (np.ndarray, DeviceArray)):
            try:
                host = host_view(value, writable=True)  # a CPU torch tensor or DLPack producer, written in place
            except TypeError as exc:
                check.fail(label, str(exc))
            if host is None:
                check.fail(label, f"expected {_ARRAYS} to write into, got {describe(value)}")
            value = host
        elif isinstance(value, np.ndarray):
            record_given(value)  # returned as given, even beside torch arguments
        if isinstance(value, np.ndarray) and not value.flags.writeable:
            check.fail(label, "expected a writeable array, got a read-only one")
        if isinstance(value, np.ma.MaskedArray):
            check.fail(label, _MASKED)
        if value.dtype not in ACL_DTYPES:
            check.fail(label, acl_dtype_problem(value.dtype) or f"{value.dtype} has no ACL data type")
        return TensorArg(value, tuple(value.shape), np.dtype(value.dtype))


def cast_lists(params: Sequence[Param], raw: dict[str, Any], a: "Args", check: Checker) -> None:
    """The one rule for Python lists (and tuples) given for tensor parameters: they take the
    dtype of the call's first tensor argument given as an array (NumPy, DeviceArray, torch,
    DLPack), so ``gamma=[1.0] * C`` is float16 beside a float16 ``x`` rather than float64.
    Arrays are never cast. A list whose values that dtype cannot hold exactly as the same
    kind (floats for an int8 tensor, 300 for uint8) keeps NumPy's own dtype, which the
    operator's dtype check then names, or is refused here when only the range is wrong."""
    tensors = [p for p in params if isinstance(p, Tensor) and not p.written]
    lists = [p for p in tensors if isinstance(raw[p.name], (list, tuple)) and isinstance(a[p.name], TensorArg)]
    if not lists:
        return
    first = next((p for p in tensors if p not in lists and isinstance(a[p.name], TensorArg)), None)
    if first is None:
        return
    like = a[first.name].dtype
    for p in lists:
        t = a[p.name]
        if t.dtype == like or not (np.can_cast(t.dtype, like, "same_kind") or t.dtype.kind + like.kind == "iu"):
            continue
        with np.errstate(over="ignore", invalid="ignore"):
            cast = t.value.astype(like)
        if like.kind in "iub" and not np.array_equal(cast, t.value):
            check.fail(p.name, f"expected values that {dtype_name(like)} can hold (a list takes the dtype of "
                               f"{first.name}), got {describe(raw[p.name])}")
        a[p.name] = TensorArg(cast, t.shape, like)


def format_for_rank(ndim: int) -> int:
    """torch_npu's format for a tensor of a rank: NCL for 3-D, NCHW for 4-D, NCDHW for 5-D,
    ND otherwise (what raw operators pass, as torch_npu does for every aclnn call)."""
    return int({3: AclFormat.ACL_FORMAT_NCL, 4: AclFormat.ACL_FORMAT_NCHW,
                5: AclFormat.ACL_FORMAT_NCDHW}.get(ndim, AclFormat.ACL_FORMAT_ND))


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


@dataclass(frozen=True)
class IntArray(Param):
    """An aclIntArray (int64 values). ``repeat_int``: the number of values a single int
    stands for, where PyTorch takes an int for this parameter (``_pair``'s (n, n) for a
    kernel size, nn.ReplicationPad2d's four pads, F.interpolate's size of a 1-d input); it
    is expanded before any check, so the messages show what the operator received; 0: a
    sequence only. ``pair=True`` is ``repeat_int=2``. ``default``: a keyword default (a
    tuple, so that calls using it keep their cached validation)."""
    pair: bool = False
    repeat_int: int = 0
    default: Any = inspect.Parameter.empty
    pointer = True

    @property
    def int_repeats(self) -> int:
        """How many values an int given for this parameter becomes (0: an int is refused)."""
        return self.repeat_int or (2 if self.pair else 0)

    @property
    def type_hint(self) -> str:  # type: ignore[override]
        return "Union[int, Sequence[int]]" if self.int_repeats else "Sequence[int]"

    def convert(self, value: Any, check: Checker) -> tuple[int, ...]:
        if self.int_repeats and _is_int(value):
            value = (value,) * self.int_repeats
        elif isinstance(value, np.ndarray) and value.ndim == 1 and np.issubdtype(value.dtype, np.integer):
            value = value.tolist()
        if not isinstance(value, (list, tuple)) or not all(_is_int(v) for v in value):
            what = "an int or a sequence of ints" if self.int_repeats else "a sequence of ints"
            check.fail(self.name, f"expected {what}, got {describe(value)}")
        ints = tuple(int(v) for v in value)
        if any(not -2**63 <= v < 2**63 for v in ints):
            check.fail(self.name, f"expected int64 values, got {ints}")
        return ints

    def kind_doc(self) -> str:
        if not self.int_repeats:
            return "sequence of int (aclIntArray)"
        means = "[n]" if self.int_repeats == 1 else "(" + ", ".join(["n"] * self.int_repeats) + ")"
        return f"int or sequence of int (aclIntArray; an int n means {means})"


@dataclass(frozen=True)
class TensorList(Param):
    """An aclTensorList: a list or tuple of arrays (each converted as a Tensor, with the
    same ``written`` meaning). The C list owns its element handles, so they are made for
    each call, never taken from the handles cached on device blocks."""
    acl_format: Optional[AclFormat] = None
    written: bool = False
    read: bool = True
    pointer = True
    type_hint = "Sequence[TensorLike]"

    def convert(self, value: Any, check: Checker) -> "TensorListArg":
        if not isinstance(value, (list, tuple)):
            check.fail(self.name, f"expected a list or tuple of arrays (aclTensorList), got {describe(value)}")
        element = Tensor(self.name, self.c_name, written=self.written, read=self.read)
        for i, v in enumerate(value):
            if isinstance(v, (list, tuple)):  # NumPy would stack it into one tensor: a list inside the list
                check.fail(f"{self.name}[{i}]", f"expected an array (one tensor of the aclTensorList), got a "
                                                f"{type(v).__name__} of {len(v)} items; a nested list is not a tensor "
                                                "here")
            if v is None:  # CANN's op_apis read every item (several before any NULL check)
                check.fail(f"{self.name}[{i}]", "expected an array (one tensor of the aclTensorList), got None; "
                                                "an aclTensorList cannot hold a NULL tensor here")
        return TensorListArg(tuple(element.convert(v, check, f"{self.name}[{i}]") for i, v in enumerate(value)))

    def kind_doc(self) -> str:
        return "sequence of arrays (aclTensorList" + (", written by the operator)" if self.written else ")")


class TensorListArg(NamedTuple):
    """A converted aclTensorList argument."""
    items: tuple[TensorArg, ...]

    @property
    def value(self) -> list[Any]:
        return [t.value for t in self.items]


@dataclass(frozen=True)
class ScalarValue:
    """An aclScalar with an explicit dtype: ``ascend_aclnn.Scalar(2, np.float16)``. Plain
    Python numbers follow torch_npu's rule (bool -> BOOL, int -> INT64, float -> DOUBLE,
    complex -> COMPLEX128), and a NumPy scalar keeps its dtype.

    ``value`` is a number (bool, int, float, complex or a NumPy scalar) of a kind the dtype
    holds: bool < integer < floating < complex, each kind taking the ones before it
    (``Scalar(True, np.float32)``, ``Scalar(2, np.float16)``). Anything else (a float for an
    integer or bool dtype, a complex for a real one, None, a str, a list, a 0-d array...) is
    refused by the call with ACLNN_ERR_PARAM_INVALID before any C call, as is a value the
    dtype's range cannot hold: nothing is converted into some other number."""
    value: Any
    dtype: Any

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", np.dtype(self.dtype))


_SCALAR_DEFAULTS = ((bool, np.dtype(np.bool_)), (int, np.dtype(np.int64)), (float, np.dtype(np.float64)),
                    (complex, np.dtype(np.complex128)))


# The kinds of number, in the order in which each holds the ones before it.
_KIND_NAMES = ("a bool", "a bool or an int", "a bool, an int or a float", "a bool, an int, a float or a complex")


def _number_kind(dtype: np.dtype[Any]) -> Optional[int]:
    """0 bool, 1 integer, 2 floating (bfloat16 too), 3 complex; None for any other dtype."""
    if dtype == bfloat16:
        return 2
    return {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}.get(dtype.kind)


def _value_kind(value: Any) -> Optional[int]:
    """The kind of a Python number or NumPy scalar (as _number_kind); None for anything else
    (None, a str, a list, an array, a Fraction...)."""
    if isinstance(value, np.generic):
        return _number_kind(value.dtype)
    if isinstance(value, bool):
        return 0
    return next((k for k, t in ((1, int), (2, float), (3, complex)) if isinstance(value, t)), None)


def scalar_bytes(value: Any, check: Checker, name: str) -> tuple[int, bytes]:
    """(ACL dtype, the value's bytes in it) for an aclScalar argument, or a parameter error."""
    if isinstance(value, ScalarValue):
        dtype, raw = value.dtype, value.value
    elif isinstance(value, np.generic):
        dtype, raw = value.dtype, value
    else:
        dtype = next((d for t, d in _SCALAR_DEFAULTS if type(value) is t or (t is not bool and type(value) is not bool
                                                                            and isinstance(value, t))), None)
        raw = value
        if dtype is None:
            check.fail(name, f"expected a number (bool, int, float, complex, a NumPy scalar or "
                             f"ascend_aclnn.Scalar(value, dtype)) for an aclScalar, got {describe(value)}")
    if dtype not in ACL_DTYPES:
        check.fail(name, f"expected an aclScalar dtype, got {acl_dtype_problem(dtype)}")
    # NumPy would turn a value of the wrong kind into another number (a list's first item,
    # None into NaN, "False" into True, a complex without its imaginary part) or into bytes
    # of another size ([] is none): only numbers of a kind the dtype holds go on.
    kind, holds = _value_kind(raw), _number_kind(dtype)
    if kind is None or holds is None or kind > holds:
        what = "a number (bool, int, float, complex or a NumPy scalar)" if kind is None else _KIND_NAMES[holds or 0]
        check.fail(name, f"expected {what} for an aclScalar of dtype {dtype_name(dtype)} (a value of another kind "
                         f"is never converted), got {_shown(raw)}")
    if isinstance(raw, (bool, np.bool_)) and dtype.kind not in "b":
        raw = int(raw)
    if dtype.kind in "iu" and isinstance(raw, int) and not np.iinfo(dtype).min <= raw <= np.iinfo(dtype).max:
        # checked here: NumPy 1.x wraps it with a DeprecationWarning where 2.x raises
        check.fail(name, f"expected a value that {dtype_name(dtype)} can hold, got {describe(raw)}")
    try:
        with np.errstate(all="raise"):
            converted = np.array(raw, dtype=dtype)
        if dtype.kind in "iu" and converted.item() != raw:
            raise OverflowError
        if dtype.kind in "fcV" and not np.isfinite(converted) and np.isfinite(raw):  # ml_dtypes casts never raise
            raise OverflowError
    except (OverflowError, ValueError, TypeError, FloatingPointError):
        check.fail(name, f"expected a value that {dtype_name(dtype)} can hold, got {_shown(raw)}")
    return int(ACL_DTYPES[dtype]), converted.tobytes()


def _shown(value: Any) -> str:
    """A scalar as an error message shows it: a NumPy scalar by its type and value."""
    if isinstance(value, np.generic):
        return f"{type(value).__module__.split('.')[0]}.{type(value).__name__} {value}"
    return describe(value)


@dataclass(frozen=True)
class HostValue(Param):
    """A handle made from host values for each call and destroyed after it: aclScalar,
    aclScalarList, aclFloatArray or aclBoolArray (``c_kind``). The converted value is a
    hashable tuple that ``create`` turns into the handle."""
    c_kind: str = "aclScalar"
    pointer = True

    @property
    def type_hint(self) -> str:  # type: ignore[override]
        return {"aclScalar": "Any", "aclScalarList": "Sequence[Any]", "aclFloatArray": "Sequence[float]",
                "aclBoolArray": "Sequence[bool]"}[self.c_kind]

    @property
    def destroy_name(self) -> str:
        return "aclDestroy" + self.c_kind[3:]

    def convert(self, value: Any, check: Checker) -> tuple[Any, ...]:
        kind = self.c_kind
        if kind == "aclScalar":
            return scalar_bytes(value, check, self.name)
        if isinstance(value, np.ma.MaskedArray):
            check.fail(self.name, f"expected a list, tuple or 1-D array for an {kind}, got a numpy.ma.MaskedArray, "
                                  "whose mask C would ignore; pass x.filled(value)")
        if not isinstance(value, (list, tuple)) and not (isinstance(value, np.ndarray) and value.ndim == 1):
            check.fail(self.name, f"expected a list, tuple or 1-D array for an {kind}, got {describe(value)}")
        if kind == "aclScalarList":  # the items of an array are NumPy scalars: they keep its dtype
            return tuple(scalar_bytes(v, check, f"{self.name}[{i}]") for i, v in enumerate(value))
        items = list(value.tolist() if isinstance(value, np.ndarray) else value)
        if kind == "aclBoolArray":
            if not all(isinstance(v, (bool, np.bool_)) for v in items):
                check.fail(self.name, f"expected bools for an aclBoolArray, got {describe(value)}")
            return tuple(bool(v) for v in items)
        reals = [v for v in items if isinstance(v, (int, float, np.integer, np.floating))
                 and not isinstance(v, (bool, np.bool_))]
        if len(reals) != len(items):
            check.fail(self.name, f"expected real numbers for an aclFloatArray, got {describe(value)}")
        floats = tuple(float(v) for v in reals)
        big = [v for v in floats if abs(v) > FLOAT32_MAX and v == v and abs(v) != float("inf")]
        if big:
            check.fail(self.name, f"expected values within float32's range (the C type is float), got {big[0]!r}")
        return floats

    def create(self, cann: Any, value: tuple[Any, ...]) -> int:
        """The C handle for a converted value (0 when CANN returns NULL)."""
        kind = self.c_kind
        if kind == "aclScalar":
            return _create_scalar(cann, value)
        if kind == "aclFloatArray":
            return int(cann.function("aclCreateFloatArray")((ctypes.c_float * len(value))(*value), len(value)) or 0)
        if kind == "aclBoolArray":
            return int(cann.function("aclCreateBoolArray")((ctypes.c_bool * len(value))(*value), len(value)) or 0)
        scalars = [_create_scalar(cann, v) for v in value]
        if not all(scalars):
            for h in scalars:
                if h:
                    cann.function("aclDestroyScalar")(h)
            return 0
        h = int(cann.function("aclCreateScalarList")((ctypes.c_void_p * len(scalars))(*scalars), len(scalars)) or 0)
        if not h:  # no list took ownership of the elements: they are ours to destroy
            for s in scalars:
                cann.function("aclDestroyScalar")(s)
        return h

    def kind_doc(self) -> str:
        return self.c_kind


FLOAT32_MAX = float(np.finfo(np.float32).max)


def _create_scalar(cann: Any, value: tuple[int, bytes]) -> int:
    dtype, raw = value
    buf = ctypes.create_string_buffer(raw, max(len(raw), 1))  # the value is copied into the aclScalar
    return int(cann.function("aclCreateScalar")(buf, dtype) or 0)


@dataclass(frozen=True)
class DataType(Param):
    """An aclDataType: a NumPy dtype (or anything np.dtype accepts, e.g. "float16")."""
    type_hint = "Any"

    @property
    def ctype(self) -> Any:
        return ctypes.c_int

    def convert(self, value: Any, check: Checker) -> int:
        if value is None:  # np.dtype(None) is float64: never what a None meant here
            check.fail(self.name, "expected a dtype (aclDataType, an enum passed by value: it has no NULL), got None")
        try:
            dtype = np.dtype(value)
        except TypeError:
            check.fail(self.name, f"expected a dtype (aclDataType), got {describe(value)}")
        problem = acl_dtype_problem(dtype)
        if problem is not None:
            check.fail(self.name, f"expected a dtype with an ACL data type, got {problem}")
        return int(ACL_DTYPES[dtype])

    def kind_doc(self) -> str:
        return "dtype (aclDataType)"


_INT_RANGES = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_UINT_BITS = {"uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}


@dataclass(frozen=True)
class Scalar(Param):
    """A by-value C parameter: double, float, bool, int8/16/32/64, uint64 or string
    (char*, None allowed)."""
    c_kind: str = "double"
    default: Any = inspect.Parameter.empty

    @property
    def ctype(self) -> Any:
        return SCALAR_CTYPES[self.c_kind]

    @property
    def type_hint(self) -> str:  # type: ignore[override]
        if self.c_kind == "string":
            return "Optional[str]"
        return {"double": "float", "float": "float", "bool": "bool"}.get(self.c_kind, "int")

    def convert(self, value: Any, check: Checker) -> Any:
        kind = self.c_kind
        if kind in ("double", "float") and isinstance(value, (int, float, np.integer, np.floating)) \
                and not isinstance(value, (bool, np.bool_)):
            try:
                real = float(value)
            except OverflowError:  # an int past float64's range
                check.fail(self.name, f"expected a real number within the range of a C double, got an int "
                                      f"of {len(str(abs(value)))} digits")
            if kind == "float" and abs(real) > FLOAT32_MAX and real == real and abs(real) != float("inf"):
                check.fail(self.name, f"expected a value within float32's range (the C type is float), got {real!r}")
            return real
        # A C bool takes True/False, and the ints 0 and 1 (ceil_mode=1, as PyTorch code writes it):
        # any other value (2, -1, 0.0, None, "True") is more likely a misplaced argument.
        if kind == "bool" and (isinstance(value, (bool, np.bool_)) or (_is_int(value) and value in (0, 1))):
            return bool(value)
        if kind in _INT_RANGES and _is_int(value) and -2**(_INT_RANGES[kind] - 1) <= value < 2**(_INT_RANGES[kind] - 1):
            return int(value)
        if kind in _UINT_BITS and _is_int(value) and 0 <= value < 2**_UINT_BITS[kind]:
            return int(value)
        if kind == "string" and (value is None or isinstance(value, str)):
            if value is not None:
                try:
                    value.encode("utf-8")  # what C receives
                except UnicodeEncodeError as exc:
                    check.fail(self.name, f"expected a str that UTF-8 can encode, got one with "
                                          f"{value[exc.start:exc.end]!a} at position {exc.start} ({exc.reason})")
                if "\0" in value:  # C would stop reading there: the rest silently dropped
                    check.fail(self.name, f"expected a str without NUL characters (C reads a char* up to the "
                                          f"first), got {value!r} with one at position {value.index(chr(0))}")
            return value
        expected = {"double": "a real number", "float": "a real number", "bool": "a bool (or the int 0 or 1)",
                    "string": "a str or None"}.get(kind, f"a {kind}" if kind.startswith("u") else f"an {kind}")
        check.fail(self.name, f"expected {expected}, got {describe(value)}")

    def kind_doc(self) -> str:
        if self.c_kind == "bool":
            return f"bool ({self.c_name}; True/False or 0/1)"
        return f"{self.c_kind} ({self.c_name})"


def Double(name: str, c_name: str, default: Any = inspect.Parameter.empty, doc: str = "") -> Scalar:
    return Scalar(name, c_name, doc, c_kind="double", default=default)


class Args(dict[str, Any]):
    """Converted arguments by Python name; ``outputs`` (a TensorArg per output) is an
    attribute, not an item, so that a parameter may have any name (a header can name one
    ``outputs``). ``Args(other)`` copies other's outputs too."""

    __slots__ = ("outputs",)
    outputs: list[TensorArg]

    def __init__(self, items: Any = (), outputs: Optional[list[TensorArg]] = None):
        super().__init__(items)
        self.outputs = list(getattr(items, "outputs", ())) if outputs is None else outputs

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def device_resident(self) -> bool:
        """True when any tensor argument is a DeviceArray: then results stay on the device."""
        return any(isinstance(t.value, DeviceArray) for t in self.tensor_args()) \
            or any(isinstance(o.value, DeviceArray) for o in self.outputs)

    def tensor_args(self) -> list[TensorArg]:
        """Every converted tensor argument, aclTensorList elements included."""
        found: list[TensorArg] = []
        for key, v in self.items():
            if isinstance(v, TensorArg):
                found.append(v)
            elif isinstance(v, TensorListArg):
                found.extend(v.items)
        return found

    def named_tensor_args(self) -> list[tuple[str, TensorArg]]:
        """(name in messages, argument) for every tensor argument, list elements as name[i]."""
        found: list[tuple[str, TensorArg]] = []
        for key, v in self.items():
            if isinstance(v, TensorArg):
                found.append((key, v))
            elif isinstance(v, TensorListArg):
                found.extend((f"{key}[{i}]", t) for i, t in enumerate(v.items))
        return found


def shape_of(value: Any) -> tuple[int, ...]:
    """The shape of an argument as given (an array, DeviceArray, torch tensor or list),
    without copying it off the device."""
    shape = getattr(value, "shape", None)
    return tuple(int(d) for d in shape) if shape is not None else tuple(np.shape(value))


@dataclass(frozen=True)
class Backward:
    """A forward operator's aclnn backward, and how to check that it is the derivative
    (``ascend_aclnn.testing.gradcheck``; the tests' adjoint identity).

    ``args(fwd_args, fwd_result, grad) -> (args, kwargs)`` builds the backward's arguments
    from the forward's (a dict of its parameters, defaults applied), its result and the
    output gradient. ``method``: "adjoint" (linear in the input, or piecewise linear with
    the selection fixed from the forward) or "finite-difference". ``inputs``: for finite
    differences, the forward parameters differentiated; ``output``: which forward output
    the gradient is of; ``refuse(fwd_args)``: why the backward is not the derivative at
    these arguments, or None. ``also_at``: forward arguments at which gradcheck checks its
    example again (where a kernel differs from the derivative: those checks are named "...
    at name=value"). ``kernel_note(fwd_args, release)``: why the kernel that runs (the npu
    runtime's CANN release, None on the numpy backend or before it starts) is not the
    derivative at these arguments, for a failed gradcheck's report; None where it should be.
    """
    name: str
    method: str
    args: Callable[[dict[str, Any], Any, Any], tuple[tuple[Any, ...], dict[str, Any]]]
    inputs: tuple[str, ...] = ()
    output: int = 0
    refuse: Callable[[dict[str, Any]], Optional[str]] = lambda a: None
    also_at: Mapping[str, Any] = field(default_factory=dict)
    kernel_note: Callable[[Mapping[str, Any], Optional[str]], Optional[str]] = lambda a, release: None

    def __post_init__(self) -> None:
        assert self.method in ("adjoint", "finite-difference"), self.method


def as_pair(value: Any) -> list[int]:
    """A pair parameter as two ints (an int n is (n, n), as PyTorch's _pair)."""
    return [int(value)] * 2 if _is_int(value) else [int(v) for v in value]


# (torch, args) -> a call with no arguments doing with PyTorch the work of the operator on
# these arguments (every parameter in C order, defaults applied, arrays as torch tensors);
# what it needs beyond the timed work (indices from a mask, ...) is made before it returns.
TorchBaseline = Callable[[Any, tuple[Any, ...]], Callable[[], object]]


@dataclass(frozen=True)
class OpSpec:
    """One operator's description: everything the package, its tools, its tests and its
    generated docs know about it. Capabilities are fields (PyTorch's OpInfo model), so
    generic code consults them and never lists or counts operators by hand."""
    name: str                      # Python name: the aclnn name in snake_case
    aclnn: str                     # e.g. "aclnnUpsampleNearestExact1d"
    summary: str
    params: tuple[Param, ...]      # inputs, in C order
    outputs: tuple[Output, ...]    # outputs, in C order (after the inputs in every op so far)
    infer: Callable[[Args], Sequence[tuple[tuple[int, ...], np.dtype[Any]]]]
    check: Callable[[Args, Checker], None]
    reference: Optional[Callable[..., Any]]  # None: no NumPy form (a raw operator)
    notes: str = ""
    # example(rng, dtype) -> (args, kwargs): small valid random arguments whose first
    # tensor has the given dtype (one of the first parameter's dtypes). Drives the
    # command-line tools (compare, bench) and is checked by the tests.
    example: Optional[Callable[[np.random.Generator, np.dtype[Any]], tuple[tuple[Any, ...], dict[str, Any]]]] = None
    # Why CANN cannot rerun this operator's executor with rebound addresses (its op_api gives
    # the kernel a raw copy of an address that aclSet*TensorAddr cannot reach), or "": plans
    # then run it as ordinary calls from the start.
    not_repeatable: str = ""
    # Its aclnn backward (a forward with one), else None: a backward, or forward only.
    backward: Optional[Backward] = None
    # Gradients flow through it in ascend_aclnn.torch: a forward with a backward, or a
    # linear backward whose own derivative is its forward.
    differentiable: bool = False
    # The torch.autograd.Function in ascend_aclnn.torch that runs it ("": none); its
    # functional wrapper there has the operator's name.
    torch_function: str = ""
    # PyTorch doing the same work, for the bench's comparison (None: no baseline).
    torch_baseline: Optional[TorchBaseline] = None
    # Keys of the ``selftest`` items that settle on hardware something assumed about it.
    selftest: tuple[str, ...] = ()
    # (argument, detail) when the arguments as given (by name, before any conversion) look
    # like a well-known other order, e.g. PyTorch's: refused first, saying so, since the
    # conversion's own message would blame one argument for another's place.
    misordered: Callable[[dict[str, Any]], Optional[tuple[str, str]]] = lambda raw: None
    # Called as the npu backend launches it (a raw aa.aclnn call of the same aclnn name
    # too), with the arguments by name (Python or C) and the loaded CANN's release (None:
    # unknown): for what depends on the kernel that runs, e.g. a formula the release fixed.
    # The numpy backend's counterpart is the kernel module's DECIDED.
    on_launch: Optional[Callable[[Mapping[str, Any], Optional[str]], None]] = None
    # Its aclnn API is generated from the operator definition (nnopbase; no hand-written
    # op_api): CANN before 9.0 reads the deterministic option once per process for it, not
    # once per operator (ascend_aclnn.determinism says so).
    generated_api: bool = False
    signature: inspect.Signature = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        params = [inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=p.default,
                                    annotation=p.type_hint) for p in self.params]
        single = len(self.outputs) == 1
        out_hint = "Optional[TensorLike]" if single else "Optional[tuple[Optional[TensorLike], ...]]"
        if self.outputs:  # a raw operator's outputs are ordinary (written) parameters instead
            params.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None,
                                            annotation=out_hint))
        # Optional only where a flag can leave the output out: dx of group_norm_swish_grad is always there.
        items = ["Optional[ArrayLike]" if o.required_by else "ArrayLike" for o in self.outputs]
        ret = items[0] if single else f"tuple[{', '.join(items)}]"
        object.__setattr__(self, "signature", inspect.Signature(params, return_annotation=ret))
        attach = getattr(self.check, "attach", None)
        if attach is not None:  # rules.Rules: they name outputs by name
            attach(self)
        names = {p.name for p in self.params}
        for o in self.outputs:
            assert o.required_by is None or o.required_by in names, (self.name, o.required_by)

    def required(self, a: "Args") -> list[bool]:
        """Which outputs the caller asked for (all, unless a ``required_by`` flag is False)."""
        return [o.required_by is None or bool(a[o.required_by]) for o in self.outputs]

    def _bind_arguments(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """Python's own call rules for this signature (inspect.Signature.bind costs ~10 us)."""
        names = [p.name for p in self.params]
        if len(args) > len(names):
            raise TypeError(f"{self.name}{self.signature}: takes {len(names)} positional arguments "
                            f"but {len(args)} were given")
        raw = dict(zip(names, args))
        out_kw = bool(self.outputs)
        if out_kw:
            raw["out"] = None
        for key, value in kwargs.items():
            if key not in raw and key not in names:
                raise TypeError(f"{self.name}{self.signature}: unexpected keyword argument {key!r}")
            if key in raw and (key != "out" or not out_kw):
                raise TypeError(f"{self.name}{self.signature}: multiple values for argument {key!r}")
            raw[key] = value
        for p in self.params[len(args):]:
            if p.name not in raw:
                if p.default is inspect.Parameter.empty:
                    raise TypeError(f"{self.name}{self.signature}: missing required argument {p.name!r}")
                raw[p.name] = p.default
        return raw

    @property
    def phase1_name(self) -> str:
        return self.aclnn + "GetWorkspaceSize"

    @property
    def c_argtypes(self) -> tuple[Any, ...]:
        """First-phase argtypes without the (workspaceSize, executor) tail."""
        return tuple(p.ctype for p in self.params + self.outputs)

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Args:
        """Convert and validate a call's arguments exactly as the operator's first phase
        would, raising its status before any C call."""
        raw = self._bind_arguments(args, kwargs)
        check = Checker(self.phase1_name)
        order = self.misordered(raw)
        if order is not None:
            check.fail(*order)
        for p in self.params:
            if p.pointer and raw[p.name] is None and not p.nullable:
                check.fail(p.name, f"expected {p.kind_doc()}, got None", ACLNN_ERR_PARAM_NULLPTR)
        a = Args((p.name, None if raw[p.name] is None and p.nullable else p.convert(raw[p.name], check))
                 for p in self.params)
        cast_lists(self.params, raw, a, check)
        if not self.outputs:
            self.check(a, check)
            return a
        given = raw["out"]
        if given is not None and len(self.outputs) > 1:
            if not isinstance(given, (tuple, list)) or len(given) != len(self.outputs):
                check.fail("out", f"expected a tuple of {len(self.outputs)} arrays (None for one to "
                                  f"allocate), got {describe(given)}")
        given_each = (given,) if len(self.outputs) == 1 else tuple(given or (None,) * len(self.outputs))
        inferred = self.infer(a)
        required = self.required(a)
        # An output that is not required gets scratch memory: the user's out= stays untouched.
        labels = self.out_labels
        a.outputs = [TensorArg(None, tuple(shape), np.dtype(dtype), given=False) if g is None or not req
                     else o.convert(g, check, label)
                     for o, g, req, label, (shape, dtype)
                     in zip(self.outputs, given_each, required, labels, inferred)]
        self.check(a, check)
        for o, label, (shape, dtype) in zip(a.outputs, labels, inferred):
            # Not op_api checks. A size past int64 would wrap in C (size_t, int64 dims), and
            # a wrongly shaped buffer would let the kernel write out of bounds.
            problem = size_problem(shape, np.dtype(dtype).itemsize)
            if problem is not None:
                check.fail(label, f"expected {problem}")
            if o.shape != tuple(shape):
                check.mismatch(label, f"shape {tuple(shape)}", f"shape {o.shape}")
        given_outs = [(o.value, label) for o, label in zip(a.outputs, labels) if o.given] \
            if len(labels) > 1 else ()
        for i, (first, first_label) in enumerate(given_outs):
            for second, second_label in given_outs[i + 1:]:
                if may_overlap(first, second):  # each kernel output would overwrite the other
                    check.fail(second_label, f"expected memory separate from {first_label}, got an array "
                                             "that shares memory with it")
        return a

    @property
    def out_labels(self) -> list[str]:
        """How error messages name each output: "out", or "out[i] (name)" for several."""
        if len(self.outputs) == 1:
            return ["out"]
        return [f"out[{i}] ({o.name})" for i, o in enumerate(self.outputs)]

    def docstring(self) -> str:
        lines = [self.summary, "", f"Calls {self.phase1_name} + {self.aclnn}.", "", "Parameters", "----------"]
        for p in self.params:
            default = "" if p.default is inspect.Parameter.empty else f", default {p.default!r}"
            lines.append(f"{p.name} : {p.kind_doc()}{default}")
            lines.append(f"    {p.doc} (aclnn parameter ``{p.c_name}``)")
        lines += ["out : optional, " + ", ".join(f"{o.name} {o.kind_doc()}" for o in self.outputs),
                  "    Arrays to write the result into; otherwise they are allocated.",
                  "", "Returns", "-------"]
        lines += [f"{o.name} : {o.doc}" + (f"; None when {o.required_by} is False" if o.required_by else "")
                  for o in self.outputs]
        lines += ["    In the kind of the inputs: DeviceArrays (not synchronised) when any tensor "
                  "argument is a DeviceArray; else torch tensors (sharing the results' memory) when "
                  "any is a CPU torch tensor; else NumPy arrays. An out= array comes back as given. "
                  "Tensor arguments may be NumPy arrays, DeviceArrays, CPU torch tensors or DLPack "
                  "host arrays (read in place), or lists (of the dtype of the first array argument).",
                  "", "Raises", "------",
                  "AclnnParamNullptrError (161001), AclnnParamInvalidError (161002)",
                  "    Before any C call, on both backends, for the inputs the operator rejects.",
                  "AclnnError", "    When CANN itself fails (message includes aclGetRecentErrMsg)."]
        if self.notes:
            lines += ["", "Notes", "-----", self.notes]
        return "\n".join(lines)

