"""python -m ascend_aclnn {info,compare,gradcheck}: see ascend_aclnn/cli.py."""
import sys

from .tools.cli import main

sys.exit(main())
