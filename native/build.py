#!/usr/bin/env python3
"""Build the CANN CPU simulator libraries and install the operator headers.

    python native/build.py --prefix DIR [--layout cann8|split] [--arch-subdir]
                           [--cann-version 8.1.RC1|9.2.0] [--vendor NAME | --no-vendor]

or, from Python, ``build(prefix, layout="cann8", arch_subdir=False, cc=None,
cann_version=None, vendor=DEFAULT_VENDOR, installed_at=None)``, which returns the directory holding the libraries. See
native/README.md.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import uuid
from typing import NamedTuple

NATIVE = pathlib.Path(__file__).resolve().parent
SRC = NATIVE / "src"
INCLUDE = NATIVE / "include"  # aclnn/aclnn_base.h and aclnnop/*.h, installed as they are


class OpSource(NamedTuple):
    """One operator source under src/ops: the split-layout library that holds it
    (libopapi_<domain>.so), and each aclnn operator it defines with the aclnnop/
    header that declares it (CANN's file name; the source includes it).

    generated: its operators are generated APIs (CANN builds them from the op
    definition and runs them through nnopbase's own executor, with no op_api), as
    GroupNormSwish(Grad) are; nnopbase treats those differently (the deterministic
    option, native/README.md). The source is compiled with OPC_GENERATED_API=1."""
    domain: str
    operators: dict
    generated: bool = False
    # Plain functions it exports beside the operators (no executor), each with the
    # header that declares it (an operator's, or one of its own).
    helpers: dict = {}
    # Functions (operators or plain ones) newer than the oldest profile: name -> the first
    # release that has it. An older build neither exports it nor declares it in its header
    # (build(): compiled out with -DACLSIM_OMIT_<operator>, or the whole source left out when
    # it has none of its functions; install_headers(): its declarations dropped).
    since: dict = {}


# The only registration of an operator: its source, domain, name and header. The tests
# derive the exported symbols and the installed headers from this table.
SOURCES = {
    "upsample_nearest_exact1d.c": OpSource("cv", {
        "aclnnUpsampleNearestExact1d": "aclnn_upsample_nearest_exact1d.h",
        "aclnnUpsampleNearestExact1dBackward": "aclnn_upsample_nearest_exact1d_backward.h"}),
    "replication_pad2d.c": OpSource("math", {
        "aclnnReplicationPad2d": "aclnn_replication_pad2d.h",
        "aclnnReplicationPad2dBackward": "aclnn_pad2d_backward.h"}),
    "max_pool2d_with_mask.c": OpSource("nn", {
        "aclnnMaxPool2dWithMask": "aclnn_max_pool2d_with_indices.h",
        "aclnnMaxPool2dWithMaskBackward": "aclnn_max_pool2d_with_indices_backward.h"}),
    "im2col.c": OpSource("math", {"aclnnIm2col": "aclnn_im2col.h"}),
    "im2col_backward.c": OpSource("cv", {"aclnnIm2colBackward": "aclnn_im2col_backward.h"}),
    "group_norm_swish.c": OpSource("nn", {
        "aclnnGroupNormSwish": "aclnn_group_norm_swish.h",
        "aclnnGroupNormSwishGrad": "aclnn_group_norm_swish_grad.h"}, generated=True),
    "add.c": OpSource("math", {"aclnnAdd": "aclnn_add.h"}),
    "cat.c": OpSource("math", {"aclnnCat": "aclnn_cat.h"}),
    "split_tensor.c": OpSource("math", {"aclnnSplitTensor": "aclnn_split_tensor.h"}),
    "reduce_sum.c": OpSource("math", {"aclnnReduceSum": "aclnn_reduce_sum.h"}),
    "foreach_mul_scalar_list.c": OpSource("nn", {
        "aclnnForeachMulScalarList": "aclnn_foreach_mul_scalar_list.h"}),
    "trans_matmul_weight.c": OpSource("math", {"aclnnTransMatmulWeight": "aclnn_trans_matmul_weight.h"}, helpers={
        "aclnnCalculateMatmulWeightSize": "aclnn_trans_matmul_weight.h",
        "aclnnCalculateMatmulWeightSizeV2": "aclnn_trans_matmul_weight.h",
        "aclnnCalculateConvolutionWeightSize": "aclnn_trans_convolution_weight.h"}),
    "mm.c": OpSource("nn", {"aclnnMm": "aclnn_mm.h"}),
    # aclnnMatmulWeightNz: in hicann/ops-nn's aclnn_matmul.h from its first commit (so 8.5.0 on),
    # not in 8.1.RC1's
    "matmul.c": OpSource("nn", {"aclnnMatmul": "aclnn_matmul.h", "aclnnMatmulWeightNz": "aclnn_matmul.h"},
                         since={"aclnnMatmulWeightNz": "8.5.0"}),
    "nonzero.c": OpSource("math", {"aclnnNonzero": "aclnn_nonzero.h"}),
    "npu_format_cast.c": OpSource("math", {"aclnnNpuFormatCast": "aclnn_npu_format_cast.h"}, helpers={
        "aclnnNpuFormatCastCalculateSizeAndFormat": "aclnn_npu_format_cast.h"},
        since={"aclnnNpuFormatCast": "8.5.0", "aclnnNpuFormatCastCalculateSizeAndFormat": "8.5.0"}),
}
DOMAINS = ("cv", "math", "nn")  # every split-layout op library, even if empty
LAYOUTS = ("cann8", "split")
# Beside the operators' own headers: ACLNN_API, and the types they include.
HEADER_SUPPORT = ("aclnnop/aclnn_util.h", "aclnn/aclnn_base.h")
# Where CANN 8.x keeps the op_api headers a second time, under the prefix.
OPP_INCLUDE = pathlib.Path("opp/built-in/op_impl/ai_core/tbe/op_api/include")


def release_key(release: str) -> tuple:
    """A sort key of a release X.Y.Z or X.Y.RCn, a candidate before X.Y.0 (as the C side's
    aclsim_profile_at_least orders them)."""
    major, minor, last = release.split(".")
    rc = last.upper().startswith("RC")
    return int(major), int(minor), 0 if rc else 1, int(last[2:] if rc else last)


def in_release(fn: str, cann_version: str | None = None) -> bool:
    """Whether the release (default default_version()) has function fn (an operator or a
    plain function) of SOURCES."""
    first = next((src.since[fn] for src in SOURCES.values() if fn in src.since), None)
    return first is None or release_key(cann_version or default_version()) >= release_key(first)


def in_profile(source: str, cann_version: str | None = None) -> bool:
    """Whether a build as cann_version (default default_version()) compiles SOURCES[source]:
    whether the release has any of its functions."""
    src = SOURCES[source]
    return any(in_release(fn, cann_version) for fn in [*src.operators, *src.helpers])


def operators(domain: str | None = None, cann_version: str | None = None) -> dict:
    """aclnn operator -> its aclnnop/ header, for one split-layout domain or all, of the
    operators the release (default default_version()) has."""
    return {op: h for src in SOURCES.values() if domain in (None, src.domain) for op, h in src.operators.items()
            if in_release(op, cann_version)}


def helpers(domain: str | None = None, cann_version: str | None = None) -> dict:
    """Plain exported function (no executor) -> its aclnnop/ header, for one domain or all, of a
    build as cann_version (default default_version())."""
    return {fn: h for src in SOURCES.values() if domain in (None, src.domain) for fn, h in src.helpers.items()
            if in_release(fn, cann_version)}


def header_functions(header: str, cann_version: str | None = None) -> set:
    """Every function an installed aclnnop/ header of SOURCES declares."""
    return {sym for op, h in operators(cann_version=cann_version).items() if h == header
            for sym in entry_points(op)} | \
        {fn for fn, h in helpers(cann_version=cann_version).items() if h == header}


def entry_points(op: str) -> tuple:
    """The two functions an aclnn operator exports: phase 1, phase 2."""
    return (op + "GetWorkspaceSize", op)


def include_dirs(prefix, layout: str = "cann8", arch_subdir: bool = False) -> list:
    """The include directories build() fills, each holding aclnnop/ (and the first, aclnn/).

    Both layouts: <prefix>/include, or <prefix>/<arch>-linux/include with arch_subdir
    (in CANN the former is a link to the latter). cann8 also keeps the op headers in
    opp/built-in/op_impl/ai_core/tbe/op_api/include, as CANN 8.1.RC1 does."""
    prefix = pathlib.Path(prefix).resolve()
    dirs = [prefix / f"{platform.machine()}-linux" / "include" if arch_subdir else prefix / "include"]
    if layout == "cann8":
        dirs.append(prefix / OPP_INCLUDE)
    return dirs


class CannProfile(NamedTuple):
    """One simulated CANN release: what its install reports, and (compiled into
    libascendcl.so, which the other libraries ask) how it behaves.

    acl: aclrtGetVersion's (major, minor, patch).
    package_version: the Version= line of runtime/ and opp/version.info.
    version_dir: their version_dir= line."""
    acl: tuple
    package_version: str
    version_dir: str


# The releases the simulator can be built as. Each one's behaviour is chosen in the C
# sources with aclsim_profile_at_least(); see native/README.md for what differs.
PROFILES = {
    # CANN 8.1.RC1's acl/acl.h says ACL 1.13.0; its runtime/ and opp/version.info
    # carry the package version 7.7.0.1.238 and version_dir=8.1.RC1.
    "8.1.RC1": CannProfile((1, 13, 0), "7.7.0.1.238", "8.1.RC1"),
    # The newest behaviour the public sources show (hicann/opbase master reading the
    # process-level deterministic option for every operator, 60e4656, which the 9.1.0
    # branch does not have): the release after 9.1.0. hicann/runtime's headers there say
    # ACL 1.17.0, and since 8.5.0 its version.info carries the release itself with
    # version_dir=cann.
    "9.2.0": CannProfile((1, 17, 0), "9.2.0", "cann"),
}
NEWEST = "9.2.0"
VERSION_ENV = "ASCEND_SIM_CANN_VERSION"


def default_version() -> str:
    """The profile build() uses when given none: $ASCEND_SIM_CANN_VERSION, else NEWEST."""
    return os.environ.get(VERSION_ENV) or NEWEST


def _profile(version: str) -> CannProfile:
    if version not in PROFILES:
        raise ValueError(f"unknown CANN version {version!r}: the simulator can be built as "
                         f"{', '.join(PROFILES)}")
    return PROFILES[version]


def _profile_defines(version: str) -> list:
    """The compiler flags that build libascendcl.so as that release."""
    major, minor, patch = _profile(version).acl
    return [f'-DACLSIM_CANN_VERSION="{version}"', f"-DACLSIM_ACL_MAJOR={major}",
            f"-DACLSIM_ACL_MINOR={minor}", f"-DACLSIM_ACL_PATCH={patch}"]


class VendorPackage(NamedTuple):
    """The custom operator package build() installs as CANN installs one (its
    scripts/custom/install.sh): <prefix>/opp/vendors/<name>/op_api/lib/libcust_opapi.so
    and op_api/include/<header>, with <name> put first in the load_priority= line of
    <prefix>/opp/vendors/config.ini.

    operators: its own operators, source under src/ops/vendor -> {aclnn operator:
    header under include/vendor}. shadows: sources of SOURCES compiled into it again, so
    that it also exports those built-in operators: a loader that searches the vendor
    packages first (as op-plugin's does) answers them from libcust_opapi.so, which a
    test can tell with dladdr. No header of the package declares them."""
    operators: dict
    shadows: tuple


VENDOR = VendorPackage({"custom_masked_scale.c": {"aclnnCustomMaskedScale": "aclnn_custom_masked_scale.h"}},
                       ("add.c",))
DEFAULT_VENDOR = "aclsim_custom"  # build()'s default: the tests' builds have the package
VENDOR_LIB = "libcust_opapi.so"


def vendor_operators() -> dict:
    """The vendor package's own aclnn operators -> their headers."""
    return {op: h for ops in VENDOR.operators.values() for op, h in ops.items()}


def vendor_exports() -> set:
    """Every aclnn entry point libcust_opapi.so defines: its own and the shadowed ones."""
    ops = [*vendor_operators(), *(op for src in VENDOR.shadows for op in SOURCES[src].operators)]
    return {sym for op in ops for sym in entry_points(op)}


def vendor_root(prefix, name: str) -> pathlib.Path:
    """<prefix>/opp/vendors/<name>/op_api: holds lib/libcust_opapi.so and include/."""
    return pathlib.Path(prefix).resolve() / "opp" / "vendors" / name / "op_api"


def check_vendor_name(name: str) -> None:
    """ValueError unless name is one directory name that can sit in a comma-separated
    load_priority list (ascend-aclnn simulator build checks --vendor with it)."""
    if not name or name in (".", "..") or any(ch in name for ch in "/,=\n") or name != name.strip():
        raise ValueError(f"invalid vendor package name {name!r}")


def _put_first_in_config(config: pathlib.Path, name: str) -> None:
    """config.ini as install.sh leaves it: a new file holds load_priority=<name>;
    an existing one gets <name> first in its load_priority= line (once), other
    lines kept."""
    lines = config.read_text().splitlines() if config.exists() else []
    for i, line in enumerate(lines):
        if line.startswith("load_priority="):
            others = [v for v in line.split("=", 1)[1].split(",") if v and v != name]
            lines[i] = "load_priority=" + ",".join([name, *others])
            break
    else:
        lines.append(f"load_priority={name}")
    config.write_text("".join(line + "\n" for line in lines))


def install_vendor(cc: list, prefix, libdir: pathlib.Path, name: str) -> pathlib.Path:
    """Compile and install the vendor package VENDOR as <name> (see VendorPackage);
    its library finds libnnopbase.so and libascendcl.so in libdir through its RUNPATH.
    Returns the library's path."""
    check_vendor_name(name)
    root = vendor_root(prefix, name)
    lib = root / "lib" / VENDOR_LIB
    lib.parent.mkdir(parents=True, exist_ok=True)
    rel = os.path.relpath(libdir, lib.parent)
    sources = [SRC / "ops" / "op_common.c", *(SRC / "ops" / "vendor" / s for s in VENDOR.operators),
               *(SRC / "ops" / s for s in VENDOR.shadows)]
    _compile(cc, lib, sources, extra=[*OP_CFLAGS, f"-L{libdir}", f"-Wl,-rpath,$ORIGIN/{rel}"],
             libs=["-lnnopbase", "-lascendcl", "-lm"])
    (root / "include").mkdir(parents=True, exist_ok=True)
    for header in sorted(set(vendor_operators().values())):
        shutil.copyfile(INCLUDE / "vendor" / header, root / "include" / header)
    _put_first_in_config(root.parents[1] / "config.ini", name)
    return lib


CFLAGS = ["-std=c11", "-O2", "-g", "-fPIC", "-shared", "-Wall", "-Wextra", "-Wmissing-prototypes", "-pthread",
          "-fvisibility=hidden"]
# Op kernels reproduce fp32 device arithmetic: no fused multiply-add.
OP_CFLAGS = ["-ffp-contract=off"]


class BuildError(RuntimeError):
    """The compiler is missing or failed."""


class CompilerNotFound(BuildError):
    """There is no C compiler to run (a machine without one: the simulator's tests skip)."""


# The libraries of one build() share an id, so each can tell it is bound to its own build's
# copies (aclsim_warn_if_foreign) wherever its file lies.
_build_id: list[str] = []


def _compile(cc: list[str], out: pathlib.Path, sources: list[pathlib.Path],
             extra: list[str] = (), libs: list[str] = ()) -> None:
    cmd = [*cc, *CFLAGS, *_build_id, *extra, f"-I{SRC}", f"-I{INCLUDE}", "-o", str(out), *map(str, sources),
           f"-Wl,-soname,{out.name}", "-Wl,-rpath,$ORIGIN", "-Wl,--no-undefined",
           f"-L{out.parent}", *libs, "-ldl"]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except OSError as exc:
        raise CompilerNotFound(f"cannot run the C compiler {cc[0]!r}: {exc}") from exc
    if proc.returncode != 0:
        raise BuildError(f"compiling {out.name} failed (exit {proc.returncode}):\n"
                         f"$ {shlex.join(cmd)}\n{proc.stdout}")
    if proc.stdout.strip():  # warnings are bugs here: show them
        sys.stderr.write(f"[native/build.py] {out.name}:\n{proc.stdout}")


def headers(cann_version: str | None = None, every: bool = False) -> set:
    """The aclnnop/ headers a build as cann_version (default default_version()) installs: its
    operators' and its plain functions'; every=True: all of SOURCES', whatever the release."""
    if every:
        return {h for src in SOURCES.values() for h in [*src.operators.values(), *src.helpers.values()]}
    return set(operators(None, cann_version).values()) | set(helpers(None, cann_version).values())


def _without(text: str, functions: list) -> str:
    """A header's text without the declarations (ACLNN_API ... name(...);) of functions."""
    for fn in functions:
        start = text.find(f" {fn}(")
        if start < 0:
            continue
        start = text.rfind("ACLNN_API", 0, start)
        end = text.index(";", start) + 1
        text = text[:start] + text[end + 1 if text.startswith("\n", end) else end:]
    return text


def install_headers(prefix, layout: str = "cann8", arch_subdir: bool = False,
                    cann_version: str | None = None) -> None:
    """Copy the operator headers of SOURCES that cann_version has (and what they include)
    into include_dirs(): aclnnop/ into each, aclnn/ into the first (CANN has no aclnn/ under
    opp/); a function the release does not have is not declared."""
    headers_ = [f"aclnnop/{h}" for h in sorted(headers(cann_version))]
    absent = [*(fn for src in SOURCES.values() for op in src.operators if not in_release(op, cann_version)
                for fn in entry_points(op)),
              *(fn for src in SOURCES.values() for fn in src.helpers if not in_release(fn, cann_version))]
    for i, root in enumerate(include_dirs(prefix, layout, arch_subdir)):
        for rel in [*headers_, *HEADER_SUPPORT]:
            if i and not rel.startswith("aclnnop/"):
                continue
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(_without((INCLUDE / rel).read_text(), absent))


def version_files() -> dict:
    """Where build() records the simulated release, as a real install does: relative
    path under the prefix -> its key=value lines."""
    arch = platform.machine()
    return {"runtime/version.info": ("Version", "version_dir"),
            "opp/version.info": ("Version", "version_dir"),
            f"{arch}-linux/ascend_toolkit_install.info": ("package_name", "version", "arch", "os", "path")}


def install_version_info(prefix, cann_version: str, installed_at=None) -> None:
    """Write version_files(): runtime/ and opp/version.info (the package version and
    version_dir, as CANN's packages write them) and <arch>-linux/ascend_toolkit_install.info
    (the release name, as the toolkit installer writes it, with the install's path:
    installed_at when the prefix is to be moved there)."""
    prefix = pathlib.Path(prefix).resolve()
    profile, arch = _profile(cann_version), platform.machine()
    values = {"Version": profile.package_version, "version_dir": profile.version_dir,
              "package_name": "Ascend-cann-toolkit", "version": cann_version, "arch": arch, "os": "linux",
              "path": str(pathlib.Path(installed_at or prefix).resolve() / f"{arch}-linux")}
    for rel, keys in version_files().items():
        (prefix / rel).parent.mkdir(parents=True, exist_ok=True)
        (prefix / rel).write_text("".join(f"{k}={values[k]}\n" for k in keys))


def _op_source(name: str, tmp: pathlib.Path) -> pathlib.Path:
    """The file to compile for SOURCES[name]: the source itself, or for a generated API a
    one-line wrapper in tmp that defines OPC_GENERATED_API before including it (one
    compiler command builds a library, and a define must reach that source only)."""
    src = SRC / "ops" / name
    if not SOURCES[name].generated:
        return src
    wrapper = tmp / name
    wrapper.write_text(f'#define OPC_GENERATED_API 1\n#include "{src}"\n')
    return wrapper


def build(prefix, layout: str = "cann8", arch_subdir: bool = False, cc=None,
          cann_version: str | None = None, vendor: str | None = DEFAULT_VENDOR,
          installed_at=None) -> pathlib.Path:
    """Compile the simulator into <prefix>/lib64 (or <prefix>/<arch>-linux/lib64),
    install the operator headers (include_dirs()) and record the release where a real
    install does (version_files()).

    layout "cann8": libascendcl.so, libnnopbase.so, libopapi.so (all ops).
    layout "split": libascendcl.so, libnnopbase.so, libopapi_{cv,math,nn}.so.
    cc: compiler command (string or list); default $CC, else "cc".
    cann_version: the CANN release to simulate, a key of PROFILES; default
    default_version().
    vendor: the name to install the custom vendor package VENDOR under
    (install_vendor()), or None for none.
    installed_at: where the prefix will be moved before use (a cache filled by a rename),
    for the one file that records the install's path; the libraries find each other
    relative to themselves, so the prefix can move.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    cann_version = cann_version or default_version()
    _profile(cann_version)
    if vendor is not None:
        check_vendor_name(vendor)
    if cc is None:
        cc = os.environ.get("CC") or "cc"
    cc = shlex.split(cc) if isinstance(cc, str) else list(cc)
    if not cc or shutil.which(cc[0]) is None:
        raise CompilerNotFound(f"C compiler {cc[0] if cc else cc!r} not found "
                         "(install gcc/clang or set $CC)")

    prefix = pathlib.Path(prefix).resolve()
    _build_id[:] = [f'-DACLSIM_BUILD_ID="{uuid.uuid4().hex}"']
    libdir = prefix / f"{platform.machine()}-linux" / "lib64" if arch_subdir else prefix / "lib64"
    libdir.mkdir(parents=True, exist_ok=True)

    _compile(cc, libdir / "libascendcl.so", [SRC / "ascendcl.c"], extra=_profile_defines(cann_version))
    _compile(cc, libdir / "libnnopbase.so", [SRC / "nnopbase.c"], libs=["-lascendcl"])

    present = [f for f in SOURCES if in_profile(f, cann_version)]
    if layout == "cann8":
        groups = {"libopapi.so": present}
    else:
        groups = {f"libopapi_{d}.so": [f for f in present if SOURCES[f].domain == d] for d in DOMAINS}
    with tempfile.TemporaryDirectory(prefix="ascend-sim-build-") as tmp:
        for name, ops in groups.items():
            sources = [SRC / "ops" / "op_common.c", *(_op_source(op, pathlib.Path(tmp)) for op in ops)]
            omit = [f"-DACLSIM_OMIT_{op}=1" for f in ops for op in SOURCES[f].operators
                    if not in_release(op, cann_version)]
            _compile(cc, libdir / name, sources, extra=[*OP_CFLAGS, *omit],
                     libs=["-lnnopbase", "-lascendcl", "-lm"])
    install_headers(prefix, layout, arch_subdir, cann_version)
    install_version_info(prefix, cann_version, installed_at)
    if vendor is not None:
        install_vendor(cc, prefix, libdir, vendor)
    return libdir


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prefix", required=True, help="install prefix (use as ASCEND_HOME_PATH)")
    ap.add_argument("--layout", choices=LAYOUTS, default="cann8")
    ap.add_argument("--arch-subdir", action="store_true",
                    help="put the libraries in <prefix>/<arch>-linux/lib64 only")
    ap.add_argument("--cann-version", choices=list(PROFILES), default=default_version(),
                    help=f"the CANN release to simulate (default ${VERSION_ENV}, else {NEWEST})")
    vendor = ap.add_mutually_exclusive_group()
    vendor.add_argument("--vendor", default=DEFAULT_VENDOR, metavar="NAME",
                        help=f"install the custom vendor package as opp/vendors/NAME (default {DEFAULT_VENDOR})")
    vendor.add_argument("--no-vendor", dest="vendor", action="store_const", const=None,
                        help="install no vendor package")
    args = ap.parse_args(argv)
    try:
        libdir = build(args.prefix, args.layout, args.arch_subdir, cann_version=args.cann_version,
                       vendor=args.vendor)
    except (BuildError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(libdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
