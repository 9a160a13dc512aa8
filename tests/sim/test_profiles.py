"""CANN version profiles: build.py builds the simulator as one CANN release, records it
where a real install does, and the libraries report and behave as that release.

Expected values are written out by hand from the real trees: CANN 8.1.RC1's acl/acl.h
(ACL 1.13.0) and its runtime/ and opp/version.info (Version=7.7.0.1.238,
version_dir=8.1.RC1); hicann/runtime's newest acl_rt.h (ACL 1.17.0) and its
version.info form since 8.5.0 (Version=<release>, version_dir=cann).
"""
from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from .conftest import HERE, built_version
from .expected import native_build

EXPECTED = {  # release -> (ACL version, version.info Version=, version_dir=)
    "8.1.RC1": ((1, 13, 0), "7.7.0.1.238", "8.1.RC1"),
    "9.2.0": ((1, 17, 0), "9.2.0", "cann"),
}


def _keys(path):
    return dict(line.split("=", 1) for line in path.read_text().splitlines())


def test_the_profiles_are_8_1_rc1_and_the_newest():
    assert set(native_build.PROFILES) == set(EXPECTED)
    assert native_build.NEWEST == "9.2.0"


@pytest.mark.parametrize("version", sorted(EXPECTED))
def test_each_build_records_its_release_where_an_install_does(profile_builds, version):
    prefix = profile_builds[version].parent
    acl, package, vdir = EXPECTED[version]
    for rel in ("runtime/version.info", "opp/version.info"):
        assert _keys(prefix / rel) == {"Version": package, "version_dir": vdir}, rel
    arch = platform.machine()
    info = _keys(prefix / f"{arch}-linux" / "ascend_toolkit_install.info")
    assert info["version"] == version and info["arch"] == arch and info["os"] == "linux"
    assert info["path"] == str(prefix.resolve() / f"{arch}-linux")
    assert built_version(profile_builds[version]) == version


@pytest.mark.parametrize("version", sorted(EXPECTED))
def test_the_libraries_report_the_release_they_were_built_as(profile_builds, run_script, version):
    """aclrtGetVersion gives that release's ACL version; the internal accessor the
    operators branch on agrees, and orders releases as CANN names them."""
    acl = EXPECTED[version][0]
    # 8.1.RC1 is a release candidate of 8.1.0, so older than it
    at_least = {"8.0.RC1": 1, "8.1.RC1": 1, "8.1.0": int(version != "8.1.RC1"), "8.5.0": int(version != "8.1.RC1"),
                "9.2.0": int(version == "9.2.0"), "9.2.1": 0, "10.0.0": 0}
    run_script(f"""
        s = sc.Sim(os.environ["SIMDIR"])
        a, b, c = c_int32(), c_int32(), c_int32()
        assert s.aclrtGetVersion(byref(a), byref(b), byref(c)) == 0      # no aclInit needed
        assert (a.value, b.value, c.value) == {acl!r}, (a.value, b.value, c.value)
        s.acl.aclsim_profile_version.restype = ctypes.c_char_p
        assert s.acl.aclsim_profile_version() == {version!r}.encode()
        at_least = s.acl.aclsim_profile_at_least
        at_least.argtypes = [ctypes.c_char_p]
        for v, want in {at_least!r}.items():
            assert at_least(v.encode()) == want, v
    """, env={"SIMDIR": str(profile_builds[version])})


def test_a_malformed_release_in_the_accessor_aborts_loudly(profile_builds, tmp_path):
    code = (f"import ctypes; l = ctypes.CDLL({str(profile_builds['9.2.0'] / 'libascendcl.so')!r}); "
            "l.aclsim_profile_at_least.argtypes = [ctypes.c_char_p]; l.aclsim_profile_at_least(b'9.x')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode != 0 and "malformed CANN release '9.x'" in proc.stderr


def test_the_default_release_and_unknown_ones(monkeypatch, tmp_path):
    monkeypatch.delenv(native_build.VERSION_ENV, raising=False)
    assert native_build.default_version() == "9.2.0"
    monkeypatch.setenv(native_build.VERSION_ENV, "8.1.RC1")
    assert native_build.default_version() == "8.1.RC1"
    with pytest.raises(ValueError, match="unknown CANN version '8.2.RC1'"):
        native_build.build(tmp_path / "x", cann_version="8.2.RC1")
    assert not (tmp_path / "x").exists()  # refused before anything is written
    out = subprocess.run([sys.executable, str(HERE.parents[1] / "native" / "build.py"), "--prefix",
                          str(tmp_path / "y"), "--cann-version", "7.0.0"], capture_output=True, text=True)
    assert out.returncode == 2 and "invalid choice: '7.0.0'" in out.stderr
