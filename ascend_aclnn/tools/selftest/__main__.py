"""The child a probe runs in: ``python -m ascend_aclnn.tools.selftest PROBE[:VARIANT] FILE``."""
import sys

from .runner import child_main

sys.exit(child_main(sys.argv[1:]))
