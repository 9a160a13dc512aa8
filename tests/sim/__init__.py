"""Tests of the CANN CPU simulator itself (native/), driven directly through ctypes.

A package, so that its conftest.py and its modules (test_pad.py, ...) get names of their
own (sim.conftest, sim.test_pad) beside tests/conftest.py and tests/test_pad.py.
"""
