"""A NumPy masked array has no device form: to_device refuses it, and so does DeviceArray.copy_
(which used to upload its data and drop the mask), with the same exception on both backends."""
from __future__ import annotations

import numpy as np
import pytest

import ascend_aclnn as aa


def test_copy_refuses_a_masked_array_as_to_device_does(backend):
    src = np.ma.masked_array(np.arange(4, dtype=np.float32), mask=[False, True, False, True])
    with pytest.raises(TypeError, match=r"^array: a numpy.ma.MaskedArray has no device form"):
        aa.to_device(src)
    dst = aa.to_device(np.full(4, 7, np.float32))
    with pytest.raises(TypeError, match=r"^src: a numpy.ma.MaskedArray has no device form \(its mask would be "
                                        r"dropped\); pass src.filled\(value\)"):
        dst.copy_(src)
    assert dst.numpy().tolist() == [7, 7, 7, 7]  # nothing written
    # what the message offers works
    assert dst.copy_(src.filled(0)).numpy().tolist() == [0, 0, 2, 0]
    assert dst.copy_(src.data).numpy().tolist() == [0, 1, 2, 3]
