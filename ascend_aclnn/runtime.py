"""Layer 2: the ACL runtime (thin): init, devices, one stream per device, device memory.

Used by the npu backend only. Device memory goes through a per-device caching allocator,
so steady-state calls do no aclrtMalloc/aclrtFree. Whatever a launched operator touches
(inputs, outputs, a replaced workspace) is kept alive by its stream until the stream is
synchronised: work runs asynchronously, and memory released early would be reused under
a kernel that has not run yet.
"""
from __future__ import annotations

import atexit
import ctypes
import threading
from typing import Any, Callable

from .cann.constants import (ACL_ERROR_REPEAT_INITIALIZE, ACL_ERROR_RT_MEMORY_ALLOCATION,
                             ACL_MEM_MALLOC_HUGE_FIRST, AclrtMemcpyKind)
from .cann.loader import Cann, get_cann
from .errors import AclnnError

ALIGNMENT = 512  # bytes; also satisfies aclCreateTensor's 32-byte alignment rule


def recent_error_message(cann: Cann) -> str | None:
    raw = cann.function("aclGetRecentErrMsg")()
    return raw.decode("utf-8", "replace").strip() if raw else None


def check(cann: Cann, status: int, api: str) -> None:
    """The one place a C status becomes an exception."""
    if status != 0:
        raise AclnnError(status, api, recent=recent_error_message(cann))


class DeviceBuffer:
    """A block of device memory; returned to its allocator's cache when released."""

    __slots__ = ("allocator", "ptr", "nbytes")

    def __init__(self, allocator: "Allocator", ptr: int, nbytes: int):
        self.allocator, self.ptr, self.nbytes = allocator, ptr, nbytes

    def release(self) -> None:
        if self.ptr:
            ptr, self.ptr = self.ptr, 0
            self.allocator.give_back(ptr, self.nbytes)

    __del__ = release


