"""ctypes prototypes read from the installed headers, for the operators the package does
not describe (ascend_aclnn.ops.REGISTRY has only some of them) and for the vendor package.

bind_builtin(sim) gives a sim_ctypes.Sim every operator of native/build.py's SOURCES table it
lacks, from <prefix>/include/aclnnop/; vendor_lib(prefix) loads the vendor package's
libcust_opapi.so with its own operator (from its op_api/include/) and the built-in ones it
shadows. Importable as sim.header_ops and, like sim_ctypes, by path in the subprocess
scripts the tests run.
"""
from __future__ import annotations

import ctypes
import importlib.util
import pathlib
import platform
from ctypes import POINTER, c_bool, c_char_p, c_double, c_float, c_int, c_int8, c_int32, c_int64, c_uint64, c_void_p

HERE = pathlib.Path(__file__).resolve().parent
try:
    from .expected import native_build, read_declarations
except ImportError:  # loaded by path
    _spec = importlib.util.spec_from_file_location("sim_expected", HERE / "expected.py")
    _expected = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_expected)
    native_build, read_declarations = _expected.native_build, _expected.read_declarations

HANDLES = ("aclTensor", "aclTensorList", "aclScalar", "aclScalarList", "aclIntArray", "aclFloatArray",
           "aclBoolArray", "aclOpExecutor")
# Every C parameter type the headers use -> the ctypes a caller passes.
C_TYPES = {
    **{f"{const}{h}*": c_void_p for h in HANDLES for const in ("", "const ")},
    "void*": c_void_p, "aclrtStream": c_void_p, "const aclrtStream": c_void_p,
    "uint64_t*": POINTER(c_uint64), "aclOpExecutor**": POINTER(c_void_p),
    "int64_t": c_int64, "uint64_t": c_uint64, "int8_t": c_int8, "bool": c_bool, "float": c_float,
    "double": c_double, "aclDataType": c_int, "char*": c_char_p, "const char*": c_char_p,
    "int": c_int, "const int": c_int, "int*": POINTER(c_int), "int64_t**": POINTER(POINTER(c_int64)),
}


def decls_of(header: pathlib.Path) -> dict:
    return read_declarations(header.read_text())


def bind(lib, decls: dict, target) -> None:
    """Set each declared function of lib, typed from its declaration, as an attribute of
    target."""
    for name, (ret, params) in decls.items():
        assert ret == "aclnnStatus", name
        fn = getattr(lib, name)
        fn.restype = c_int32
        fn.argtypes = [C_TYPES[ctype] for ctype, _ in params]
        setattr(target, name, fn)


def bind_builtin(sim) -> None:
    """Every operator (and plain function) of SOURCES the Sim has no attribute for, from its installed header
    (<prefix>/include/aclnnop, the prefix being the lib directory's parent), if one of
    the operator libraries it loaded holds it."""
    include = pathlib.Path(sim.libdir).parent / "include" / "aclnnop"
    for op, header in {**native_build.operators(), **native_build.helpers()}.items():
        lib = next((lib for lib in sim.op_libs if hasattr(lib, op)), None)
        if lib is not None and not hasattr(sim, op):
            bind(lib, decls_of(include / header), sim)


class VendorLib:
    """The vendor package's libcust_opapi.so, its functions typed from the headers: its
    own operators from op_api/include, the shadowed built-in ones from aclnnop/."""

    def __init__(self, prefix, name: str = native_build.DEFAULT_VENDOR):
        root = native_build.vendor_root(prefix, name)
        self.path = root / "lib" / native_build.VENDOR_LIB
        self.lib = ctypes.CDLL(str(self.path))
        for header in set(native_build.vendor_operators().values()):
            bind(self.lib, decls_of(root / "include" / header), self)
        prefix = pathlib.Path(prefix)
        include = next(d for d in (prefix / "include", prefix / f"{platform.machine()}-linux" / "include")
                       if d.is_dir()) / "aclnnop"
        for src in native_build.VENDOR.shadows:
            for header in native_build.SOURCES[src].operators.values():
                bind(self.lib, decls_of(include / header), self)
