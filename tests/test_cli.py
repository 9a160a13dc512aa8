"""The command line as a program: every option is checked before any work (a bad one is
one line and exit status 2), --version and the console-script entry point, progress
without carriage returns off a terminal, and compare on the user's own cases."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn.ops import REGISTRY
from ascend_aclnn.tensors import dtype_name
from ascend_aclnn.tools import cases, cli
from ascend_aclnn.tools.progress import Progress
from conftest import ROOT, run_python

PROG = "python -m ascend_aclnn"


def run_cli(*argv: str):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def dtypes_of(name: str) -> list[str]:
    return [dtype_name(d) for d in REGISTRY[name].params[0].dtypes]


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
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("[{")
    not_a_list = tmp_path / "obj.json"
    not_a_list.write_text('{"op": "im2col"}')
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
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
        (["compare", "--shape", "2,x,3"], "--shape"),
        (["compare", "--op", "aclnnNoSuchOperator", "--shape", "2,3"], "--op"),
        (["compare", "--op", "aclnnAdd"], "--op"),  # a raw operator has no example arguments
        (["compare", "--op", "aclnnAdd", "--ops", first], "--ops"),
        (["compare", "--shape", "-2,3"], "--shape"),
        (["compare", "--shape", "2,3,4"], "--shape"),  # no --ops NAME
        (["compare", "--ops", first, REGISTRY[1].name, "--shape", "2,3,4"], "--shape"),
        (["compare", "--ops", first, "--args", "[1"], "--args"),
        (["compare", "--ops", first, "--args", '{"a": 1}'], "--args"),
        (["compare", "--ops", first, "--kwargs", "[1]"], "--kwargs"),
        (["compare", "--ops", first, "--kwargs", '{"no_such_parameter": 1}'], "--kwargs.no_such_parameter"),
        (["compare", "--ops", first, "--args", '[{"tensor": [2, 3, 4], "fill": "gauss"}]'], "--args[0].fill"),
        (["compare", "--ops", first, "--shape", "2,3,4", "--args", '[{"tensor": [2, 3, 4]}]'], "--shape"),
        (["compare", "--ops", "replication_pad2d", "--kwargs", '{"padding": [1, 2]}'], "--kwargs.padding"),
        (["compare", "--ops", "replication_pad2d_backward", "--shape", "8,64,56,56"], "--shape"),
        (["compare", "--cases", str(tmp_path / "missing.json")], "--cases"),
        (["compare", "--cases", str(bad_json)], "--cases"),
        (["compare", "--cases", str(not_a_list)], "--cases"),
        (["compare", "--cases", str(empty)], "--cases"),
        (["compare", "--cases", str(empty), "--ops", first], "--ops"),
        (["compare", "--cases", str(empty), "--dtypes", "float32"], "--dtypes"),
        (["compare", "--cases", str(empty), "--seed", "-3"], "--seed"),
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
        # selftest (refused before any child process starts)
        (["selftest", "--timeout", "inf"], "--timeout"),
        (["selftest", "--timeout", "-1"], "--timeout"),
        (["selftest", "--items", "nope"], "--items"),
        (["selftest", "--items", ","], "--items"),
        (["selftest", "--json", "/nonexistent/dir/report.json"], "--json"),
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
    assert ">= 99% of the" in out and '{"tensor": [8, 64, 56, 56]}' in out and "--cases FILE" in out


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


# ---------------------------------------------------------------------------------------------
# compare on the user's cases
# ---------------------------------------------------------------------------------------------

POOL_CASE = {"op": "max_pool2d_with_mask_backward", "name": "pool backward", "kwargs": {
    "grad_output": {"tensor": [2, 3, 5, 5]}, "input": {"tensor": [2, 3, 10, 10]},
    "mask": {"output_of": {"op": "max_pool2d_with_mask",
                           "args": [{"tensor": [2, 3, 10, 10]}, [3, 3], [2, 2], [1, 1], [1, 1]]}, "index": 1},
    "kernel_size": [3, 3], "stride": [2, 2], "padding": [1, 1], "dilation": [1, 1]}}
FILE_CASES = [
    {"op": "replication_pad2d", "args": [{"tensor": [2, 4, 7, 9]}, [3, 1, 2, 0]]},
    {"op": "upsample_nearest_exact1d", "dtype": "float16", "args": [{"tensor": [2, 4, 10], "fill": "arange"}, [25]]},
    POOL_CASE,
    {"op": "group_norm_swish", "dtype": "bfloat16", "args": [
        {"tensor": [2, 8, 3, 3], "fill": "rand", "low": -2, "high": 2}, {"tensor": [8], "dtype": "float32"},
        {"values": [0, 1, 2, 3, 4, 5, 6, 7], "dtype": "float32"}, 4]},
    {"op": "im2col", "args": [{"tensor": [1, 2, 6, 6], "fill": "full", "value": "nan"}]},
]


@pytest.mark.parametrize("backend_name", ["numpy", "npu"])
def test_compare_runs_a_case_file_one_line_per_case(tmp_path, backend_name, sim):
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(FILE_CASES))
    code, out, err = run_cli("compare", "--backend", backend_name, "--cases", str(path), "--no-progress")
    assert code == 0, out + err
    *lines, verdict = out.splitlines()
    assert len(lines) == len(FILE_CASES) and all("  PASS  " in line for line in lines), out
    assert lines[0].split()[:3] == ["#1", "replication_pad2d[2,4,7,9]", "float32"]
    assert lines[1].split()[:3] == ["#2", "upsample_nearest_exact1d[2,4,10]", "float16"]
    assert lines[2].startswith("pool backward ") and " bfloat16 " in lines[3]
    assert verdict.startswith(f"compare: {len(FILE_CASES)} case(s), 0 failed"), out


def test_compare_on_a_shape_from_the_command_line(sim):
    name = "replication_pad2d"
    code, out, err = run_cli("compare", "--ops", name, "--shape", "3,5,9,7", "--kwargs", '{"padding": [2, 2, 1, 1]}',
                             "--no-progress")
    assert code == 0, out + err
    lines = out.splitlines()[:-1]
    assert [line.split()[:2] for line in lines] == [[f"{name}[3,5,9,7]", dt] for dt in dtypes_of(name)]
    assert all("  PASS  " in line for line in lines)
    # --args: the first arguments; the rest keep the example's values
    code, out, _ = run_cli("compare", "--ops", "upsample_nearest_exact1d", "--dtypes", "float32", "--args",
                           '[{"tensor": [2, 3, 40]}, [97]]', "--no-progress")
    assert code == 0 and "of 582 within tol" in out  # 2 * 3 * 97 outputs compared


def test_a_failing_user_case_is_its_own_line_and_exit_1(sim, tmp_path):
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([{"op": "upsample_nearest_exact1d", "args": [{"tensor": [1, 2, 4]}, [9]]},
                                {"op": "replication_pad2d", "args": [{"tensor": [1, 2, 4, 4]}, [1, 1, 1, 1]]}]))
    result = run_python(f"import sys; from ascend_aclnn.tools.cli import main; "
                        f"sys.exit(main(['compare', '--cases', {str(path)!r}, '--no-progress']))", sim,
                        ASCEND_SIM_FAULT="aclnnUpsampleNearestExact1d:1:507015")
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert "ERROR AclRtAicoreExceptionError" in lines[0] and "  PASS  " in lines[1]


def test_user_cases_are_seeded_and_use_the_example_for_what_is_not_given():
    case = cases.parse_case({"op": "replication_pad2d", "kwargs": {"padding": [0, 1, 0, 1]}})
    a = case.build(cases.seeded(4, "x"))
    b = case.build(cases.seeded(4, "x"))
    example_args, _ = REGISTRY["replication_pad2d"].example(cases.seeded(4, "x"), np.dtype(np.float32))
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[0], example_args[0]) and a[1] == [0, 1, 0, 1]
    t = cases.parse_case({"op": "max_pool2d_with_mask_backward", "kwargs": {"mask": {"tensor": [2, 3, 9, 64]}}})
    assert t.given["mask"].dtype == np.int8  # the parameter's own dtype: the case's float32 is not one


@pytest.mark.parametrize("obj, field, words", [
    ([1], "", "expected an object"),
    ({"args": []}, "op", "required"),
    ({"op": "conv2d"}, "op", "unknown function"),
    ({"op": "im2col", "extra": 1}, "extra", "unknown field"),
    ({"op": "im2col", "dtype": "int8"}, "dtype", "expected one of float32"),
    ({"op": "im2col", "args": {}}, "args", "expected a list"),
    ({"op": "im2col", "args": [1] * 99}, "args", "takes"),
    ({"op": "im2col", "kwargs": []}, "kwargs", "expected an object"),
    ({"op": "im2col", "kwargs": {"out": None}}, "kwargs.out", "outputs are compared"),
    ({"op": "im2col", "args": [{"tensor": [1, 2, 3, 3]}], "kwargs": {"input": 1}}, "kwargs.input", "also given"),
    ({"op": "im2col", "args": [{"tensor": [1, -2]}]}, "args[0].tensor", "shape"),
    ({"op": "im2col", "args": [{"tensor": [1, 2], "size": 3}]}, "args[0].size", "unknown field"),
    ({"op": "im2col", "args": [{"tensor": [1, 2], "fill": "full"}]}, "args[0].value", "required"),
    ({"op": "im2col", "args": [{"tensor": [1, 2], "value": 1}]}, "args[0].value", "only for"),
    ({"op": "im2col", "args": [{"tensor": [1, 2], "fill": "rand", "low": 1, "high": 0}]}, "args[0].high", "> low"),
    ({"op": "im2col", "args": [{"tensor": [1, 2], "fill": "randint", "high": 2.5}]}, "args[0].high", "integer"),
    ({"op": "im2col", "args": [{"tensor": [1, 2], "dtype": "float128"}]}, "args[0].dtype", "expected one of"),
    ({"op": "im2col", "args": [{"values": [[1, 2], [3]]}]}, "args[0].values", "regular shape"),
    ({"op": "im2col", "args": [{"shape": [1, 2]}]}, "args[0]", "objects understood"),
    ({"op": "replication_pad2d", "args": [{"tensor": [2, 2], "fill": "full", "value": "nan", "dtype": "int8"}]},
     "args[0].value", "floating-point"),
    ({"op": "max_pool2d_with_mask_backward", "kwargs": {"mask": {"output_of": {"op": "im2col"}, "index": 3}}},
     "kwargs.mask.index", "output index"),
    ({"op": "max_pool2d_with_mask_backward", "kwargs": {"mask": {"output_of": {"op": "nope"}}}},
     "kwargs.mask.output_of.op", "unknown function"),
])
def test_case_format_errors_name_the_field(obj, field, words):
    with pytest.raises(cases.CaseError) as info:
        cases.check(cases.parse_case(obj), cases.seeded(0))
    assert info.value.field == field and words in str(info.value), (info.value.field, str(info.value))


def test_operator_refusals_are_found_before_anything_runs(tmp_path):
    """The operator's own checks run on placeholders: one line naming the case and argument."""
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([FILE_CASES[0], {"op": "replication_pad2d", "args": [{"tensor": [2, 3]}, [1, 1, 1, 1]]},
                                {"op": "max_pool2d_with_mask_backward", "kwargs": {"mask": {"output_of": {
                                    "op": "max_pool2d_with_mask", "args": [{"tensor": [1, 2, 3, 3]}, [9, 9]]},
                                    "index": 1}}}]))
    code, out, err = run_cli("compare", "--backend", "numpy", "--cases", str(path))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "case 2 (replication_pad2d): input: refused by replication_pad2d (float32)" in err
    path.write_text(json.dumps([POOL_CASE, json.loads(path.read_text())[2]]))
    code, out, err = run_cli("compare", "--backend", "numpy", "--cases", str(path))
    assert code == 2 and "case 2 (max_pool2d_with_mask_backward): kwargs.mask.output_of: " in err
    assert "refused by max_pool2d_with_mask" in err


