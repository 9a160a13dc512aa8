"""What a real CANN does that the binding must follow, checked on the simulator under the
release it was built as (ASCEND_SIM_CANN_VERSION; test_process.py runs this module again
under 8.1.RC1): handles an op_api may change in place, the deterministic option, whose
aclInit it is to finalize, and whether ACL can start again after a teardown."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

import ascend_aclnn as aa
import build as sim_build  # native/build.py
from ascend_aclnn.cann import version
from conftest import run_python

RELEASE = sim_build.default_version()
REINIT = version.at_least(RELEASE, version.REINIT_AFTER_FINALIZE)
READ_EACH_LAUNCH = version.at_least(RELEASE, version.DETERMINISM_READ_AT_EACH_LAUNCH)


def test_im2col_leaves_the_handles_it_is_given_alone(npu):
    """aclnnIm2col reformats a 4-D self to NCHW in place when the handle's storage dims
    equal its view dims; the pad operators then refuse it (formats differ). The binding's
    handles have 1-D storage, so the block's cached handle (NumPy upload reused through the
    allocator's cache, or a DeviceArray's own) is never changed."""
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    with aa.use_backend("numpy"):
        want_cols = aa.im2col(x, [2, 2], [1, 1], [0, 0], [1, 1])
        want_pad = aa.replication_pad2d(x, [1, 1, 1, 1])
        want_grad = aa.replication_pad2d_backward(want_pad, x, [1, 1, 1, 1])
    for put in (lambda a: a, aa.to_device):
        d = put(x)
        for _ in range(2):
            np.testing.assert_array_equal(np.asarray(aa.im2col(d, [2, 2], [1, 1], [0, 0], [1, 1])), want_cols)
            padded = aa.replication_pad2d(d, [1, 1, 1, 1])
            np.testing.assert_array_equal(np.asarray(padded), want_pad)
            np.testing.assert_array_equal(np.asarray(aa.replication_pad2d_backward(padded, d, [1, 1, 1, 1])),
                                          want_grad)


DETERMINISM = textwrap.dedent("""
    import ctypes, warnings, numpy as np, ascend_aclnn as aa
    from ascend_aclnn import determinism
    from ascend_aclnn.cann.loader import get_cann
    from ascend_aclnn.backends.npu import runtime
    warnings.simplefilter("error")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8, 3)).astype(np.float32)
    g, b = np.ones(8, np.float32), np.zeros(8, np.float32)
    img = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
    with aa.use_backend("numpy"):  # the inputs: no npu launch before the first set_deterministic
        y, mean, rstd = aa.group_norm_swish(x, g, b, 2)
        out, mask = aa.max_pool2d_with_mask(img, [3, 3], [1, 1], [1, 1], [1, 1])

    def ran_in(op):
        lib = ctypes.CDLL(str(get_cann().lib_dir / "libascendcl.so"))
        lib.aclsimLaunchDeterministic.restype, lib.aclsimLaunchDeterministic.argtypes = ctypes.c_int, [ctypes.c_char_p]
        return lib.aclsimLaunchDeterministic(op.encode())

    def run():
        aa.group_norm_swish_grad(np.ones_like(x), mean, rstd, x, g, b, 2)
        aa.max_pool2d_with_mask_backward(np.ones_like(out), img, mask, [3, 3], [1, 1], [1, 1], [1, 1])
        return ran_in("aclnnGroupNormSwishGrad"), ran_in("aclnnMaxPool2dWithMaskBackward")

    if SET_FIRST:
        aa.set_deterministic(True)
    print("first", run())
    try:
        aa.set_deterministic(not SET_FIRST)
        print("no warning")
    except RuntimeWarning as w:
        print("warned", "reads the deterministic option once per operator" in str(w))
        warnings.simplefilter("ignore")
        aa.set_deterministic(not SET_FIRST)
    print("then", run())
    print("process", determinism.process_setting(runtime.get_runtime()),
          "context", determinism.context_setting(runtime.current_device()))
