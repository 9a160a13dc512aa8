"""The command line as a program: every option is checked before any work (a bad one is
one line and exit status 2), --version and the console-script entry point, and progress
without carriage returns off a terminal."""
from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

import ascend_aclnn as aa
from ascend_aclnn.ops import REGISTRY, SPECS
from ascend_aclnn.tensors import dtype_name
from ascend_aclnn.tools import cli
from ascend_aclnn.tools.progress import Progress
from conftest import ROOT

PROG = "python -m ascend_aclnn"


def run_cli(*argv: str):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def dtypes_of(name: str) -> list[str]:
    return [dtype_name(d) for d in SPECS[name].params[0].dtypes]


def _missing_dtype() -> tuple[str, str]:
    """A function and a dtype another function supports but it does not."""
    every = {d for s in REGISTRY for d in dtypes_of(s.name)}
    for spec in REGISTRY:
        lacking = sorted(every - set(dtypes_of(spec.name)))
        if lacking:
            return spec.name, lacking[0]
    pytest.skip("every function supports every dtype")


def _refusals(tmp_path) -> list[tuple[list[str], str]]:
    """(argv, the option the one-line refusal must name)."""
    op, missing = _missing_dtype()
    first = REGISTRY[0].name
    return [
        # the command line itself
        ([], "required"),
        (["frobnicate"], "invalid choice"),
        (["--verbose", "info"], "--verbose"),
        # info
        (["info", "--bogus"], "--bogus"),
        (["info", "--json", "extra"], "extra"),
        # compare
        (["compare", "--seed", "-1"], "--seed"),
        (["compare", "--seed", "1.5"], "--seed"),
        (["compare", "--ops", "upsample_nearest_exact3d"], "--ops"),
        (["compare", "--ops", ","], "--ops"),
        (["compare", "--dtypes", "foo"], "--dtypes"),
        (["compare", "--ops", op, "--dtypes", missing], "--dtypes"),
        (["compare", "--dtypes", missing], "--dtypes"),  # all functions selected: one of them lacks it
        (["compare", "--backend", "tpu"], "--backend"),
        # gradcheck
        (["gradcheck", "--seed", "-1"], "--seed"),
        (["gradcheck", "--ops", "nope"], "--ops"),
        (["gradcheck", "--ops", ""], "--ops"),
        (["gradcheck", "--backend", "tpu"], "--backend"),
        # bench
        (["bench", "--ops", "conv2d"], "--ops"),
        (["bench", "--dtypes", "foo"], "--dtypes"),
        (["bench", "--dtypes", missing], "--dtypes"),
        (["bench", "--ops", op, "--dtypes", missing], "--dtypes"),
        (["bench", "--sizes", "huge"], "--sizes"),
        (["bench", "--sizes", ","], "--sizes"),
        (["bench", "--repeat", "0"], "--repeat"),
        (["bench", "--repeat", "many"], "--repeat"),
        (["bench", "--json", "/nonexistent/dir/rows.json"], "--json"),
        (["bench", "--json", str(tmp_path)], "--json"),
        (["bench", "--npu-calls", "0"], "--npu-calls"),
        (["bench", "--npu-rounds", "-1"], "--npu-rounds"),
        (["bench", "--npu", "--no-npu"], "--no-npu"),
        (["bench", "--npu-only", "--ops", first], "--ops"),
        (["bench", "--npu-only", "--sizes", "small"], "--sizes"),
        (["bench", "--npu-only", "--dtypes", "float32"], "--dtypes"),
        (["bench", "--npu-only", "--repeat", "3"], "--repeat"),
        (["bench", "--npu-only", "--no-torch"], "--no-torch"),
        (["bench", "--no-npu", "--npu-calls", "5"], "--npu-calls"),
        (["bench", "--no-npu", "--npu-rounds", "5"], "--npu-rounds"),
        (["bench", "--no-progress", "--no-npu", "--sizes", "small", "--ops", first, "--json", str(tmp_path)],
         "--json"),
    ]


def test_every_bad_option_is_one_line_and_exit_2_before_any_work(tmp_path):
    for argv, option in _refusals(tmp_path):
        code, out, err = run_cli(*argv)
        assert code == 2, (argv, code, out, err)
        assert out == "", (argv, out)  # no per-case line, no table: nothing ran
        assert err.count("\n") == 1 and err.endswith("\n"), (argv, err)
        assert "Traceback" not in err and ": error: " in err and option in err, (argv, err)
        assert err.startswith(PROG), (argv, err)


def test_every_option_taking_a_value_has_a_refusal_test(tmp_path):
    tested = {a for argv, _ in _refusals(tmp_path) for a in argv if a.startswith("--")}
    parser = cli.parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, subparser in sub.choices.items():
        for action in subparser._actions:
            if action.nargs == 0 or not action.option_strings or action.dest == "help":
                continue  # flags: refused only in combinations (tested where they exist)
            if action.dest == "json" and name == "info":
                continue
            assert set(action.option_strings) & tested, f"{name} {action.option_strings}: no refusal tested"


