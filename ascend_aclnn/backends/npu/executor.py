"""Repeatable executors: one operator call's phase 1, made once and run many times.

Phase 1 runs once on handles this object owns; aclSetAclOpExecutorRepeatable keeps the
executor alive across runs; before each run aclSetInputTensorAddr /
aclSetOutputTensorAddr (a raw operator's: aclSetTensorAddr) rebind the slots whose device
address changed, then phase 2 runs as an ordinary launch's does (launch.phase2). The
address setters write the new address into the aclTensor they are given, so these
handles are never shared with ordinary calls.
The handles must outlive the executor (its runs read the storages captured at
SetRepeatable): ``release`` destroys the executor first, then them.

An operator whose op_api hands its kernel a raw copy of a tensor's address (the setters
cannot rebind that copy) says so in its description (OpSpec.not_repeatable): no
repeatable executor is requested for it.
"""
from __future__ import annotations

import ctypes
from typing import Any, Callable, Optional, Sequence

from ...errors import AclnnError
from ...ops.checked_calls import CheckedCall
from ...tensors import DeviceArray
from . import handles, launch, runtime


class NotRepeatable(Exception):
    """CANN refused aclSetAclOpExecutorRepeatable for this call; the text says why."""


class RepeatableExecutor:
    """See the module docstring. ``addrs``: the device address of each tensor slot, the
    tensor parameters in C order, then the outputs. Each slot has a role: (is an output,
    index among the inputs or among the outputs) for a described operator, whose roles are
    known; (None, index among all the tensors) for a raw operator (ascend_aclnn.aclnn), whose
    written tensors are among its parameters. Which of those the operator only reads is a
    guess from the header (an input declared non-const counts as written, see
    cann.headers), so a raw operator's slots are rebound with aclSetTensorAddr, whose index
    counts every tensor in the C order of the parameters (inputs first, as a generated
    operator's IR has them): no role to get wrong. (For op_api operators CANN ignores the
    index and rebinds the handle it is given.) Plans have no tensor list or NULL tensor,
    so each slot is one tensor at its own place. Host values (aclScalar and the like) are
    made once, for phase 1, and kept with the executor, as its int arrays are."""

    def __init__(self, b: CheckedCall, addrs: Sequence[int], device: runtime.Device):
        f = launch.functions()
        cann = f.cann
        phase1, self._phase2 = f.operator(b.spec)
        self._device = device
        self._api = b.spec.aclnn
        self._cann = cann
        self.executor: Optional[int] = None
        self._tensors: list[int] = []
        self._int_arrays: list[int] = []
        self._host: list[tuple[str, int]] = []  # (destroy function name, handle)
        self.ninputs: int = len(b.tensor_params)
        roles: list[tuple[Optional[bool], int]] = []
        if b.spec.outputs:
            counts = [0, 0]
            for written in list(b.written) + [True] * len(b.outputs):
                roles.append((written, counts[written]))
                counts[written] += 1
        else:  # a raw operator: its outputs are among its parameters
            roles = [(None, slot) for slot in range(len(b.written))]
        self._roles = roles
        shapes = [(b.tensor_shapes[k], b.tensor_dtypes[k]) for k in range(self.ninputs)] + list(b.outputs)
        formats = list(b.formats) + list(b.out_formats)
        stream = device.stream
        try:
            with stream.lock:
                for (shape, dtype), fmt, addr in zip(shapes, formats, addrs):
                    self._tensors.append(handles.create_tensor(f.create, cann, shape, dtype, fmt, addr))
                c_args: list[Any] = list(b.template)
                for i, h in zip(b.tensor_params, self._tensors):
                    c_args[i] = h
                create_ints = cann.function("aclCreateIntArray")
                for i in b.int_params:
                    v = c_args[i]
                    if v is not None:
                        h = create_ints((ctypes.c_int64 * len(v))(*v), len(v))
                        if not h:
                            raise handles.creation_failed(cann, "aclCreateIntArray", repr(v))
                        self._int_arrays.append(h)
                        c_args[i] = h
                for i, p in b.host_params:
                    h = p.create(cann, c_args[i])
                    if not h:
                        raise handles.creation_failed(cann, "aclCreate" + p.c_kind[3:], f"{p.name} = {c_args[i]!r}")
                    self._host.append((p.destroy_name, h))
                    c_args[i] = h
                c_args += self._tensors[self.ninputs:]
                ws_size, executor = ctypes.c_uint64(0), ctypes.c_void_p()
                runtime.check(cann, phase1(*c_args, ctypes.byref(ws_size), ctypes.byref(executor)),
                              b.spec.phase1_name)
                self.executor = executor.value
                status = cann.function("aclSetAclOpExecutorRepeatable")(executor)
        except BaseException:
            self.release()
            raise
        if status:
            error = AclnnError(status, "aclSetAclOpExecutorRepeatable", recent=runtime.recent_error_message(cann))
            self.release()  # never launched: still ours to destroy
            raise NotRepeatable(str(error).splitlines()[0] + (f" ({error.recent})" if error.recent else ""))
        self.ws_size: int = ws_size.value
        self.bound: list[int] = list(addrs)
        self._set_in = cann.function("aclSetInputTensorAddr")
        self._set_out = cann.function("aclSetOutputTensorAddr")
        # (looked up only where used: a described operator's plan never needs it)
        self._set_any = cann.function("aclSetTensorAddr") if not b.spec.outputs else self._set_out

    def rebind(self, addrs: Sequence[int]) -> None:
        """Point the slots whose address changed at their new address. Call with the
        stream's lock held."""
        bound, roles = self.bound, self._roles
        for slot, addr in enumerate(addrs):
            if addr != bound[slot]:
                output, index = roles[slot]
                if output is None:
                    status, api = self._set_any(self.executor, index, self._tensors[slot], addr), "aclSetTensorAddr"
                elif not output:
                    status, api = self._set_in(self.executor, index, self._tensors[slot], addr), "aclSetInputTensorAddr"
                else:
                    status = self._set_out(self.executor, index, self._tensors[slot], addr)
                    api = "aclSetOutputTensorAddr"
                if status:
                    runtime.check(self._cann, status, api)
                bound[slot] = addr

    def run(self, stream: runtime.Stream, addrs: Sequence[int], in_use: list[Any], outputs: Sequence[DeviceArray],
            copies: Sequence[tuple[DeviceArray, DeviceArray]] = ()) -> None:
        """Rebind, then phase 2 as an ordinary launch does. Call with the stream's lock held."""
        if addrs != self.bound:
            self.rebind(addrs)
        workspace = stream.workspace(self.ws_size)
        if copies:
            launch.phase2(self._device, stream, self._phase2, self._api, self.executor, workspace, self.ws_size,
                          in_use, outputs, copies)
            return
        status = self._phase2(workspace, self.ws_size, self.executor, stream.handle)  # launch.phase2, unrolled
        stream.record(in_use, [arr._buffer for arr in outputs] if status == 0 else (), self._api)
        if status:
            runtime.check(self._cann, status, self._api)
        if launch.LAUNCH_BLOCKING:
            stream.synchronize()

    def release(self) -> None:
        """Destroy the executor, then the handles it was built with. Never raises: it may run
        from a stream's keep-alive release or from __del__. After teardown (the device reset
        reclaimed everything) or in a forked child, it only forgets them."""
        ex, self.executor = self.executor, None
        tensors, self._tensors = self._tensors, []
        arrays, self._int_arrays = self._int_arrays, []
        host, self._host = self._host, []
        if self._device.closed or runtime.in_forked_child():
            return
        destroy: Callable[[Any], int]
        try:
            if ex:
                self._cann.function("aclDestroyAclOpExecutor")(ex)
            destroy = self._cann.function("aclDestroyTensor")
            for h in tensors:
                destroy(h)
            destroy = self._cann.function("aclDestroyIntArray")
            for h in arrays:
                destroy(h)
            for name, h in host:
                self._cann.function(name)(h)
        except Exception:
            pass

    def __del__(self) -> None:
        if getattr(self, "executor", None) or getattr(self, "_tensors", None) or getattr(self, "_int_arrays", None) \
                or getattr(self, "_host", None):
            self.release()
