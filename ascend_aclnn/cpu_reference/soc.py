"""The SoC the numpy backend answers for, where CANN's op_apis branch on it (aclrtGetSocName
on a host): ASCEND_ACLNN_SOC_NAME, else an Atlas A2's name."""
from __future__ import annotations

import os
from typing import Optional

__all__ = ["SOC_NAME_ENV", "DEFAULT_SOC", "soc_name", "npu_arch"]

SOC_NAME_ENV = "ASCEND_ACLNN_SOC_NAME"
DEFAULT_SOC = "Ascend910B3"

# aclrtGetSocName's prefixes -> CANN's NPU architecture (the op_apis branch on it), as CANN's
# platform table maps them (hicann/ops-nn tests/ut/op_api/stub/opdev/platform.cpp); the first
# match wins. DAV_2201 is the Atlas A2/A3.
_SOC_ARCH = (("Ascend910B", "DAV_2201"), ("Ascend910_93", "DAV_2201"), ("Ascend950", "DAV_3510"),
             ("Ascend310P", "DAV_2002"), ("Ascend310B", "DAV_3002"), ("Ascend910", "DAV_1001"),
             ("Ascend310", "DAV_2002"))


def soc_name() -> str:
    """The SoC the numpy backend follows: ASCEND_ACLNN_SOC_NAME, else an Atlas A2's name."""
    return os.environ.get(SOC_NAME_ENV, "").strip() or DEFAULT_SOC


def npu_arch(soc: Optional[str] = None) -> str:
    """The NPU architecture of a SoC name (default soc_name()), "" for one CANN's table lacks."""
    soc = soc_name() if soc is None else soc
    return next((arch for prefix, arch in _SOC_ARCH if soc.startswith(prefix)), "")
