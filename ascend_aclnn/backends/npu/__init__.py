"""The npu backend: CANN's runtime (runtime.py: init, devices, streams, memory, the call
gate), aclTensor/aclIntArray handles (handles.py), the one two-phase caller (launch.py)
and repeatable executors for plans (executor.py).

Nothing is imported here, so the lower modules (runtime, handles) can be imported by the
tensors layer without pulling in the operator descriptions."""