def test_info_says_which_group_norm_swish_grad_formula_the_numpy_backend_follows(monkeypatch):
    monkeypatch.setenv("ASCEND_ACLNN_CANN_VERSION", "8.1.RC1")
    code, out, err = run_cli("info")
    assert "GroupNormSwishGrad formula of the numpy backend: 8.1 formula" in out, out
    monkeypatch.setenv("ASCEND_ACLNN_CANN_VERSION", "9.1.0")
    code, out, err = run_cli("info", "--json")
    assert json.loads(out)["swish_grad_formula"].startswith("corrected formula"), out


# ---- issue 26, defect 8: a bad environment variable, for every command ----------------------
# (variable, bad value, words the one line must hold) for every variable the tools read whose
# value can be wrong; the paths (ASCEND_HOME_PATH, ...) cannot be: a wrong one is "no CANN".
BAD_ENVIRONMENT = [
    ("ASCEND_ACLNN_BACKEND", "bogus", "expected one of auto, npu, numpy"),
    ("ASCEND_ACLNN_BACKEND", "NPU", "expected one of auto, npu, numpy"),
    ("ASCEND_ACLNN_CANN_VERSION", "bogus", "not a CANN release"),
    ("ASCEND_ACLNN_CANN_VERSION", "v8.1", "not a CANN release"),
    ("ASCEND_ACLNN_REFERENCE_THREADS", "abc", "positive integer"),
    ("ASCEND_ACLNN_REFERENCE_THREADS", "1.5", "positive integer"),
]
# each command, with options that are fine and cheap, so that only the environment is wrong
COMMAND_LINES = {
    "info": ["info"],
    "compare": ["compare", "--backend", "numpy", "--ops", "group_norm_swish_grad", "--no-progress"],
    "gradcheck": ["gradcheck", "--backend", "numpy", "--ops", "group_norm_swish"],
    "bench": ["bench", "--no-npu", "--no-torch", "--ops", "group_norm_swish_grad", "--sizes", "small",
              "--repeat", "1", "--no-progress"],
    "selftest": ["selftest", "--items", "versions", "--timeout", "5"],
}


