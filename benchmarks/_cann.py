"""What the stream benchmarks share: this checkout's package, and a CANN to run on."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def cann_or_simulator() -> Optional[str]:
    """Without CANN (ASCEND_HOME_PATH unset), build the simulator from the package's sources
    as `bench --npu` does and point ASCEND_HOME_PATH at it. None, or why it could not."""
    if os.environ.get("ASCEND_HOME_PATH"):
        return None
    from ascend_aclnn.tools.bench_npu import simulator_prefix
    prefix, why = simulator_prefix()
    if prefix is None:
        return f"no CANN and no simulator: {why}"
    os.environ["ASCEND_HOME_PATH"] = prefix
    return None
