#!/usr/bin/env python3
"""Build the CANN CPU simulator libraries.

    python native/build.py --prefix DIR [--layout cann8|split] [--arch-subdir]

or, from Python, ``build(prefix, layout="cann8", arch_subdir=False, cc=None)``,
which returns the directory holding the libraries. See native/README.md.
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

SRC = pathlib.Path(__file__).resolve().parent / "src"

# Op source (under src/ops) -> domain library in the split layout
# (libopapi_<domain>.so). Adding an op is one line here.
OPS = {
    "upsample_nearest_exact1d.c": "cv",
    "replication_pad2d.c": "math",
    "max_pool2d_with_mask.c": "nn",
    "im2col.c": "math",
    "im2col_backward.c": "cv",
    "group_norm_swish.c": "nn",
}
DOMAINS = ("cv", "math", "nn")  # every split-layout op library, even if empty
LAYOUTS = ("cann8", "split")

CFLAGS = ["-std=c11", "-O2", "-g", "-fPIC", "-shared", "-Wall", "-Wextra", "-pthread",
          "-fvisibility=hidden"]
# Op kernels reproduce fp32 device arithmetic: no fused multiply-add.
OP_CFLAGS = ["-ffp-contract=off"]


class BuildError(RuntimeError):
    """The compiler is missing or failed."""


def _compile(cc: list[str], out: pathlib.Path, sources: list[pathlib.Path],
             extra: list[str] = (), libs: list[str] = ()) -> None:
    cmd = [*cc, *CFLAGS, *extra, f"-I{SRC}", "-o", str(out), *map(str, sources),
           f"-Wl,-soname,{out.name}", "-Wl,-rpath,$ORIGIN", "-Wl,--no-undefined",
           f"-L{out.parent}", *libs, "-ldl"]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except OSError as exc:
        raise BuildError(f"cannot run the C compiler {cc[0]!r}: {exc}") from exc
    if proc.returncode != 0:
        raise BuildError(f"compiling {out.name} failed (exit {proc.returncode}):\n"
                         f"$ {shlex.join(cmd)}\n{proc.stdout}")
    if proc.stdout.strip():  # warnings are bugs here: show them
        sys.stderr.write(f"[native/build.py] {out.name}:\n{proc.stdout}")


def build(prefix, layout: str = "cann8", arch_subdir: bool = False, cc=None) -> pathlib.Path:
    """Compile the simulator into <prefix>/lib64 (or <prefix>/<arch>-linux/lib64).

    layout "cann8": libascendcl.so, libnnopbase.so, libopapi.so (all ops).
    layout "split": libascendcl.so, libnnopbase.so, libopapi_{cv,math,nn}.so.
    cc: compiler command (string or list); default $CC, else "cc".
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    if cc is None:
        cc = os.environ.get("CC") or "cc"
    cc = shlex.split(cc) if isinstance(cc, str) else list(cc)
    if not cc or shutil.which(cc[0]) is None:
        raise BuildError(f"C compiler {cc[0] if cc else cc!r} not found "
                         "(install gcc/clang or set $CC)")

    prefix = pathlib.Path(prefix).resolve()
    libdir = prefix / f"{platform.machine()}-linux" / "lib64" if arch_subdir else prefix / "lib64"
    libdir.mkdir(parents=True, exist_ok=True)

    _compile(cc, libdir / "libascendcl.so", [SRC / "ascendcl.c"])
    _compile(cc, libdir / "libnnopbase.so", [SRC / "nnopbase.c"], libs=["-lascendcl"])

    if layout == "cann8":
        groups = {"libopapi.so": list(OPS)}
    else:
        groups = {f"libopapi_{d}.so": [op for op, dom in OPS.items() if dom == d] for d in DOMAINS}
    for name, ops in groups.items():
        sources = [SRC / "ops" / "op_common.c", *(SRC / "ops" / op for op in ops)]
        _compile(cc, libdir / name, sources, extra=OP_CFLAGS,
                 libs=["-lnnopbase", "-lascendcl", "-lm"])
    return libdir


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prefix", required=True, help="install prefix (use as ASCEND_HOME_PATH)")
    ap.add_argument("--layout", choices=LAYOUTS, default="cann8")
    ap.add_argument("--arch-subdir", action="store_true",
                    help="put the libraries in <prefix>/<arch>-linux/lib64 only")
    args = ap.parse_args(argv)
    try:
        libdir = build(args.prefix, args.layout, args.arch_subdir)
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(libdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