@pytest.mark.parametrize("command", list(COMMAND_LINES))
@pytest.mark.parametrize("variable, value, words", BAD_ENVIRONMENT)
def test_a_bad_environment_variable_is_one_line_and_exit_2_before_any_work(monkeypatch, command, variable,
                                                                         value, words):
    """Issue 26, defect 8: with ASCEND_ACLNN_CANN_VERSION=bogus, compare and gradcheck ran
    everything and reported each GroupNormSwishGrad case as ERROR (exit 1), and info printed
    "unknown" and exited 0. Every command now refuses a bad value of every variable it reads
    before any work: one line naming the variable and the value, exit 2."""
    monkeypatch.setenv(variable, value)
    started = []
    monkeypatch.setattr(cli, "RUNNERS", {k: (lambda *a, _f=f: started.append(1) or _f(*a))
                                         for k, f in cli.RUNNERS.items()})
    code, out, err = run_cli(*COMMAND_LINES[command])
    assert (code, out, started) == (2, "", []), (code, out, err)
    assert err == f"{PROG} {command}: error: {variable}: {err.split(': ', 3)[-1]}" and err.count("\n") == 1, err
    assert repr(value) in err and words in err, err


def test_good_environment_values_are_accepted(monkeypatch):
    """The other side of the rule: values the package accepts pass the check."""
    for variable, value in (("ASCEND_ACLNN_BACKEND", "numpy"), ("ASCEND_ACLNN_CANN_VERSION", "8.1.RC1"),
                            ("ASCEND_ACLNN_CANN_VERSION", " 9.2.0 "), ("ASCEND_ACLNN_CANN_VERSION", ""),
                            ("ASCEND_ACLNN_REFERENCE_THREADS", "2"), ("ASCEND_ACLNN_REFERENCE_THREADS", "")):
        monkeypatch.setenv(variable, value)
        code, out, err = run_cli("gradcheck", "--ops", "im2col")
        assert code == 0 and "im2col" in out, (variable, value, code, out, err)


