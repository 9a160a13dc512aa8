"""The deterministic option (ACL_OPT_DETERMINISTIC): the process-level pair
aclrtSetSysParamOpt/aclrtGetSysParamOpt beside the context-level one, and which mode
each launch actually ran in (aclsimLaunchDeterministic), as each release's nnopbase
reads the option:

- newest (9.2.0, hicann/opbase master): the process-level value, read at every phase 1
  and kept by that executor, for op_api and generated operators alike; the runtime's
  context setter stores the process-level value too (hicann/runtime rtCtxSetSysParamOpt);
- 8.1.RC1 (hicann/opbase's oldest source, 313b014): the calling thread's context value,
  read once per op_api operator at its first use and once for every generated operator
  (GroupNormSwish(Grad)) at the first use of any, as value == 1.

Each case runs in a fresh process: what was read once stays read for the process.
"""
from __future__ import annotations

import pytest

from .expected import native_build

PRELUDE = """
    s = sc.Sim(os.environ["SIMDIR"])
    s.ok(s.aclInit(None)); s.ok(s.aclrtSetDevice(0))
    st = c_void_p(); s.ok(s.aclrtCreateStream(byref(st))); st = st.value
    F32, ND = sc.ACL_FLOAT, sc.FMT_ND
    v = ctypes.c_int64()

    def T(shape, n=None):
        return s.tensor(shape, F32, s.malloc(4 * (n or int(np.prod(shape)) or 1)), fmt=ND)

    def arguments(op):
        # the arguments of a small call of op (made with the current device)
        if op == "aclnnReplicationPad2d":
            args = (T([1, 1, 2, 2]), s.int_array([1, 1, 1, 1]), T([1, 1, 4, 4]))
        elif op == "aclnnReplicationPad2dBackward":
            args = (T([1, 1, 4, 4]), T([1, 1, 2, 2]), s.int_array([1, 1, 1, 1]), T([1, 1, 2, 2]))
        elif op == "aclnnIm2col":
            args = (T([1, 2, 2]), s.int_array([1, 1]), s.int_array([1, 1]), s.int_array([0, 0]),
                    s.int_array([1, 1]), T([1, 4]))
        elif op == "aclnnGroupNormSwish":
            args = (T([2, 2, 2]), T([2]), T([2]), 1, None, 1e-5, True, 1.0, T([2, 2, 2]), T([2, 1]), T([2, 1]))
        elif op == "aclnnGroupNormSwishGrad":
            x, stats, vec = T([2, 2, 2]), T([2, 1]), T([2])
            args = (x, stats, stats, x, vec, vec, 1, None, 1.0, True, True, T([2, 2, 2]), T([2]), T([2]))
        return args

    def executor(op, args=None):
        # phase 1 of op (on the calling thread); the executor and its workspace size
        rc, ws, ex = s.phase1(op, *(args or arguments(op)))
        assert rc == 0, s.err()
        return ex, ws

    def launch(op, ex=None, ws=0):
        # phase 2 (of a new executor if none is given), synced; the mode it ran in
        if ex is None:
            ex, ws = executor(op)
        s.ok(getattr(s, op)(s.malloc(ws) if ws else None, ws, ex, st), op)
        s.ok(s.aclrtSynchronizeStream(st))
        return s.launched_deterministic(op)

    def ctx(value):
        s.ok(s.aclrtCtxSetSysParamOpt(0, value), "aclrtCtxSetSysParamOpt")

    def proc(value):
        s.ok(s.aclrtSetSysParamOpt(0, value), "aclrtSetSysParamOpt")
"""

PAD, PAD_BWD, IM2COL = "aclnnReplicationPad2d", "aclnnReplicationPad2dBackward", "aclnnIm2col"
GNS, GNS_GRAD = "aclnnGroupNormSwish", "aclnnGroupNormSwishGrad"


@pytest.fixture
def run(profile_builds, run_script):
    def go(version, body):
        return run_script(PRELUDE + body, env={"SIMDIR": str(profile_builds[version])})
    return go


def test_generated_operators_are_registered_as_such():
    generated = {op for src in native_build.SOURCES.values() if src.generated for op in src.operators}
    assert generated == {GNS, GNS_GRAD}


@pytest.mark.parametrize("version", ["8.1.RC1", "9.2.0"])
def test_the_process_level_pair(run, version):
    """No aclInit or device needed; 0 until set (no "not set" status); unknown options and
    values as the ACL layer and the runtime refuse them; kept across aclFinalize. The
    deterministic levels: [0, 4) in the newest runtime, [0, 2) before it."""
    top = 4 if version == "9.2.0" else 2
    run(version, f"""
    s.ok(s.aclrtDestroyStream(st)); s.ok(s.aclrtResetDevice(0))     # no current device from here on
    assert s.aclrtGetSysParamOpt(0, byref(v)) == 0 and v.value == 0
    assert s.aclrtGetSysParamOpt(1, byref(v)) == 0 and v.value == 0
    assert s.aclrtSetSysParamOpt(2, 1) == sc.ACL_ERROR_INVALID_PARAM and "opt 2" in s.err()
    assert s.aclrtGetSysParamOpt(-1, byref(v)) == sc.ACL_ERROR_INVALID_PARAM
    assert s.aclrtGetSysParamOpt(0, None) == sc.RT_PARAM_INVALID
    assert s.aclrtSetSysParamOpt(0, {top}) == sc.RT_PARAM_INVALID and "[0, {top})" in s.err()
    assert s.aclrtCtxSetSysParamOpt(0, {top}) == sc.RT_PARAM_INVALID    # the context setter's range too
    assert s.aclrtSetSysParamOpt(1, 2) == sc.RT_PARAM_INVALID and s.aclrtSetSysParamOpt(0, -1) == sc.RT_PARAM_INVALID
    proc({top - 1}); proc(1)
    s.ok(s.aclFinalize())
    assert s.aclrtGetSysParamOpt(0, byref(v)) == 0 and v.value == 1       # no aclInit needed; kept
    """)


