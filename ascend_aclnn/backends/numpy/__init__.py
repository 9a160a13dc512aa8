"""The numpy backend: runs the reference, then places results as the npu backend would."""
from __future__ import annotations

from typing import Any

import numpy as np

from ...cann.constants import ACL_ERROR_RT_AICORE_EXCEPTION, ACL_ERROR_RT_MEMORY_ALLOCATION
from ...errors import AclnnError
from ...ops.spec import Args, OpSpec, TensorArg
from ...reference._faults import KernelFault
from ...tensors import DeviceArray


def _host(value: Any) -> Any:
    if isinstance(value, TensorArg):
        return value.value._host if isinstance(value.value, DeviceArray) else value.value
    return value


def run(spec: OpSpec, a: Args) -> Any:
    try:
        results = spec.reference(*(_host(a[p.name]) for p in spec.params))
    except MemoryError as exc:  # the host's out-of-memory, as the npu backend reports the device's
        raise AclnnError(ACL_ERROR_RT_MEMORY_ALLOCATION, spec.aclnn,
                         f"the numpy backend could not allocate host memory for this call ({exc})") from None
    except KernelFault as fault:
        # What the NPU reports for such input: the kernel faults, and the error surfaces
        # at the stream's synchronisation (for a device-resident result, when it is read).
        raise AclnnError(ACL_ERROR_RT_AICORE_EXCEPTION, "aclrtSynchronizeStream",
                         f"{spec.aclnn} would fault on the device: {fault}") from None
    if not isinstance(results, tuple):
        results = (results,)
    delivered = []
    for out, result, required in zip(a.outputs, results, spec.required(a)):
        if not required:
            delivered.append(None)
            continue
        result = np.asarray(result).astype(out.dtype, copy=False)
        if out.value is not None:
            np.copyto(_host(out), result)
            delivered.append(out.value)
        elif a.device_resident:
            delivered.append(DeviceArray(result.shape, result.dtype, host=np.ascontiguousarray(result)))
        else:
            delivered.append(result)
    return delivered[0] if len(delivered) == 1 else tuple(delivered)
