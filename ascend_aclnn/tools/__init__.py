"""Command-line tools (``python -m ascend_aclnn ...``, the ``ascend-aclnn`` command):
cli.py (argument parsing), info.py, bench.py and bench_npu.py."""
