"""The package list, derived: every package under ascend_aclnn/, and the CANN simulator's
sources (native/: C sources, headers, build script, README), shipped inside the package as
ascend_aclnn._native so that `ascend-aclnn simulator build` works from a pip install.
Discovery alone cannot add a directory from outside the package (pyproject.toml maps it);
everything else is in pyproject.toml."""
from setuptools import find_packages, setup

setup(packages=find_packages(include=["ascend_aclnn", "ascend_aclnn.*"]) + ["ascend_aclnn._native"])
