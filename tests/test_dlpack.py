"""Host arrays of other libraries without PyTorch (issue 19, item 5): any DLPack producer on
the CPU is accepted as an input and as out= (the protocol, no import of its library), what
the binding returns can be read with np.from_dlpack, and importing the package imports no
torch. Each test fails on the code before."""
from __future__ import annotations

import numpy as np
import pytest

import ascend_aclnn as aa
from conftest import run_python

X = np.arange(30, dtype=np.float32).reshape(2, 3, 5)


class Producer:
    """A minimal DLPack producer (what JAX, CuPy host arrays, ... look like to the binding)."""

    def __init__(self, array: np.ndarray, device: tuple = (1, 0)):
        self.array, self.device = array, device

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.device


def test_a_dlpack_producer_is_accepted_as_an_input(backend):
    y = aa.upsample_nearest_exact1d(Producer(X), [8])
    assert type(y) is np.ndarray  # a producer of unknown kind: NumPy results
    np.testing.assert_array_equal(y, aa.upsample_nearest_exact1d(X, [8]))


def test_a_dlpack_producer_is_written_in_place_as_out_and_returned(backend):
    target = np.zeros((2, 3, 8), np.float32)
    out = Producer(target)
    if not np.from_dlpack(out).flags.writeable:  # NumPy before 2.1: every DLPack import is read-only
        with pytest.raises(aa.AclnnParamInvalidError, match=r"out: expected a writeable array, got a read-only "
                                                            r"DLPack export .*NumPy array or torch tensor as out="):
            aa.upsample_nearest_exact1d(X, [8], out=out)
        return
    r = aa.upsample_nearest_exact1d(X, [8], out=out)
    assert r is out
    np.testing.assert_array_equal(target, aa.upsample_nearest_exact1d(X, [8]))


def test_a_dlpack_producer_off_the_host_is_refused_in_one_line(backend):
    with pytest.raises(aa.AclnnParamInvalidError) as info:
        aa.upsample_nearest_exact1d(Producer(X, (2, 0)), [8])
    detail = str(info.value).splitlines()[-1]
    assert detail.startswith("  input: expected a host (CPU) array") and "device type 2" in detail


def test_what_the_binding_returns_reads_with_np_from_dlpack(backend):
    y = aa.upsample_nearest_exact1d(X, [8])
    np.testing.assert_array_equal(np.from_dlpack(y), y)
    out, mask = aa.max_pool2d_with_mask(np.ones((1, 1, 4, 4), np.float32), [2, 2], [2, 2], [0, 0], [1, 1])
    assert np.from_dlpack(mask).dtype == np.int8


def test_to_device_takes_a_dlpack_producer(backend):
    np.testing.assert_array_equal(aa.to_device(Producer(X)).numpy(), X)


def test_importing_the_package_imports_no_torch(sim):
    result = run_python("import sys, ascend_aclnn, ascend_aclnn.functions\n"
                        "import numpy as np\n"
                        "ascend_aclnn.upsample_nearest_exact1d(np.ones((1, 1, 2), np.float32), [4])\n"
                        "print('torch' in sys.modules)")
    assert result.stdout == "False\n", result.stdout + result.stderr


def test_ascend_aclnn_torch_without_torch_says_what_to_install(monkeypatch):
    import importlib
    import sys
    monkeypatch.setitem(sys.modules, "torch", None)  # as if PyTorch were not installed
    monkeypatch.delitem(sys.modules, "ascend_aclnn.torch", raising=False)
    with pytest.raises(ImportError, match=r"ascend_aclnn\.torch needs PyTorch \(pip install torch\); the rest of "
                                          r"ascend_aclnn works without it"):
        importlib.import_module("ascend_aclnn.torch")


def test_testing_is_an_attribute_imported_on_first_use():
    result = run_python("import sys, ascend_aclnn as aa\n"
                        "before = 'ascend_aclnn.testing' in sys.modules\n"
                        "import numpy as np\n"
                        "aa.testing.assert_close(np.ones(3, np.float32), np.ones(3, np.float32))\n"
                        "print(before, 'testing' in dir(aa), 'torch' in sys.modules)")
    assert result.stdout == "False True False\n", result.stdout + result.stderr
    with pytest.raises(AttributeError, match="module 'ascend_aclnn' has no attribute 'testin'"):
        aa.testin  # noqa: B018  a typo is still an AttributeError


def test_a_bfloat16_device_array_says_why_dlpack_cannot_carry_it(numpy_backend):
    d = aa.to_device(np.ones((2, 3), aa.bfloat16))
    with pytest.raises(BufferError, match=r"a bfloat16 DeviceArray cannot be exported through DLPack: NumPy.*"
                                          r"torch\.from_numpy\(d\.numpy\(\)\.view\(np\.int16\)\)\.view\(torch\.bfloat16\)"):
        d.__dlpack__()
    torch = pytest.importorskip("torch")
    with pytest.raises(BufferError, match="a bfloat16 DeviceArray cannot be exported through DLPack"):
        torch.from_dlpack(d)
    t = torch.from_numpy(d.numpy().view(np.int16)).view(torch.bfloat16)  # the way round it names
    assert t.dtype == torch.bfloat16 and t.float().sum().item() == 6.0
