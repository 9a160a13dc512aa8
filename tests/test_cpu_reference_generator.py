"""The generator's C++ reading (devtools/gen_cpu_reference.py) on small hand-written functions.

Each case is a shape op-plugin's sources really have, cut down; the cited call site is where it
was found. The whole table is checked against op-plugin itself by test_cpu_reference_table.py
(a developer check that needs the checkout); these run everywhere.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def gen() -> Any:
    sys.path.insert(0, str(ROOT / "devtools"))
    try:
        import gen_cpu_reference
    finally:
        sys.path.remove(str(ROOT / "devtools"))
    return gen_cpu_reference


def call_args(gen: Any, source: str, names: list[str]) -> list[Any]:
    """The symbolic values of the arguments of the one aclnn call in `source`'s first function,
    its C++ parameters being the aten arguments `names`."""
    text = gen.strip_cpp(source)
    masked = gen.mask_strings(text)
    funcs = gen.find_functions("x.cpp", text, masked)
    ev = gen.Evaluator(text, "x.cpp", {}, {}, {"x.cpp": (text, masked)})
    sites, _ = ev.run(funcs[0], names)
    assert len(sites) == 1, sites
    return list(sites[0].args)


def test_a_subscripted_argument_is_never_bound_by_name(gen: Any) -> None:
    # BmmKernelNpuOpApi.cpp:195: bmm passes a slice of its 3-D mat2 to aclnnMatmul, whose header
    # also names it mat2; binding it to bmm's mat2 gave a row that fails on every 3-D input
    src = """
    at::Tensor bmm(const at::Tensor& self, const at::Tensor& mat2) {
      at::Tensor result = npu_preparation::apply_tensor_without_format(self, {1, 2});
      auto mat2_input = mat2[0];
      EXEC_NPU_CMD(aclnnMatmul, self, mat2_input, result, cube_math_type);
      return result;
    }"""
    v = call_args(gen, src, ["self", "mat2"])[1]
    assert v.kind == "computed" and v.refs == ("mat2",)
    assert not gen.keeps_value(v)


def test_a_value_changing_step_in_a_local_it_derives_from_counts(gen: Any) -> None:
    # MaxPool2dWithIndicesKernelNpuOpApi.cpp:70-73: the list passed is rebuilt from elements
    src = """
    at::Tensor f(const at::Tensor& self, at::IntArrayRef kernel_size) {
      at::Tensor result = npu_preparation::apply_tensor_without_format(self);
      const int k_h = kernel_size[0];
      c10::SmallVector<int64_t, SIZE> ksizes = {k_h, k_h};
      at::IntArrayRef kernel_sizes = at::IntArrayRef(ksizes);
      EXEC_NPU_CMD(aclnnF, self, kernel_sizes, result);
      return result;
    }"""
    v = call_args(gen, src, ["self", "kernel_size"])[1]
    assert v.kind == "computed" and v.refs == ("kernel_size",)
    assert not gen.keeps_value(v)


@pytest.mark.parametrize("expr", ["self.item()", "copy_scalar_to_device(self, dtype)", "static_cast<float>(self)"])
def test_value_keeping_conversions_stay_bindable(gen: Any, expr: str) -> None:
    src = f"""
    at::Tensor f(const at::Tensor& self) {{
      at::Tensor result = npu_preparation::apply_tensor_without_format(self);
      auto converted = {expr};
      EXEC_NPU_CMD(aclnnF, converted, result);
      return result;
    }}"""
    v = call_args(gen, src, ["self"])[0]
    assert v.kind == "computed" and v.refs == ("self",)
    assert gen.keeps_value(v)


def test_a_local_both_arms_of_an_if_assign_is_no_longer_its_initial_value(gen: Any) -> None:
    # RepeatInterLeaveKernelNpuOpApi.cpp:232-242: `int64_t total = 0;` then both arms assign it;
    # the table had recorded outputSize as the literal 0
    src = """
    at::Tensor repeat_interleave(const at::Tensor& repeats, c10::optional<int64_t> output_size) {
      int64_t total = 0;
      if (output_size.has_value()) {
        total = output_size.value();
      } else {
        total = repeats.sum().item<int64_t>();
      }
      at::Tensor result = at::empty({total}, repeats.options());
      EXEC_NPU_CMD(aclnnRepeatInterleaveTensor, repeats, total, result);
      return result;
    }"""
    v = call_args(gen, src, ["repeats", "output_size"])[1]
    assert v.kind == "computed"


def test_an_int_dim_function_is_told_from_its_dimname_overload(gen: Any) -> None:
    # GatherKernelNpuOpApi.cpp:63-71: gather(self, int64_t dim, index, sparse_grad) and, for older
    # torch, gather(self, at::Dimname dim, ...) have the same names; aclnnGather had no row
    class Schemas:
        by_cpp = {"gather": [gen.parse_schema("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False)"
                                              " -> Tensor", "official", 1),
                             gen.parse_schema("gather.dimname(Tensor self, Dimname dim, Tensor index, *, "
                                              "bool sparse_grad=False) -> Tensor", "official", 2)]}
    src = """
    at::Tensor gather(const at::Tensor& self, int64_t dim, const at::Tensor& index, bool sparse_grad) { return self; }
    at::Tensor gather(const at::Tensor& self, at::Dimname dim, const at::Tensor& index, bool sparse_grad) { return self; }
    """
    text = gen.strip_cpp(src)
    funcs = gen.find_functions("x.cpp", text, gen.mask_strings(text))
    assert [gen.match_schema(f, Schemas()).full for f in funcs] == ["gather.default", "gather.dimname"]