def test_bad_settings_in_the_environment_are_refused_like_options(monkeypatch):
    monkeypatch.setenv("ASCEND_ACLNN_BACKEND", "bogus")
    code, out, err = run_cli("gradcheck")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "ASCEND_ACLNN_BACKEND" in err and "'bogus'" in err
    monkeypatch.delenv("ASCEND_ACLNN_BACKEND")
    for value in ("abc", "1.5"):
        monkeypatch.setenv("ASCEND_ACLNN_REFERENCE_THREADS", value)
        code, out, err = run_cli("bench", "--no-npu", "--ops", REGISTRY[0].name, "--sizes", "small")
        assert code == 2 and out == "" and "ASCEND_ACLNN_REFERENCE_THREADS" in err and err.count("\n") == 1


def test_bench_json_refusal_leaves_nothing_behind(tmp_path):
    target = tmp_path / "rows.json"
    code, _, err = run_cli("bench", "--no-npu", "--sizes", "huge", "--json", str(target))
    assert code == 2 and "--sizes" in err and not target.exists()
    code, _, err = run_cli("bench", "--no-npu", "--repeat", "0", "--json", str(target))
    assert code == 2 and not target.exists()


def test_a_bad_option_in_a_fresh_process_is_one_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "ascend_aclnn", "compare", "--seed", "-1"], capture_output=True,
                            text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == f"{PROG} compare: error: argument --seed: expected an integer >= 0, got -1\n"


# ---------------------------------------------------------------------------------------------
# --version, the console script, help
# ---------------------------------------------------------------------------------------------

def test_version():
    assert run_cli("--version") == (0, f"ascend_aclnn {aa.__version__}\n", "")
    result = subprocess.run([sys.executable, "-m", "ascend_aclnn", "--version"], capture_output=True, text=True,
                            cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 0 and result.stdout == f"ascend_aclnn {aa.__version__}\n"


def test_main_is_a_console_script_entry_point(monkeypatch, capsys):
    """What the ``ascend-aclnn`` script does: sys.exit(main()) with sys.argv as given."""
    monkeypatch.setattr(sys, "argv", ["/usr/bin/ascend-aclnn", "compare", "--seed", "-1"])
    assert cli.main() == 2
    assert capsys.readouterr().err.startswith("ascend-aclnn compare: error: argument --seed")
    monkeypatch.setattr(sys, "argv", ["ascend-aclnn", "--help"])
    assert cli.main() == 0  # returned, not raised
    assert capsys.readouterr().out.startswith("usage: ascend-aclnn")
    monkeypatch.setattr(sys, "argv", ["ascend-aclnn", "gradcheck", "--backend", "numpy", "--ops",
                                      "upsample_nearest_exact1d"])
    assert cli.main() == 0
    code = ("import sys; from ascend_aclnn.tools.cli import main; sys.argv[0] = '/usr/local/bin/ascend-aclnn'; "
            "sys.exit(main())")
    result = subprocess.run([sys.executable, "-c", code, "--version"], capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 0 and result.stdout == f"ascend_aclnn {aa.__version__}\n"


def test_help_of_every_command_shows_no_argparse_escapes():
    for argv in (["--help"], ["info", "--help"], ["compare", "--help"], ["gradcheck", "--help"],
                 ["bench", "--help"]):
        code, out, err = run_cli(*argv)
        assert code == 0 and err == "" and out.startswith("usage:"), argv
        assert "%%" not in out, (argv, [line for line in out.splitlines() if "%%" in line])
    out = run_cli("compare", "--help")[1]
    assert ">= 99% of the" in out


# ---------------------------------------------------------------------------------------------
# progress
# ---------------------------------------------------------------------------------------------

class Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_is_plain_lines_off_a_terminal():
    plain, tty = io.StringIO(), Tty()
    for stream in (plain, tty):
        bar = Progress(2, stream)
        bar.step("a")
        bar.step("b")
        bar.close()
    assert "\r" not in plain.getvalue() and plain.getvalue().count("\n") == 2
    assert "\r" in tty.getvalue() and "\n" not in tty.getvalue()


def test_every_progress_writer_is_plain_off_a_terminal(capsys, npu):
    code, _, err = run_cli("compare", "--backend", "numpy", "--ops", REGISTRY[0].name)
    assert code == 0 and "\r" not in err and f"1/{len(dtypes_of(REGISTRY[0].name))}" in err
    from ascend_aclnn.tools import bench
    assert bench.main(["--ops", REGISTRY[0].name, "--sizes", "small", "--dtypes", "float32", "--repeat", "1",
                       "--no-torch", "--npu", "--npu-calls", "2", "--npu-rounds", "2"]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and "\x1b" not in err
    rows = sum(c.op == REGISTRY[0].name and c.size == "small" for c in bench.all_cases())
    assert f"{rows}/{rows} " in err and "2/2 npu overhead" in err  # both of bench's writers