@pytest.mark.parametrize("version", ["8.1.RC1", "9.2.0"])
def test_the_context_setter_writes_the_process_value_too(run, version):
    """The runtime's context setter stores the process-level value as well; the process
    setter leaves the contexts alone."""
    run(version, """
    ctx(1)
    assert s.aclrtGetSysParamOpt(0, byref(v)) == 0 and v.value == 1
    proc(0)
    assert s.aclrtCtxGetSysParamOpt(0, byref(v)) == 0 and v.value == 1
    assert s.aclrtGetSysParamOpt(0, byref(v)) == 0 and v.value == 0
    """)


def test_newest_every_phase_1_reads_the_process_value(run):
    run("9.2.0", f"""
    assert s.launched_deterministic({PAD!r}) == -1                    # never launched
    assert launch({PAD!r}) == 0 and launch({GNS!r}) == 0
    proc(1)
    assert launch({PAD!r}) == 1 and launch({GNS!r}) == 1 and launch({GNS_GRAD!r}) == 1
    proc(0)
    assert launch({PAD!r}) == 0 and launch({GNS!r}) == 0              # toggling works at any time
    proc(2)
    assert launch({PAD_BWD!r}) == 2                                   # the level, as the operator gets it
    ctx(1)                                                            # writes the process value too
    assert launch({PAD!r}) == 1 and launch({GNS_GRAD!r}) == 1
    """)


def test_newest_an_executor_keeps_the_mode_of_its_phase_1(run):
    """A repeatable executor runs every launch in the mode read when it was built."""
    run("9.2.0", f"""
    proc(1)
    ex, _ = executor({PAD!r})
    s.ok(s.aclSetAclOpExecutorRepeatable(ex))
    proc(0)
    assert launch({PAD!r}, ex) == 1 and launch({PAD!r}, ex) == 1
    assert launch({PAD!r}) == 0                                       # a new executor reads 0
    assert launch({PAD!r}, ex) == 1
    s.ok(s.aclDestroyAclOpExecutor(ex))
    """)


def test_newest_no_device_needed_on_the_setting_thread(run):
    run("9.2.0", f"""
    import threading
    th = threading.Thread(target=lambda: proc(1)); th.start(); th.join()
    assert launch({PAD!r}) == 1
    """)


def test_8_1_each_op_api_operator_reads_its_context_once_at_first_use(run):
    """Setting the option after an operator's first use changes nothing for it; an operator
    first used after the setting gets it; the process-level setter is not read at all."""
    run("8.1.RC1", f"""
    assert launch({PAD!r}) == 0
    ctx(1)
    assert launch({PAD!r}) == 0                                       # read once, at its first use
    assert launch({PAD_BWD!r}) == 1                                   # first used now
    ctx(0)
    assert launch({PAD_BWD!r}) == 1
    proc(1)
    assert launch({IM2COL!r}) == 0                                    # only the context value counts
    """)


def test_8_1_generated_operators_share_one_read(run):
    """GroupNormSwish's first use reads the context for GroupNormSwishGrad too."""
    run("8.1.RC1", f"""
    ctx(1)
    assert launch({GNS!r}) == 1
    ctx(0)
    assert launch({GNS!r}) == 1 and launch({GNS_GRAD!r}) == 1
    assert launch({PAD!r}) == 0                                       # op_api operators read their own
    """)


def test_8_1_a_first_use_on_a_thread_without_a_context_reads_0_for_good(run):
    """Phase 1 needs no device; where the calling thread has no context, nnopbase's read
    fails and it takes 0, which then stays for that operator."""
    run("8.1.RC1", f"""
    import threading
    ctx(1)
    box = {{}}
    args = arguments({PAD!r})
    def first_phase1():
        box["ex"] = executor({PAD!r}, args)
    th = threading.Thread(target=first_phase1); th.start(); th.join()
    assert launch({PAD!r}, *box["ex"]) == 0
    assert launch({PAD!r}) == 0                                       # on the main thread too
    assert launch({PAD_BWD!r}) == 1
    """)


@pytest.mark.parametrize("version", ["8.1.RC1", "9.2.0"])
def test_a_launch_without_a_kernel_is_not_recorded(run, version):
    """An empty-tensor success launches nothing, so it has no mode."""
    run(version, f"""
    proc(1); ctx(1)
    x0 = s.tensor([0, 1, 2, 2], F32, None, fmt=ND); out0 = s.tensor([0, 1, 4, 4], F32, None, fmt=ND)
    rc, ws, ex = s.phase1({PAD!r}, x0, s.int_array([1, 1, 1, 1]), out0)
    assert rc == 0, s.err()
    s.ok(s.aclnnReplicationPad2d(None, 0, ex, st)); s.ok(s.aclrtSynchronizeStream(st))
    assert s.launched_deterministic({PAD!r}) == -1
    assert s.launched_deterministic("aclnnNoSuchOperator") == -1
    assert s.aclsimLaunchDeterministic(None) == -1
    assert launch({PAD!r}) == 1
    """)