class Allocator:
    """Caching device allocator: freed blocks are kept by (rounded) size and reused."""

    def __init__(self, device: "Device"):
        self.device = device
        self._free: dict[int, list[int]] = {}
        self._lock = threading.Lock()
        self.closed = False
        self.live_bytes = 0
        self.cached_bytes = 0

    def alloc(self, nbytes: int) -> DeviceBuffer:
        size = max(ALIGNMENT, -(-nbytes // ALIGNMENT) * ALIGNMENT)
        with self._lock:
            blocks = self._free.get(size)
            if blocks:
                self.cached_bytes -= size
                self.live_bytes += size
                return DeviceBuffer(self, blocks.pop(), size)
        ptr = self._malloc(size)
        with self._lock:
            self.live_bytes += size
        return DeviceBuffer(self, ptr, size)

    def _malloc(self, size: int) -> int:
        cann, out = self.device.cann, ctypes.c_void_p()
        self.device.activate()
        status = cann.function("aclrtMalloc")(ctypes.byref(out), size, ACL_MEM_MALLOC_HUGE_FIRST)
        if status == ACL_ERROR_RT_MEMORY_ALLOCATION:
            # Out of memory: let pending work finish, return the cache, and try once more.
            self.device.synchronize()
            self.empty_cache()
            status = cann.function("aclrtMalloc")(ctypes.byref(out), size, ACL_MEM_MALLOC_HUGE_FIRST)
        check(cann, status, "aclrtMalloc")
        return out.value

    def give_back(self, ptr: int, size: int) -> None:
        if self.closed:
            return  # after teardown the device reset has reclaimed everything
        with self._lock:
            self.live_bytes -= size
            self.cached_bytes += size
            self._free.setdefault(size, []).append(ptr)

    def empty_cache(self) -> None:
        with self._lock:
            blocks = [p for ptrs in self._free.values() for p in ptrs]
            self._free.clear()
            self.cached_bytes = 0
        free = self.device.cann.function("aclrtFree")
        statuses = [free(ptr) for ptr in blocks]  # free them all before reporting a failure
        check(self.device.cann, next((st for st in statuses if st), 0), "aclrtFree")


class Stream:
    """A device's default stream, its growing workspace, and what its pending work uses."""

    def __init__(self, device: "Device"):
        self.device = device
        handle = ctypes.c_void_p()
        device.activate()
        check(device.cann, device.cann.function("aclrtCreateStream")(ctypes.byref(handle)), "aclrtCreateStream")
        self.handle = handle.value
        self._pending: list[Any] = []
        self._workspace: DeviceBuffer | None = None

    def keep_alive(self, *objects: Any) -> None:
        self._pending.extend(objects)

    def workspace(self, nbytes: int) -> int | None:
        """Address of a workspace of at least nbytes, grown rather than allocated per call."""
        if nbytes == 0:
            return None
        ws = self._workspace
        if ws is None or ws.nbytes < nbytes:
            if ws is not None:
                self._pending.append(ws)  # queued kernels may still use the old one
            ws = self._workspace = self.device.allocator.alloc(max(nbytes, 2 * (ws.nbytes if ws else 0)))
        return ws.ptr

    @property
    def has_pending_work(self) -> bool:
        return bool(self._pending)

    def synchronize(self) -> None:
        try:
            check(self.device.cann, self.device.cann.function("aclrtSynchronizeStream")(self.handle),
                  "aclrtSynchronizeStream")
        finally:
            self._pending.clear()

    def drop_workspace(self) -> None:
        if self._workspace is not None:
            self._workspace.release()
            self._workspace = None

    def destroy(self) -> None:
        self.synchronize()
        self.drop_workspace()
        check(self.device.cann, self.device.cann.function("aclrtDestroyStream")(self.handle), "aclrtDestroyStream")


class Device:
    def __init__(self, cann: Cann, index: int):
        self.cann, self.index = cann, index
        self.allocator = Allocator(self)
        self._stream: Stream | None = None
        self.set_device_calls = 0

    def activate(self) -> None:
        """Make this the calling thread's current ACL device (ACL contexts are per thread)."""
        if getattr(_thread_state, "device", None) != self.index:
            check(self.cann, self.cann.function("aclrtSetDevice")(self.index), "aclrtSetDevice")
            self.set_device_calls += 1
            _thread_state.device = self.index
            if self.set_device_calls == 1:  # this device's context was just made: configure it
                for hook in context_hooks:
                    hook(self)

    @property
    def stream(self) -> Stream:
        if self._stream is None:
            self._stream = Stream(self)
        return self._stream

    def synchronize(self) -> None:
        if self._stream is not None:
            self._stream.synchronize()

    def empty_cache(self) -> None:
        if self._stream is not None:
            self._stream.synchronize()
            self._stream.drop_workspace()
        self.allocator.empty_cache()

    def upload(self, host: Any, nbytes: int) -> DeviceBuffer:
        """Copy nbytes from a host address (or ctypes buffer) into fresh device memory."""
        buf = self.allocator.alloc(nbytes)
        if nbytes:
            check(self.cann, self.cann.function("aclrtMemcpy")(
                buf.ptr, buf.nbytes, host, nbytes, AclrtMemcpyKind.ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy")
        return buf

    def zero(self, buf: DeviceBuffer, nbytes: int, wait: bool) -> None:
        """Zero the first nbytes of buf now (aclrtMemset is synchronous). With wait, queued
        work is finished first, so none of it can write to buf afterwards."""
        if wait:
            self.synchronize()
        if nbytes:
            self.activate()
            check(self.cann, self.cann.function("aclrtMemset")(buf.ptr, buf.nbytes, 0, nbytes), "aclrtMemset")

    def download(self, buf: DeviceBuffer, offset: int, host: Any, nbytes: int) -> None:
        """Copy device bytes [offset, offset+nbytes) of buf to a host address, after the
        stream has finished the work that writes them."""
        self.synchronize()
        if nbytes:
            check(self.cann, self.cann.function("aclrtMemcpy")(
                host, nbytes, buf.ptr + offset, nbytes, AclrtMemcpyKind.ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy")

    def teardown(self) -> None:
        if self._stream is not None:
            self._stream.destroy()
            self._stream = None
        self.allocator.empty_cache()
        self.allocator.closed = True
        for _ in range(self.set_device_calls):
            check(self.cann, self.cann.function("aclrtResetDevice")(self.index), "aclrtResetDevice")
        self.set_device_calls = 0


_thread_state = threading.local()

# Called with each Device right after its first aclrtSetDevice in this runtime, while its
# context is current: settings that live in a device's context (e.g. determinism) are
# applied there, so they also reach devices activated later.
context_hooks: list[Callable[[Device], None]] = []


class Runtime:
    """aclInit once per process, devices on first use, orderly teardown at exit."""

    def __init__(self, cann: Cann):
        self.cann = cann
        status = cann.function("aclInit")(None)
        if status != ACL_ERROR_REPEAT_INITIALIZE:
            check(cann, status, "aclInit")
        count = ctypes.c_uint32()
        check(cann, cann.function("aclrtGetDeviceCount")(ctypes.byref(count)), "aclrtGetDeviceCount")
        self.device_count = count.value
        self.devices: dict[int, Device] = {}
        self._lock = threading.Lock()
        self.finalized = False
        atexit.register(self.teardown)

    def device(self, index: int) -> Device:
        dev = self.devices.get(index)
        if dev is None:
            with self._lock:
                dev = self.devices.get(index)
                if dev is None:
                    if not 0 <= index < self.device_count:
                        raise AclnnError(107001, "aclrtSetDevice",
                                         f"device {index} requested, but this host has "
                                         f"{self.device_count} NPU(s) (valid: 0..{self.device_count - 1})",
                                         argument="device")
                    dev = self.devices[index] = Device(self.cann, index)
        return dev

    def synchronize(self) -> None:
        for dev in list(self.devices.values()):
            dev.synchronize()

    def empty_cache(self) -> None:
        for dev in list(self.devices.values()):
            dev.empty_cache()

    def teardown(self) -> None:
        """Release streams, cached memory and devices, then aclFinalize. Never raises:
        it runs at interpreter exit, when an exception can only produce noise."""
        if self.finalized:
            return
        self.finalized = True
        for dev in list(self.devices.values()):
            try:
                dev.teardown()
            except Exception:
                pass
        self.devices.clear()
        _thread_state.__dict__.clear()
        try:
            self.cann.function("aclFinalize")()
        except Exception:
            pass


_runtime: Runtime | None = None
_runtime_lock = threading.Lock()
_current_device = 0


def get_runtime() -> Runtime:
    global _runtime
    if _runtime is None or _runtime.finalized:
        with _runtime_lock:
            if _runtime is None or _runtime.finalized:
                _runtime = Runtime(get_cann())
    return _runtime


def runtime_if_started() -> Runtime | None:
    return _runtime if _runtime is not None and not _runtime.finalized else None


def current_device() -> Device:
    return get_runtime().device(_current_device)


def set_current_device_index(index: int) -> None:
    global _current_device
    _current_device = index


def current_device_index() -> int:
    return _current_device
