"""GroupNormSwish and GroupNormSwishGrad.

Both aclnn APIs are generated from the operator definitions (there is no hand-written
op_api): null pointers give 161001, a dtype outside the definition's combinations 161002,
and the shape rules are the tiling's, which nnopbase runs inside GetWorkspaceSize: a
tiling failure returns ACLNN_ERR_INNER_TILING_ERROR (561002; hicann/opbase
indv_executor.cpp). Checks run in that order: nulls, dtypes, the tiling's rules in the
order hicann/ops-nn's group_norm_swish(_grad)_tiling.cpp checks them, then the binding's
own refusals (161002) of what the documentation forbids and no tiling rule checks.

GroupNormSwishGrad's swish derivative depends on the CANN release (swish_grad_formula()).
Where a kernel of a release before 9.1.0 runs with swish_scale != 1, its results are not the
derivative of the forward: SwishGradFormulaWarning says so, once per process
(warn_swish_grad_formula, called by each backend as the kernel runs).
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import os
import re
import threading
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, NamedTuple, Optional, Union

import numpy as np
from numpy.typing import NDArray

from ..cann import version as cann_version
from ..cann.constants import ACLNN_ERR_INNER_TILING_ERROR
from ..reference import group_norm as reference
from ..tensors import bfloat16, dtype_name
from .rules import (Dims, Env, Expr, Message, Rule, Rules, contiguous, dim, dims, dtype_in, dtypes_equal, has_zero,
                    is_dtype, ndim, require, same_dims, scalar, shape_is)
from .spec import Backward, Double, OpSpec, Output, Scalar, Tensor, _is_int, describe, dtype_list

F32, F16 = np.dtype(np.float32), np.dtype(np.float16)
FLOATS = (F32, F16, bfloat16)
MAX_CHANNELS_PER_GROUP = 4000  # the grad tiling's limit on C / num_groups
FORWARD_OUT = ("out[0] (y)", "out[1] (mean)", "out[2] (rstd)")
BACKWARD_OUT = ("out[0] (dx)", "out[1] (dgamma)", "out[2] (dbeta)")


# ---- which swish derivative GroupNormSwishGrad computes -------------------------------------

CANN_VERSION_ENV = "ASCEND_ACLNN_CANN_VERSION"
FORMULA_TEXT = {"corrected": "swishScale in both terms of the swish derivative",
                "8.1": "swishScale missing from the second term"}
_PRE_RELEASE = re.compile(r"^\s*(\d+\.\d+\.\d+)\s*[-._]?\s*(alpha|beta|rc|pre|b|a)", re.IGNORECASE)
_chosen: contextvars.ContextVar[Optional[str]] = contextvars.ContextVar("ascend_aclnn_swish_grad_formula",
                                                                        default=None)


class SwishGradFormula(NamedTuple):
    """Which GroupNormSwishGrad formula the numpy backend computes, and why."""
    formula: str              # "corrected" or "8.1" (see reference.group_norm_swish_grad)
    release: Optional[str]    # the CANN release it follows; None when none is known
    reason: str               # where that came from, for people

    def __str__(self) -> str:
        return f"{self.formula} formula ({FORMULA_TEXT[self.formula]}): {self.reason}"


def has_swish_grad_fix(release: str) -> bool:
    """Whether release's GroupNormSwishGrad kernel has swishScale in both terms: 9.1.0 and
    later, a pre-release of 9.1.0 itself (9.1.0-beta.N) not. ValueError if release is not
    a CANN release string."""
    cann_version.parse(release)
    fixed = cann_version.at_least(release, cann_version.SWISH_GRAD_SCALE_FIXED)
    pre = _PRE_RELEASE.match(release)
    if fixed and pre and cann_version.parse(pre.group(1)) == cann_version.parse(cann_version.SWISH_GRAD_SCALE_FIXED):
        return False
    return bool(fixed)


def _following(release: str, why: str) -> SwishGradFormula:
    fixed = has_swish_grad_fix(release)
    return SwishGradFormula("corrected" if fixed else "8.1", release,
                            f"{why}, {'at least' if fixed else 'before'} {cann_version.SWISH_GRAD_SCALE_FIXED}")


@functools.lru_cache(maxsize=8)
def _installed_release(home: Optional[str], toolkit: Optional[str]) -> tuple[Optional[str], Optional[str]]:
    """(release, root) of the install the loader finds for these variables: its version
    files are read, no library is loaded."""
    from ..cann import loader
    lib_dir = loader.find_lib_dir()
    if lib_dir is None:
        return None, None
    return cann_version.installed(lib_dir), str(cann_version.cann_root(Path(lib_dir)))


def swish_grad_formula() -> SwishGradFormula:
    """The GroupNormSwishGrad formula the numpy backend follows, first found of:

    1. use_swish_grad_formula(formula), in this context (compare uses it to try the other);
    2. ASCEND_ACLNN_CANN_VERSION, a CANN release (e.g. 8.1.RC1 or 9.1.0): the formula of that
       release's kernel, for a host whose install does not say, or to check another one;
    3. the release of the CANN install the loader finds (ASCEND_HOME_PATH, ...), read from its
       version files: loading CANN is not needed, and is never done, for this;
    4. else the corrected formula (no CANN release known).

    "8.1": releases before 9.1.0 (8.1.RC1 certainly: its kernel leaves swishScale out of the
    second term); "corrected" from 9.1.0 on. ValueError when the variable holds no release."""
    chosen = _chosen.get()
    if chosen is not None:
        return SwishGradFormula(chosen, None, "chosen with use_swish_grad_formula()")
    told = os.environ.get(CANN_VERSION_ENV, "").strip()
    if told:
        try:
            return _following(told, f"{CANN_VERSION_ENV}={told}")
        except ValueError:
            raise ValueError(f"{CANN_VERSION_ENV}={told!r} is not a CANN release (expected e.g. 8.1.RC1 or "
                             f"9.1.0)") from None
    release, root = _installed_release(*(os.environ.get(v) for v in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")))
    if release is not None:
        try:
            return _following(release, f"the CANN installed at {root} is {release}")
        except ValueError:
            pass
    return SwishGradFormula("corrected", None, f"no CANN release known (set {CANN_VERSION_ENV} to follow "
                                               "an older one)")


def swish_grad_formula_line() -> str:
    """swish_grad_formula() as one line for people (``info``); never raises."""
    try:
        return str(swish_grad_formula())
    except ValueError as exc:
        return f"unknown: {exc}"


@contextlib.contextmanager
def use_swish_grad_formula(formula: str) -> Iterator[None]:
    """Make the numpy backend compute GroupNormSwishGrad with ``formula`` ("corrected" or
    "8.1") in this block (context-local), whatever release it would follow."""
    if formula not in reference.SWISH_GRAD_FORMULAS:
        raise ValueError(f"formula: expected one of {', '.join(map(repr, reference.SWISH_GRAD_FORMULAS))}, "
                         f"got {formula!r}")
    token = _chosen.set(formula)
    try:
        yield
    finally:
        _chosen.reset(token)


# ---- saying so when the kernel that runs is not the forward's derivative ---------------------

README_SECTION = "docs/npu-differences.md, group_norm_swish(_grad) (in any install: help(ascend_aclnn.group_norm_swish_grad))"
TORCH_BACKWARD = "ascend_aclnn.torch.group_norm_swish's backward"


class SwishGradFormulaWarning(UserWarning):
    """GroupNormSwishGrad ran with swish_scale != 1 on the kernel of a CANN release before
    9.1.0, which leaves swish_scale out of the swish derivative's second term: its dx, dgamma
    and dbeta are that kernel's, not the derivative of group_norm_swish. Given once per
    process by the operator and once by ascend_aclnn.torch.group_norm_swish's backward;
    silence it with ``warnings.filterwarnings("ignore", category=SwishGradFormulaWarning)``."""


_warned: set[str] = set()  # who has said it in this process: "group_norm_swish_grad", TORCH_BACKWARD
_warned_lock = threading.Lock()
_caller: contextvars.ContextVar[Optional[str]] = contextvars.ContextVar("ascend_aclnn_swish_grad_caller",
                                                                         default=None)
_PACKAGE_DIR = str(Path(__file__).resolve().parent.parent) + os.sep


@contextlib.contextmanager
def swish_grad_caller(name: str) -> Iterator[None]:
    """Calls of the grad in this block are made by ``name`` (the torch wrapper's backward):
    its warning names that, and is given once for it."""
    token = _caller.set(name)
    try:
        yield
    finally:
        _caller.reset(token)


def release_swish_grad_formula(release: Optional[str], why: str) -> Optional[SwishGradFormula]:
    """The formula of a release's kernel (the one the npu backend's runtime reports), or
    None when release is None or names no release."""
    if release is None:
        return None
    try:
        return _following(release, why)
    except ValueError:
        return None


def launched_swish_grad_formula(release: Optional[str]) -> Optional[SwishGradFormula]:
    """The formula of the kernel the npu backend launches: by the release its runtime reports
    (its install's version files), else ASCEND_ACLNN_CANN_VERSION's; None when neither is
    known (a formula chosen with use_swish_grad_formula() is the numpy backend's, and counts
    as none here)."""
    if release is not None:
        return release_swish_grad_formula(release, f"the CANN the npu runtime loaded is {release}")
    try:
        formula = swish_grad_formula()
    except ValueError:  # the variable names no release
        return None
    return formula if formula.release is not None else None


def _note_launch(args: Mapping[str, Any], release: Optional[str]) -> None:
    """The description's on_launch: the installed release's formula (before 9.1.0, not the
    forward's derivative unless swish_scale is 1) says so. Arguments by Python name (the
    binding's function) or by the header's (aa.aclnn)."""
    scale = args.get("swish_scale", args.get("swishScale"))
    if isinstance(scale, (int, float)):
        warn_swish_grad_formula(float(scale), launched_swish_grad_formula(release), "npu")


def _gradcheck_note(args: Mapping[str, Any], release: Optional[str]) -> Optional[str]:
    """The forward's Backward.kernel_note: before 9.1.0 the grad is the derivative at
    swish_scale 1 only."""
    formula = launched_swish_grad_formula(release)
    with np.errstate(over="ignore"):  # the scale as the kernel reads it (float32; past its range inf)
        at_1 = np.float32(args["swish_scale"]) == 1
    if at_1 or formula is None or formula.formula != "8.1" or formula.release is None:
        return None
    return (f"the GroupNormSwishGrad kernel of CANN {formula.release} ({formula.reason}) leaves swish_scale "
            f"out of the swish derivative's second term: it is group_norm_swish's derivative at swish_scale 1 "
            f"only; see {README_SECTION}")


def _first_frame_outside_the_package() -> int:
    """The stacklevel of the nearest caller outside ascend_aclnn, for warnings.warn called
    by this module's caller."""
    here = inspect.currentframe()
    frame, level = here.f_back if here is not None else None, 1
    while frame is not None and frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def warn_swish_grad_formula(swish_scale: float, formula: Optional[SwishGradFormula], backend: str) -> None:
    """Called as GroupNormSwishGrad runs: a SwishGradFormulaWarning, once per process for
    each caller (the operator, the torch wrapper's backward), when the kernel that runs is
    a release's before 9.1.0 and swish_scale (as the kernel reads it, in float32) is not 1.
    A formula chosen with use_swish_grad_formula(), or none known, says nothing. Never
    raises."""
    if formula is None or formula.formula != "8.1" or formula.release is None:
        return
    try:
        with np.errstate(over="ignore"):  # past float32's range: inf, as the kernel reads it
            if np.float32(swish_scale) == 1:
                return
    except (TypeError, ValueError, OverflowError):
        pass
    who = _caller.get() or "group_norm_swish_grad"
    with _warned_lock:
        if who in _warned:
            return
        _warned.add(who)
    if who == TORCH_BACKWARD:
        what = (f"{TORCH_BACKWARD} (aclnnGroupNormSwishGrad) with swish_scale={swish_scale:g}: the "
                f"gradients it gives autograd are")
    else:
        what = f"group_norm_swish_grad with swish_scale={swish_scale:g}: dx, dgamma and dbeta are"
    warnings.warn(
        f"ascend_aclnn: {what} those of CANN {formula.release}'s kernel on the {backend} backend "
        f"({formula.reason}), which leaves swish_scale out of the swish derivative's second term: not the "
        f"derivative of group_norm_swish unless swish_scale is 1. See {README_SECTION}. (Said once per "
        f"process.)",
        SwishGradFormulaWarning, stacklevel=_first_frame_outside_the_package())


# ---- the descriptions ----------------------------------------------------------------------

def _tiling(holds: Expr, argument: str, expected: Message, got: Message, c_says: str,
            c_values: Optional[Mapping[str, Union[Expr, Dims]]] = None) -> Rule:
    """A rule of the operator's tiling: GetWorkspaceSize returns ACLNN_ERR_INNER_TILING_ERROR."""
    return require(holds, argument, expected, got, c_says, status=ACLNN_ERR_INNER_TILING_ERROR, c_values=c_values)


def _shape(t: str) -> Callable[[Env], str]:
    return lambda e: f"shape {e[t].shape}"


def _channel_vector(name: str, of: str, rank_rule: bool) -> tuple[Rule, ...]:
    """gamma or beta: 1-D of length C, the channel count of x (forward) or dy (grad).
    Without a channel dimension the tiling's C is no size, and that is the first of its
    rules that fails (``rank_rule``: where `of` may have none yet)."""
    rank = _tiling(ndim(of) >= 2, name, f"a 1-D tensor of length C, the channel count of {of}",
                   lambda e: f"shape {e[name].shape} ({of} has shape {e[of].shape}, no channel dimension: it must be "
                             "(N, C, *))",
                   name + " must be 1-D of length C, but " + of + " {" + of + ".shape} has no channel dimension "
                   "(N, C, *)")
    length_c = _tiling(shape_is(name, dims(dim(of, 1))), name, lambda e: f"a 1-D tensor of length C = {e[of].shape[1]}",
                       _shape(name), name + " must be 1-D of length C = {" + of + ".shape[1]}, got {" + name + ".shape}")
    return (rank, length_c) if rank_rule else (length_c,)


def _at_most_8_dims(t: str) -> Rule:
    """The documented limit, which no tiling rule checks: the binding's own refusal (161002),
    after the tiling's rules (where the NPU refuses such a tensor is not confirmed)."""
    return require(ndim(t) <= 8, t, "a 2-D to 8-D tensor (N, C, *)", _shape(t),
                   t + " must be 2-D to 8-D (N, C, *), got {" + t + ".ndim}-D {" + t + ".shape}")


def _output(t: str, c: str, shape: Expr, want: str,
            c_values: Optional[Mapping[str, Union[Expr, Dims]]] = None) -> tuple[Rule, ...]:
    """Simulator strictness: the kernels write outputs densely, so a strided output would
    be written wrongly on the NPU (both docs: not supported). The binding checks the shapes
    of out= arrays itself, after these rules."""
    return (require(shape, t, "", "", c + " must have shape " + want + ", got {" + c + ".shape}", side="simulator",
                    c_values=c_values),
            require(contiguous(t), t, "", "", c + " must be contiguous (non-contiguous outputs are not supported)",
                    side="simulator"))


def _dtype_of_ref(ref: str) -> Callable[[Env], str]:
    return lambda e: f"dtype {dtype_name(e[ref].dtype)} (the dtype of {ref})"


def _dtype_of(t: str) -> Callable[[Env], str]:
    return lambda e: dtype_name(e[t].dtype)


_G, _N_G = scalar("num_groups"), dims(dim("x", 0), scalar("num_groups"))

FORWARD_CHECKS = Rules(
    # dtypes: the definition's (x, gamma = beta) combinations (161002, before the tiling)
    dtype_in("x", FLOATS),
    require(is_dtype("gamma", F32) | dtypes_equal("gamma", "x"), "gamma",
            lambda e: f"dtype {dtype_list((F32,) if e['x'].dtype == F32 else (e['x'].dtype, F32))} with x of dtype "
                      f"{dtype_name(e['x'].dtype)}", _dtype_of("gamma"),
            "gamma dtype {gamma.dtype} is not allowed with x dtype {x.dtype_name}: it must be x's dtype or ACL_FLOAT "
            "(ACL_FLOAT only, for an ACL_FLOAT x)"),
    require(dtypes_equal("beta", "gamma"), "beta", lambda e: f"dtype {dtype_name(e['gamma'].dtype)} (the dtype of gamma)",
            _dtype_of("beta"), "beta dtype {beta.dtype} must equal gamma dtype {gamma.dtype_name}"),
    *(require(dtypes_equal(out, of), out, _dtype_of_ref(of),
              _dtype_of(out), c_name + " dtype {" + c_name + ".dtype} must be {" + of + ".dtype_name} (the dtype "
              "of " + of + ")")
      for out, c_name, of in (("y", "yOut", "x"), ("mean", "meanOut", "gamma"), ("rstd", "rstdOut", "gamma"))),
    # the tiling's rules, in its order (561002)
    _tiling(ndim("x") >= 2, "x", "a 2-D to 8-D tensor (N, C, *)", _shape("x"),
            "x must be 2-D to 8-D (N, C, *), got {x.ndim}-D {x.shape}"),
    *_channel_vector("gamma", "x", rank_rule=False),
    *_channel_vector("beta", "x", rank_rule=False),
    _tiling(_G > 0, "num_groups", "num_groups > 0", lambda e: f"{e['num_groups']}", "numGroups must be > 0, got {numGroups}"),
    _tiling((dim("x", 1) % _G).eq(0), "num_groups", lambda e: f"a divisor of the channel count C = {e['x'].shape[1]}",
            lambda e: f"{e['num_groups']}", "numGroups {numGroups} must divide the channel count C = {x.shape[1]}"),
    # the binding's own (161002): the documented limits the tiling does not check
    _at_most_8_dims("x"),
    require(~has_zero("x"), "x", "no empty dimension (empty tensors are not supported)", _shape("x"),
            "x must not be empty, got {x.shape}"),
    *_output("y", "yOut", same_dims("y", "x", 0, 0), "x's"),
    *_output("mean", "meanOut", shape_is("mean", _N_G), "{want} (N, numGroups)", {"want": _N_G}),
    *_output("rstd", "rstdOut", shape_is("rstd", _N_G), "{want} (N, numGroups)", {"want": _N_G}),
)

_SAME = "dtype {} (the dtype of dy: all tensors share one dtype)"
_C, _N = dim("dy", 1), dim("dy", 0)
_MEAN_WANT = lambda e: (f"shape (N, num_groups) = {(e['dy'].shape[0], e['num_groups'])}"  # noqa: E731
                        if e["dy"].ndim else f"shape (N, num_groups), N the first dim of dy (shape {e['dy'].shape})")
_NG_SAYS = "N * numGroups must be > 0 (dy {dy.shape}, numGroups {numGroups})"
_DIVIDES_SAYS = "numGroups {numGroups} must divide the channel count C = {dy.shape[1]} (C / numGroups > 0)"

BACKWARD_CHECKS = Rules(
    # dtypes: all nine tensors share one of float32, float16, bfloat16 (161002, before the tiling)
    dtype_in("dy", FLOATS),
    *(require(dtypes_equal(t, "dy"), t, lambda e: _SAME.format(dtype_name(e["dy"].dtype)), _dtype_of(t),
              c + " dtype {" + c + ".dtype} must equal dy dtype {dy.dtype_name} (all tensors share one dtype)")
      for t, c in (("mean", "mean"), ("rstd", "rstd"), ("x", "x"), ("gamma", "gamma"), ("beta", "beta"),
                   ("dx", "dxOut"), ("dgamma", "dgammaOut"), ("dbeta", "dbetaOut"))),
    # the tiling's rules, in its order (561002)
    _tiling(same_dims("x", "dy", 0, 0), "x", lambda e: f"the shape of dy {e['dy'].shape}", _shape("x"),
            "x shape {x.shape} must equal dy shape {dy.shape}"),
    _tiling((ndim("dy") >= 1) & (ndim("mean") >= 2) & dim("mean", 1).eq(_G) & dim("mean", 0).eq(_N), "mean",
            _MEAN_WANT, _shape("mean"),
            "mean must have shape [N, numGroups], N dy's first dim, numGroups {numGroups} (dy {dy.shape}), got "
            "{mean.shape}"),
    _tiling(same_dims("rstd", "mean", 0, 0), "rstd", lambda e: f"the shape of mean {e['mean'].shape}", _shape("rstd"),
            "rstd shape {rstd.shape} must equal mean shape {mean.shape}"),
    _tiling(ndim("mean").eq(2), "mean", _MEAN_WANT, _shape("mean"),
            "mean and rstd must be 2-D [N, numGroups], got {mean.shape}"),
    *_channel_vector("gamma", "dy", rank_rule=True),
    *_channel_vector("beta", "dy", rank_rule=True),
    _tiling(_N.ne(0), "dy", "no empty dimension (N * num_groups > 0)", _shape("dy"), _NG_SAYS),
    _tiling(_G.ne(0), "num_groups", "N * num_groups > 0", lambda e: f"{e['num_groups']}", _NG_SAYS),
    _tiling(_C.ne(0), "dy", "no empty dimension (C / num_groups > 0)", _shape("dy"), _DIVIDES_SAYS),
    _tiling((_C // _G).ne(0) & (_C % _G).eq(0), "num_groups",
            lambda e: f"a divisor of the channel count C = {e['dy'].shape[1]}", lambda e: f"{e['num_groups']}",
            _DIVIDES_SAYS),
    _tiling(~has_zero("dy", 2), "dy", "no empty dimension (H * W > 0)", _shape("dy"),
            "dy must not be empty: H * W must be > 0, got {dy.shape}"),
    # rounded up to a 32-byte block: the same rule for 4000
    _tiling(_C // _G <= MAX_CHANNELS_PER_GROUP, "num_groups",
            lambda e: f"at most {MAX_CHANNELS_PER_GROUP} channels per group (C / num_groups, C = {e['dy'].shape[1]})",
            lambda e: f"{e['num_groups']} ({e['dy'].shape[1] // e['num_groups']} per group)",
            "C / numGroups = {per_group} exceeds " + str(MAX_CHANNELS_PER_GROUP) + " channels per group",
            {"per_group": _C // _G}),
    # the binding's own (161002): the documented limit the tiling does not check
    _at_most_8_dims("dy"),
    *_output("dx", "dxOut", same_dims("dx", "dy", 0, 0), "dy's"),
    *_output("dgamma", "dgammaOut", shape_is("dgamma", dims(_C)), "[C]"),
    *_output("dbeta", "dbetaOut", shape_is("dbeta", dims(_C)), "[C]"),
)


def _random(shape: "int | tuple[int, ...]", dtype: Any, rng: np.random.Generator) -> NDArray[Any]:
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


def _forward_example(rng: np.random.Generator, dtype: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    return (_random((2, 4, 3, 3), dtype, rng), _random(4, dtype, rng), _random(4, dtype, rng), 2), {}


def _backward_example(rng: np.random.Generator, dtype: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """swish_scale 1.7: the two formulas (swish_grad_formula) differ, so compare tells them apart."""
    mean = (0.1 * rng.standard_normal((2, 2))).astype(dtype)
    rstd = rng.uniform(0.5, 2.0, (2, 2)).astype(dtype)
    return (_random((2, 4, 3, 3), dtype, rng), mean, rstd, _random((2, 4, 3, 3), dtype, rng),
            _random(4, dtype, rng), _random(4, dtype, rng), 2), {"swish_scale": 1.7}


NUM_GROUPS_DOC = "G: the channels split into G groups of C/G consecutive channels"
DATA_FORMAT_DOC = ("accepted and ignored, as on the NPU (any str, or None for NULL): the layout is "
                   "always channel-second, (N, C, *)")
SHAPE_STATUS_NOTE = ("Both APIs are generated (nnopbase runs the tiling inside GetWorkspaceSize), so "
                     "their shape rules are tiling failures: AclnnInnerTilingError "
                     "(ACLNN_ERR_INNER_TILING_ERROR, 561002), checked after the NULL (161001) and dtype "
                     "(161002) checks and in the tiling's order. {rules} The binding's own refusals, "
                     "after those (AclnnParamInvalidError, 161002): more than 8 dims{empty}, and out= "
                     "arrays of the wrong shape.")
FORWARD_RULES = ("The forward's: x has at least 2 dims; gamma, then beta, is 1-D of length C; "
                 "num_groups > 0; num_groups divides C.")
BACKWARD_RULES = ("The grad's: x has dy's shape; mean is (N, num_groups) (its dim 1, then dim 0); rstd "
                  "has mean's shape; mean is 2-D; gamma, then beta, is 1-D of length C; N * num_groups > "
                  "0; num_groups divides C (C / num_groups > 0); H*W > 0; C / num_groups <= "
                  f"{MAX_CHANNELS_PER_GROUP}.")

NON_FINITE_NOTE = ("NaN and inf inputs are unsupported on the NPU, whose Kahan sums turn an inf into "
                   "NaN: on both backends a group holding one gives NaN statistics and outputs, a "
                   "dgamma/dbeta channel that is not finite is NaN, and a non-finite gamma or beta makes "
                   "its channel of y, its group of dx and its dgamma/dbeta NaN (unconfirmed on hardware).")

def _torch_forward(torch: Any, x: Any, gamma: Any, beta: Any, groups: int, data_format: Any = "NCHW",
                   eps: float = 1e-5, activate_swish: bool = True, swish_scale: float = 1.0) -> Any:
    """PyTorch's native_group_norm, then the swish."""
    n, c, m = x.shape[0], x.shape[1], x[0, 0].numel()

    def run() -> Any:
        y, mean, rstd = torch.ops.aten.native_group_norm(x, gamma, beta, n, c, m, groups, eps)
        return (y * torch.sigmoid(swish_scale * y) if activate_swish else y), mean, rstd
    return run


def _torch_grad(torch: Any, dy: Any, mean: Any, rstd: Any, x: Any, gamma: Any, beta: Any, groups: int) -> Any:
    """The swish's derivative, then PyTorch's native_group_norm_backward (swish_scale 1)."""
    n, c, m = x.shape[0], x.shape[1], x[0, 0].numel()
    shape = (1, c) + (1,) * (x.dim() - 2)

    def run() -> Any:
        xhat = (x.reshape(n, groups, -1) - mean.reshape(n, groups, 1)) * rstd.reshape(n, groups, 1)
        z = xhat.reshape(x.shape) * gamma.reshape(shape) + beta.reshape(shape)
        sig = torch.sigmoid(z)
        gz = dy * sig * (1 + z * (1 - sig))
        return torch.ops.aten.native_group_norm_backward(gz, x, mean, rstd, gamma, n, c, m, groups,
                                                         [True, True, True])
    return run


GROUP_NORM_SWISH_GRAD = OpSpec(
    name="group_norm_swish_grad",
    aclnn="aclnnGroupNormSwishGrad",
    summary="Gradient of group_norm_swish with respect to x, gamma and beta.",
    params=(
        Tensor("dy", "dy", "gradient of the forward output y, (N, C, *)", dtypes=FLOATS),
        Tensor("mean", "mean", "the forward's mean, (N, num_groups); used as given", dtypes=FLOATS),
        Tensor("rstd", "rstd", "the forward's rstd, (N, num_groups); used as given", dtypes=FLOATS),
        Tensor("x", "x", "the forward input, dy's shape", dtypes=FLOATS),
        Tensor("gamma", "gamma", "the forward's scale, (C,)", dtypes=FLOATS),
        Tensor("beta", "beta", "the forward's shift, (C,) (needed to recompute the swish input)",
               dtypes=FLOATS),
        Scalar("num_groups", "numGroups", NUM_GROUPS_DOC, c_kind="int64"),
        Scalar("data_format", "dataFormatOptional", DATA_FORMAT_DOC, c_kind="string", default="NCHW"),
        Double("swish_scale", "swishScale", 1.0, "s in y = z * sigmoid(s * z)"),
        Scalar("dgamma_is_require", "dgammaIsRequire", "compute dgamma", c_kind="bool", default=True),
        Scalar("dbeta_is_require", "dbetaIsRequire", "compute dbeta", c_kind="bool", default=True),
    ),
    outputs=(
        Output("dx", "dxOut", "gradient of x, x's shape", dtypes=FLOATS),
        Output("dgamma", "dgammaOut", "gradient of gamma, (C,)", dtypes=FLOATS, required_by="dgamma_is_require"),
        Output("dbeta", "dbetaOut", "gradient of beta, (C,)", dtypes=FLOATS, required_by="dbeta_is_require"),
    ),
    infer=lambda a: [(a.x.shape, a.dy.dtype), (a.gamma.shape, a.dy.dtype), (a.gamma.shape, a.dy.dtype)],
    check=BACKWARD_CHECKS,
    reference=reference.group_norm_swish_grad,
    example=_backward_example,
    on_launch=_note_launch,
    generated_api=True,
    notes="With M = (C/G)*HW, xhat = (x - mean) * rstd, z = xhat * gamma + beta and "
          "gz = dy * sig * (1 + s z (1 - sig)), sig = sigmoid(s z): dbeta = sum of gz and dgamma = "
          "sum of gz * xhat over N and HW, and dx = rstd * (gamma * gz - xhat * c2 - c1) with "
          "c1 = sum(gamma * gz) / M and c2 = sum(gamma * gz * xhat) / M over each group (the "
          "official formula omits the 1/M). Which swish derivative depends on the CANN release: "
          "the kernel of releases before 9.1.0 (8.1.RC1 among them) leaves swish_scale out of the "
          "second term, gz = dy * sig * (1 + z (1 - sig)) (the \"8.1\" formula); from 9.1.0 on it "
          "is the corrected one above (hicann/ops-nn fixed it on 2026-05-26). They agree when "
          "swish_scale is 1, so before 9.1.0 the grad is group_norm_swish's derivative at swish_scale "
          "1 only: a call with another scale on such a kernel gives a SwishGradFormulaWarning, once "
          "per process. The numpy backend computes the formula of the release it follows: "
          f"{CANN_VERSION_ENV} if set (e.g. 8.1.RC1), else the release in the version files of the "
          "CANN install the loader finds (read without loading any library), else the corrected "
          "one; ascend_aclnn.ops.group_norm.swish_grad_formula() says which and why, and "
          "use_swish_grad_formula() picks one for a block. mean and rstd are used as given, not "
          "recomputed; the "
          "swish is always applied (there is no activate_swish here). All nine tensors share one "
          "dtype: the float32 mean/rstd of a float16-x, float32-gamma forward must be cast first. "
          "Both backends compute in float64 and round once: to float32, then a 16-bit output half "
          "away from zero as the NPU's grad kernel does (the forward rounds to nearest even). The "
          "kernel computes in float32, where the terms of dx cancel when mean and rstd are not x's "
          "statistics (for a group of one element dx = -rstd * gamma * gz * xhat**2 is the "
          "difference of two equal terms and a small one): the binding's results are correctly "
          "rounded there, so they are the golden values such an NPU result is measured against. "
          "An output whose "
          "*_is_require flag is False is returned as None on both backends (the NPU zero-fills a "
          "float32 one and leaves a 16-bit one unwritten); an out= array for it is not touched. "
          "16-bit gradients: with 16-bit x the 16-bit mean and rstd dominate the error; fed the same "
          "statistics the kernel matches native_group_norm_backward, and PyTorch's own 16-bit "
          "autograd is further from the float64 truth than either. "
          "On Atlas A2/A3 with N > 2 the NPU sums dgamma/dbeta across N in a non-deterministic "
          "order; the binding's backends are deterministic. C / num_groups is limited to "
          f"{MAX_CHANNELS_PER_GROUP}. " + NON_FINITE_NOTE + " "
          + SHAPE_STATUS_NOTE.format(rules=BACKWARD_RULES, empty=""),
    torch_baseline=lambda torch, a: _torch_grad(torch, *a[:7]),
    selftest=("swish_grad", "determinism"),
)

def _f_group_norm_order(raw: dict[str, Any]) -> Optional[tuple[str, str]]:
    """F.group_norm(input, num_groups, weight, bias) passed positionally: gamma gets the int."""
    if _is_int(raw["gamma"]) and not _is_int(raw["num_groups"]):
        return ("num_groups", f"expected an int, got {describe(raw['num_groups'])}, with gamma the int "
                              f"{raw['gamma']!r}: that is F.group_norm's order (input, num_groups, weight, bias); "
                              "group_norm_swish takes (x, gamma, beta, num_groups, data_format, eps, ...)")
    return None


GROUP_NORM_SWISH = OpSpec(
    name="group_norm_swish",
    aclnn="aclnnGroupNormSwish",
    summary="Group normalisation of (N, C, *) followed by the swish activation z * sigmoid(s * z).",
    params=(
        Tensor("x", "x", "the input, (N, C, *), 2-D to 8-D", dtypes=FLOATS),
        Tensor("gamma", "gamma", "per-channel scale, (C,); float32 also with 16-bit x", dtypes=FLOATS),
        Tensor("beta", "beta", "per-channel shift, (C,); gamma's dtype", dtypes=FLOATS),
        Scalar("num_groups", "numGroups", NUM_GROUPS_DOC, c_kind="int64"),
        Scalar("data_format", "dataFormatOptional", DATA_FORMAT_DOC, c_kind="string", default="NCHW"),
        Double("eps", "eps", 1e-5, "added to the variance: rstd = 1 / sqrt(var + eps)"),
        Scalar("activate_swish", "activateSwish", "apply the swish (else y is the normalised z)",
               c_kind="bool", default=True),
        Double("swish_scale", "swishScale", 1.0, "s in y = z * sigmoid(s * z)"),
    ),
    outputs=(
        Output("y", "yOut", "the result, x's shape and dtype", dtypes=FLOATS),
        Output("mean", "meanOut", "per (sample, group) mean, (N, num_groups), gamma's dtype", dtypes=FLOATS),
        Output("rstd", "rstdOut", "per (sample, group) 1/sqrt(var + eps), (N, num_groups), gamma's dtype",
               dtypes=FLOATS),
    ),
    infer=lambda a: [(a.x.shape, a.x.dtype), (a.x.shape[:1] + (a.num_groups,), a.gamma.dtype),
                     (a.x.shape[:1] + (a.num_groups,), a.gamma.dtype)],
    check=FORWARD_CHECKS,
    reference=reference.group_norm_swish,
    example=_forward_example,
    notes="Per (sample, group) of M = (C/G)*HW values: biased variance, rstd = 1/sqrt(var + eps); "
          "z = (x - mean) * rstd * gamma + beta (the affine comes before the swish); y = z * "
          "sigmoid(swish_scale * z) when activate_swish, else z. PyTorch has no fused op: this is "
          "native_group_norm then z * sigmoid(s * z). Allowed (x, gamma = beta) dtypes: (float32, "
          "float32), (float16, float16), (bfloat16, bfloat16), (float16, float32), (bfloat16, "
          "float32); mean and rstd take gamma's dtype. 16-bit inputs are computed in float32 (eps "
          "too is rounded to float32) and y rounded once to nearest even. " + NON_FINITE_NOTE + " "
          + SHAPE_STATUS_NOTE.format(rules=FORWARD_RULES, empty=", an empty tensor (which the tiling "
                                     "accepts; the documentation says unsupported)"),
    # mean and rstd come from the forward at the base point; all three gradients checked.
    backward=Backward("group_norm_swish_grad", "finite-difference",
                      lambda a, y, g: ((g, y[1], y[2], a["x"], a["gamma"], a["beta"], a["num_groups"],
                                        a["data_format"], a["swish_scale"], True, True), {}),
                      inputs=("x", "gamma", "beta"), also_at={"swish_scale": 2.0}, kernel_note=_gradcheck_note,
                      refuse=lambda a: None if a["activate_swish"] else
                      "activate_swish=False: group_norm_swish_grad always differentiates the swish"),
    differentiable=True,
    torch_function="GroupNormSwish",
    torch_baseline=lambda torch, a: _torch_forward(torch, *a),
    selftest=("tiling_status",),
    misordered=_f_group_norm_order,
    generated_api=True,
)