# ---- issue 26, defect 9: every bad cases file is one line and exit 2 ------------------------
_T = '{"tensor": [1, 2, 4, 4]}'


def _pad_case(first: str = _T, padding: str = "[1, 1, 1, 1]", extra: str = "") -> str:
    return f'[{{"op": "replication_pad2d", "args": [{first}, {padding}]{extra}}}]'


def _tensor(fields: str, dtype: str = "") -> str:
    return _pad_case('{"tensor": [1, 2, 4, 4], ' + fields + "}", extra=f', "dtype": "{dtype}"' if dtype else "")


BAD_CASE_FILES = {
    # nesting (json itself, or the reader, used to raise RecursionError)
    "lists nested 100000 deep": ("[" * 100000 + "]" * 100000, "nested"),
    "objects nested 100000 deep": ('{"a":' * 100000 + "1" + "}" * 100000, "nested"),
    "an argument nested 900 deep": (_pad_case(padding="[" * 900 + "]" * 900), "nested"),
    "values nested 300 deep": (_pad_case('{"values": ' + "[" * 300 + "1" + "]" * 300 + "}"), "nested"),
    # huge numbers
    "an integer of 5000 digits": (_pad_case(padding="[" + "9" * 5000 + ", 1, 1, 1]"), "digits"),
    "values beyond float64": (_pad_case('{"values": [[[[1' + "0" * 400 + "]]]]}", "[0, 0, 0, 0]"), "values"),
    "values beyond float16": (_pad_case('{"values": [[[[1e10]]]]}', "[0, 0, 0, 0]", ', "dtype": "float16"'),
                              "float16"),
    "values beyond int8": (_pad_case('{"values": [[[[300]]]]}', "[0, 0, 0, 0]", ', "dtype": "int8"'), "int8"),
    "randint high beyond int64": (_tensor('"fill": "randint", "high": ' + str(10 ** 30)), "high"),
    "randint high beyond int8": (_tensor('"fill": "randint", "high": 1000, "dtype": "int8"'), "high"),
    "rand range beyond float64": (_tensor('"fill": "rand", "low": -1e308, "high": 1e308'), "high"),
    "rand high beyond float16": (_tensor('"fill": "rand", "high": 1e10', "float16"), "high"),
    "full value beyond float32": (_tensor('"fill": "full", "value": ' + str(10 ** 40)), "value"),
    "full value beyond int8": (_tensor('"fill": "full", "value": 300, "dtype": "int8"'), "value"),
    "index beyond int64": (_pad_case('{"output_of": {"op": "im2col"}, "index": ' + str(10 ** 30) + "}"), "index"),
    # wrong types at every level
    "a file of a number": ("3", "list of cases"),
    "cases of a number": ('{"cases": 3}', "list of cases"),
    "a case of null": ("[null]", "case 1"),
    "op a list": ('[{"op": ["im2col"]}]', "op"),
    "dtype an object": (_pad_case(extra=', "dtype": {}'), "dtype"),
    "name a number": (_pad_case(extra=', "name": 3'), "name"),
    "args a string": ('[{"op": "im2col", "args": "x"}]', "args"),
    "kwargs null": ('[{"op": "im2col", "kwargs": null}]', "kwargs"),
    "values integral for int8": (_pad_case('{"values": [[[[1.5]]]]}', "[0, 0, 0, 0]", ', "dtype": "int8"'),
                                 "values"),
    "values of booleans": (_pad_case('{"values": [[[[true]]]]}', "[0, 0, 0, 0]"), "values"),
    "values of strings": (_pad_case('{"values": [[[["a"]]]]}', "[0, 0, 0, 0]"), "values"),
    "full value integral for int8": (_tensor('"fill": "full", "value": 1.5, "dtype": "int8"'), "value"),
    "tensor a string": (_pad_case('{"tensor": "x"}'), "tensor"),
    "fill an object": (_tensor('"fill": {}'), "fill"),
    "low a list": (_tensor('"fill": "rand", "low": []'), "low"),
    "value null": (_tensor('"fill": "full", "value": null'), "value"),
    "output_of a string": (_pad_case('{"output_of": "x"}'), "output_of"),
    "index a string": (_pad_case('{"output_of": {"op": "im2col"}, "index": "0"}'), "index"),
    "padding of strings": (_pad_case(padding='["a", "b", "c", "d"]'), "padding"),
}