""")


@pytest.mark.parametrize("set_first", [True, False])
def test_deterministic_mode_reaches_the_kernels(sim, set_first):
    """Set before the first call, the mode reaches both non-deterministic kernels under
    every release (both setters are called). Switched after their first use, it reaches
    them at once where CANN reads it at each launch; under 8.1.RC1, which read it once per
    operator, the kernels keep their first mode and the binding warns once."""
    result = run_python(f"SET_FIRST = {set_first}\n" + DETERMINISM, sim, ASCEND_ACLNN_BACKEND="npu")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    lines = result.stdout.splitlines()
    first, now = (1, 1) if set_first else (0, 0), (0, 0) if set_first else (1, 1)
    assert lines[0] == f"first {first}"
    if READ_EACH_LAUNCH:
        assert lines[1:3] == ["no warning", f"then {now}"], lines
    else:
        assert lines[1:3] == ["warned True", f"then {first}"], lines
    assert lines[3] == f"process {int(not set_first)} context {int(not set_first)}"


HOST_FRAMEWORK = textwrap.dedent("""
    import ctypes, os, numpy as np
    # A host framework (torch_npu's role) initialises ACL first and keeps using it.
    lib = ctypes.CDLL(os.path.join(os.environ["ASCEND_HOME_PATH"], "lib64", "libascendcl.so"), mode=ctypes.RTLD_GLOBAL)
    print("host init", lib.aclInit(None))
    import ascend_aclnn as aa
    from ascend_aclnn.backends.npu import runtime
    y = aa.upsample_nearest_exact1d(np.ones((1, 1, 2), np.float32), [3])
    print("owns", runtime.get_runtime().owns_acl)
    runtime.get_runtime().teardown()
    print("host still works", lib.aclrtSetDevice(0), lib.aclrtResetDevice(0))
    y = aa.upsample_nearest_exact1d(np.ones((1, 1, 2), np.float32), [3])  # ACL is the host's: up still
    print("again", y.tolist())
""")


def test_acl_initialised_by_a_host_framework_is_never_finalized(sim):
    """aclInit returned 100002 (someone else initialised ACL): the binding's teardown
    releases its own streams, memory and devices but leaves aclFinalize to its owner, so
    the host keeps working (the simulator's aclFinalize tears down everyone's ACL, as the
    real one does)."""
    result = run_python(HOST_FRAMEWORK, sim, ASCEND_ACLNN_BACKEND="npu")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert result.stdout.splitlines() == ["host init 0", "owns False", "host still works 0 0",
                                          "again [[[1.0, 1.0, 1.0]]]"], result.stdout


REINIT_CODE = textwrap.dedent("""
    import numpy as np, ascend_aclnn as aa
    from ascend_aclnn.backends.npu import runtime
    x = np.ones((1, 1, 2), np.float32)
    aa.upsample_nearest_exact1d(x, [3])
    runtime.get_runtime().teardown()
    try:
        print("again", aa.upsample_nearest_exact1d(x, [3]).tolist())
    except RuntimeError as e:
        print("refused", str(e))
""")


def test_a_second_start_after_teardown_follows_the_release(sim):
    """After the binding's own aclFinalize, CANN releases before 9.0 cannot aclInit again
    (once per process): the binding says so instead of trying; newer ones start again."""
    result = run_python(REINIT_CODE, sim, ASCEND_ACLNN_BACKEND="npu")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    if REINIT:
        assert result.stdout.strip() == "again [[[1.0, 1.0, 1.0]]]"
    else:
        assert result.stdout.startswith(f"refused the npu runtime was torn down (teardown()) and CANN {RELEASE} "
                                        "supports aclInit once per process"), result.stdout


def test_status_names_are_spelled_as_cann_spells_them():
    """Status names come from CANN's headers letter for letter, misspellings included, so a
    message can be searched for in CANN's documentation and logs (8.1.RC1 defines 561105 as
    ACLNN_ERR_INNER_KEY_CONFILICT)."""
    from ascend_aclnn.cann.constants import STATUS
    assert STATUS[561105][0] == "ACLNN_ERR_INNER_KEY_CONFILICT"
    assert STATUS[561002][0] == "ACLNN_ERR_INNER_TILING_ERROR"
    assert STATUS[107002][0] == "ACL_ERROR_RT_CONTEXT_NULL"