@pytest.mark.parametrize("name", list(BAD_CASE_FILES))
def test_every_bad_cases_file_is_one_line_and_exit_2(tmp_path, name):
    """Issue 26, defect 9: a deeply nested file printed a RecursionError traceback (exit 1);
    huge numbers raised OverflowError or ValueError, or ran with values silently wrapped or
    turned to inf. Every bad file is one line naming what is wrong, exit 2, before any work."""
    text, words = BAD_CASE_FILES[name]
    path = tmp_path / "cases.json"
    path.write_text(text)
    code, out, err = run_cli("compare", "--backend", "numpy", "--no-progress", "--cases", str(path))
    assert (code, out) == (2, ""), (code, out, err)
    assert err.startswith(f"{PROG} compare: error: --cases {path}: ") and err.count("\n") == 1, err
    assert len(err) < 600 and words in err, err


@pytest.mark.parametrize("option", ["--args", "--kwargs"])
def test_deeply_nested_json_on_the_command_line_is_one_line(option):
    text = "[" * 100000 + "]" * 100000 if option == "--args" else '{"a":' * 100000 + "1" + "}" * 100000
    code, out, err = run_cli("compare", "--backend", "numpy", "--ops", "im2col", option, text)
    assert (code, out) == (2, "") and err.count("\n") == 1 and option in err and "nested" in err, err
    assert len(err) < 600, err


# ---------------------------------------------------------------------------------------------
# compare's table and verdict
# ---------------------------------------------------------------------------------------------

VERDICTS = ("PASS", "FAIL", "ERROR", "SKIP")


def _verdict_column(line: str) -> int:
    """Where a table row's verdict starts (after the label and dtype columns)."""
    return min(i for i in (line.find(f"  {v} ") for v in VERDICTS) if i >= 0) + 2


def test_compare_prints_its_verdict_on_stdout():
    """Issue 31 item 9: the summary went to stderr only, so `compare > report.txt` lost it.
    It is the last line of stdout; stderr keeps the progress."""
    code, out, err = run_cli("compare", "--backend", "numpy", "--ops", "im2col")
    *rows, verdict = out.splitlines()
    assert code == 0 and len(rows) == 3 and all("  PASS  " in row for row in rows), out
    assert verdict.startswith("compare: 3 case(s), 0 failed, ") and verdict.endswith("(numpy vs numpy reference, "
                                                                                       "seed 0)"), verdict
    assert "failed" not in err and "3/3 im2col" in err, err


def test_compare_columns_align_for_complex_dtypes():
    """Issue 31 item 9: complex64 and complex128 are longer than the dtype column was wide,
    so their rows' verdicts and numbers stood one or two characters to the right."""
    code, out, _ = run_cli("compare", "--backend", "numpy", "--ops", "replication_pad2d", "--no-progress")
    rows = out.splitlines()[:-1]
    assert code == 0 and {"complex64", "complex128", "float32"} <= {row.split()[1] for row in rows}, out
    assert len({_verdict_column(row) for row in rows}) == 1, out


def test_fail_lines_of_complex_values_keep_the_columns():
    """The table printer on results it cannot get from a correct kernel: complex values off by
    a negative imaginary part, NaN and Inf at other places, next to real dtypes and passes.
    Every row's verdict and detail start in the same columns."""
    spec = REGISTRY["replication_pad2d"]
    g = np.array([1 - 2j, -3.5 - 0.25j, 2 + 1e-3j, -0.0 - 7j] * 25)
    off = g.copy()
    off[:5] -= 3j  # 5 % beyond tolerance, each by a negative imaginary part
    nan = g.copy()
    nan[1] = complex(np.nan, -1)
    inf = g.copy()
    inf[2] = complex(2, -np.inf)
    real = np.linspace(-1, 1, 100)
    results = [("same", np.complex64, g, g), ("imaginary-off", np.complex128, off, g),
               ("nan-moved", np.complex64, nan, g), ("inf-moved", np.complex128, inf, g),
               ("real", np.float32, real, real), ("real-inf", np.float64, real + np.inf, real)]
    jobs = [cli._Job(spec, np.dtype(dt), label, lambda: ((), {}),
                     lambda backend, a=a.astype(dt), g=gold.astype(dt): [("out", a, g)])
            for label, dt, a, gold in results]
    out, err = io.StringIO(), io.StringIO()
    code = cli.run_compare(jobs, "numpy", 0, out, err, progress=False)
    *rows, verdict = out.getvalue().splitlines()
    assert code == 1 and verdict.startswith("compare: 6 case(s), 4 failed"), out.getvalue()
    assert [row.split()[2] for row in rows] == ["PASS", "FAIL", "FAIL", "FAIL", "PASS", "FAIL"], rows
    assert len({_verdict_column(row) for row in rows}) == 1, "\n".join(rows)
    column = _verdict_column(rows[0])
    assert all(row[column + 6] != " " and row[column + 5] == " " for row in rows), "\n".join(rows)  # the details
    assert "NaN/Inf at different places" in rows[2] and "-1j" in rows[2] and "-infj" in rows[3], rows


@pytest.mark.parametrize("command", [c for c in COMMAND_LINES if c != "selftest"])  # selftest works in children
def test_a_command_leaves_the_process_backend_as_it_found_it(command):
    """In-process callers (and the tests after this one) keep their backend: `--backend` is
    the command's choice, not a set_backend() for the rest of the process."""
    from ascend_aclnn import backends
    before = backends.requested()
    code, _, _ = run_cli(*COMMAND_LINES[command])
    assert code == 0
    assert backends.requested() == before
