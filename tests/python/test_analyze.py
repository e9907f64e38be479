"""The static analysis (tforge_worker.analyze): expected IR facts for every example kernel and
every realistic fixture, and the spaces infer_space builds around a real launch."""

import json
import os

import pytest

from conftest import EXAMPLES, FIXTURES
from tforge_worker.analyze import analyze, infer_space

REALISTIC = os.path.join(FIXTURES, "realistic")


def example(name):
    return os.path.join(EXAMPLES, name, "kernel.py")


def fixture(name):
    return os.path.join(REALISTIC, name)


def kernel_of(path, name):
    doc = analyze(path)
    found = {k["name"]: k for k in doc["kernels"]}
    assert name in found, f"{name} not among {sorted(found)}"
    return found[name]


def kinds(k):
    return {p["name"]: p["kind"] for p in k["params"]}


def uses(k):
    return {p["name"]: set(p["uses"]) for p in k["params"] if p["kind"] == "constexpr"}


def tunables(k):
    return {t["name"]: t for t in k["tunables"]}


# path, kernel, pointers, constexprs with uses that must be among theirs, loops (kind, trip),
# tunable kinds, constraints, a launch (or None) with which infer_space is checked
CASES = [
    (example("matmul"), "matmul_kernel", {"a_ptr", "b_ptr", "c_ptr"},
     {"BLOCK_M": {"arange", "dot", "mask", "shape"}, "BLOCK_K": {"loop_step", "dot", "mask"},
      "GROUP_M": {"other"}},
     [("range", "cdiv(K, BLOCK_K)")],
     {"BLOCK_M": "block", "BLOCK_N": "block", "BLOCK_K": "step", "GROUP_M": "group",
      "num_warps": "warps", "num_stages": "stages"},
     ["(BLOCK_M*BLOCK_K + BLOCK_K*BLOCK_N) * 2 * num_stages <= 232448"],
     dict(M=4096, N=4096, K=4096, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=1, num_warps=4,
          num_stages=1)),
    (example("attention"), "attn_fwd", {"Q", "K", "V", "O"},
     {"HEAD_DIM": {"arange", "shape"}, "BLOCK_N": {"loop_step", "mask", "dot"}},
     [("range", "cdiv(S, BLOCK_N)")],
     {"HEAD_DIM": "fixed", "BLOCK_M": "block", "BLOCK_N": "step"},
     ["(BLOCK_M*HEAD_DIM + HEAD_DIM*BLOCK_N + BLOCK_N*HEAD_DIM) * 2 * num_stages <= 232448"],
     dict(S=1024, H=16, HEAD_DIM=64, BLOCK_M=64, BLOCK_N=32, num_warps=4, num_stages=1)),
    (example("conv2d"), "conv2d_kernel", {"x_ptr", "w_ptr", "out_ptr"},
     {"R": {"static_range"}, "BLOCK_C": {"loop_step", "arange", "mask"}},
     [("range", "cdiv(C, BLOCK_C)"), ("tl.static_range", "R"), ("tl.static_range", "S")],
     {"R": "fixed", "S": "fixed", "BLOCK_PQ": "block", "BLOCK_K": "block", "BLOCK_C": "step"},
     ["(BLOCK_PQ*BLOCK_C + BLOCK_C*BLOCK_K) * 2 * num_stages <= 232448"],
     dict(N=8, C=64, H=34, W=34, K=64, P=32, Q=32, R=3, S=3, BLOCK_PQ=64, BLOCK_K=32,
          BLOCK_C=16, num_warps=4, num_stages=2)),
    (example("layer_norm"), "layer_norm_fwd", {"X", "Y", "W", "B", "Mean", "Rstd"},
     {"BLOCK_N": {"loop_step", "arange", "mask", "shape"}},
     [("range", "cdiv(N, BLOCK_N)")] * 3,
     {"BLOCK_N": "step"}, [], dict(N=4096, stride=4096, BLOCK_N=512, num_warps=4,
                                    num_stages=2)),
    (example("rms_norm"), "rms_norm_fwd", {"X", "Y", "W"}, {"BLOCK_N": {"loop_step"}},
     [("range", "cdiv(N, BLOCK_N)")] * 2, {"BLOCK_N": "step"}, [],
     dict(N=8192, BLOCK_N=1024, num_warps=4, num_stages=1)),
    (example("rope"), "rope_kernel", {"x_ptr", "cos_ptr", "sin_ptr"},
     {"HALF": {"arange"}, "BLOCK_H": {"arange", "mask"}}, [],
     {"HALF": "fixed", "BLOCK_H": "block"}, [], dict(S=512, H=32, HALF=64, BLOCK_H=4,
                                                     num_warps=4, num_stages=1)),
    (example("softmax"), "softmax_kernel", {"out_ptr", "in_ptr"},
     {"BLOCK_N": {"loop_step", "mask"}}, [("range", "cdiv(n_cols, BLOCK_N)")] * 2,
     {"BLOCK_N": "step"}, [], dict(n_cols=781, BLOCK_N=128, num_warps=4, num_stages=1)),
    (example("vector_add"), "add_kernel", {"x_ptr", "y_ptr", "out_ptr"},
     {"BLOCK": {"arange", "mask"}}, [], {"BLOCK": "block"}, [],
     dict(n=98432, BLOCK=128, num_warps=4, num_stages=1)),
    (fixture("gemm_autotune.py"), "matmul_kernel", {"a_ptr", "b_ptr", "c_ptr"},
     {"BLOCK_SIZE_K": {"loop_bound", "dot"}, "ACTIVATION": {"condition"}},
     [("range", "tl.cdiv(K, BLOCK_SIZE_K)")],
     {"BLOCK_SIZE_M": "block", "BLOCK_SIZE_K": "block", "GROUP_SIZE_M": "group",
      "ACTIVATION": "fixed"},
     ["(BLOCK_SIZE_M*BLOCK_SIZE_K + BLOCK_SIZE_K*BLOCK_SIZE_N) * 2 * num_stages <= 232448"],
     dict(M=512, N=512, K=512, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64,
          GROUP_SIZE_M=8, ACTIVATION="", num_warps=8, num_stages=4)),
    (fixture("rms_norm_liger.py"), "_rms_norm_forward_kernel",
     {"Y_ptr", "X_ptr", "W_ptr", "RSTD_ptr"}, {"BLOCK_SIZE": {"arange", "mask"}}, [],
     {"BLOCK_SIZE": "block"}, ["BLOCK_SIZE >= n_cols"],
     dict(n_cols=300, BLOCK_SIZE=512, num_warps=4)),
    (fixture("matvec_heuristics.py"), "matvec_kernel", {"A", "X", "Y"},
     {"EVEN_K": {"condition"}, "BLOCK_K": {"loop_step", "mask"}},
     [("range", "cdiv(K, BLOCK_K)")],
     {"EVEN_K": "fixed", "BLOCK_M": "block", "BLOCK_K": "step"}, [],
     dict(M=70, K=128, BLOCK_M=32, BLOCK_K=64, EVEN_K=True, num_warps=4, num_stages=3)),
    (fixture("attention_causal.py"), "_attn_fwd", {"Q", "K", "V", "Out"},
     {"IS_CAUSAL": {"condition", "static_range"}, "HEAD_DIM": {"arange", "shape"},
      "BLOCK_N": {"loop_step", "mask", "shape"}},
     [("tl.static_range", "1 + IS_CAUSAL"), ("tl.range", "cdiv(hi - lo, BLOCK_N)")],
     {"HEAD_DIM": "fixed", "IS_CAUSAL": "fixed", "BLOCK_M": "block", "BLOCK_N": "step"},
     ["(BLOCK_M*HEAD_DIM + HEAD_DIM*BLOCK_N + BLOCK_N*HEAD_DIM) * 2 * num_stages <= 232448"],
     dict(N_CTX=80, H=2, HEAD_DIM=32, BLOCK_M=32, BLOCK_N=16, IS_CAUSAL=True, num_warps=4,
          num_stages=3)),
    (fixture(os.path.join("pkg", "ops.py")), "_layer_norm_fwd", {"X", "Y", "W", "B"},
     {"BLOCK_SIZE": {"arange", "mask"}}, [], {"BLOCK_SIZE": "block"},
     ["BLOCK_SIZE >= n_cols"], dict(n_cols=200, BLOCK_SIZE=256, num_warps=4, num_stages=3)),
    (fixture("device_queries.py"), "add_persistent_kernel", {"x_ptr", "y_ptr", "output_ptr"},
     {"BLOCK_SIZE": {"arange", "mask"}},
     [("range", "cdiv(n_blocks - tl.program_id(0), tl.num_programs(0))")],
     {"BLOCK_SIZE": "block", "num_stages": "stages"}, [],
     dict(n_elements=98432, BLOCK_SIZE=512, num_warps=4, num_stages=3)),
    (fixture("device_queries.py"), "add_kernel", {"x_ptr", "y_ptr", "output_ptr"},
     {"BLOCK_SIZE": {"arange", "mask"}}, [], {"BLOCK_SIZE": "block"}, [],
     dict(n_elements=98432, BLOCK_SIZE=1024, num_warps=4, num_stages=3)),
    (fixture("softmax_inplace.py"), "softmax_kernel", {"output_ptr", "input_ptr"},
     {"BLOCK_SIZE": {"arange", "mask"}},
     [("tl.range", "cdiv(n_rows - row_start, row_step)")],
     {"BLOCK_SIZE": "block", "num_stages": "stages"}, ["BLOCK_SIZE >= n_cols"],
     dict(n_rows=37, n_cols=300, BLOCK_SIZE=512, num_stages=2, num_warps=8)),
    (fixture("softmax_inplace.py"), "scale_shift_kernel", {"x_ptr"},
     {"BLOCK_SIZE": {"arange", "mask"}}, [], {"BLOCK_SIZE": "block"}, [],
     dict(n_elements=3000, BLOCK_SIZE=1024, num_warps=4, num_stages=3)),
]
IDS = [f"{os.path.relpath(c[0], os.path.dirname(EXAMPLES))}:{c[1]}" for c in CASES]


@pytest.mark.parametrize("path, name, pointers, want_uses, loops, want_kinds, constraints, "
                         "launch", CASES, ids=IDS)
def test_kernel_facts(path, name, pointers, want_uses, loops, want_kinds, constraints, launch):
    k = kernel_of(path, name)
    got = kinds(k)
    assert {n for n, kind in got.items() if kind == "pointer"} == pointers
    for n, u in want_uses.items():
        assert got[n] == "constexpr"
        assert u <= uses(k)[n], f"{n}: uses {uses(k)[n]}, expected at least {u}"
    assert [(lp["kind"], lp["trip_count"]) for lp in k["loops"]] == loops
    t = tunables(k)
    for n, kind in want_kinds.items():
        assert t[n]["kind"] == kind, f"{n}: {t[n]}"
    assert "num_warps" in t and "num_stages" in t
    assert [c["expr"] for c in k["constraints"]] == constraints
    for node in [k] + k["params"] + k["loops"] + k["memops"] + k["dots"]:
        s = node["span"]
        assert 1 <= s["line"] <= s["end_line"]


@pytest.mark.parametrize("path, name, pointers, want_uses, loops, want_kinds, constraints, "
                         "launch", CASES, ids=IDS)
def test_infer_space_holds_the_launch(path, name, pointers, want_uses, loops, want_kinds,
                                      constraints, launch):
    k = kernel_of(path, name)
    space = infer_space(k, launch)
    for n, values in space["params"].items():
        assert launch.get(n, {"num_warps": 4, "num_stages": 3}.get(n)) in values, (n, values)
        assert values == sorted(set(values))
    for n, kind in want_kinds.items():
        assert (n in space["fixed"]) == (kind == "fixed"), (n, space)
    env = dict(launch)
    for c in space["constraints"]:
        assert eval(c, {"__builtins__": {}, "min": min, "max": max}, env), c
    assert space["constraints"] == constraints  # none of these launches breaks one
    json.dumps(space)


def test_domains():
    mm = kernel_of(example("matmul"), "matmul_kernel")
    space = infer_space(mm, dict(M=48, N=4096, K=72, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32,
                                 GROUP_M=1, num_warps=4, num_stages=1))
    assert space["params"]["BLOCK_M"] == [16, 32, 64]  # capped by next_pow2(M)
    assert space["params"]["BLOCK_N"] == [16, 32, 64, 128, 256]
    assert space["params"]["GROUP_M"] == [1, 4, 8, 16]
    assert space["params"]["num_warps"] == [2, 4, 8, 16]
    assert space["params"]["num_stages"] == [1, 2, 3, 4, 5]
    rms = kernel_of(fixture("rms_norm_liger.py"), "_rms_norm_forward_kernel")
    space = infer_space(rms, dict(n_cols=1000, BLOCK_SIZE=1024, num_warps=4, num_stages=3))
    assert space["params"]["BLOCK_SIZE"] == [1024, 2048, 4096]
    assert space["params"]["num_stages"] == [3]  # no loops: only the launched value
    space = infer_space(rms, dict(n_cols=40000, BLOCK_SIZE=65536, num_warps=16))
    assert space["params"]["BLOCK_SIZE"] == [65536]
    add = kernel_of(example("vector_add"), "add_kernel")
    space = infer_space(add, dict(n=98432, BLOCK=128, num_warps=1, num_stages=1))
    assert space["params"]["BLOCK"] == [32, 64, 128, 256, 512]
    assert space["params"]["num_warps"] == [1, 2, 4, 8, 16]
    attn = kernel_of(example("attention"), "attn_fwd")
    space = infer_space(attn, dict(S=1024, H=16, HEAD_DIM=64, BLOCK_M=64, BLOCK_N=32))
    assert space["fixed"] == {"HEAD_DIM": "must equal a size (an unmasked tl.arange extent)"}


def test_a_constraint_the_launch_breaks_is_dropped():
    rms = kernel_of(fixture("rms_norm_liger.py"), "_rms_norm_forward_kernel")
    space = infer_space(rms, dict(n_cols=3000, BLOCK_SIZE=1024, num_warps=4))
    assert space["constraints"] == []
    assert 1024 in space["params"]["BLOCK_SIZE"]


def test_autotune_from_a_comprehension():
    k = kernel_of(fixture("gemm_autotune.py"), "matmul_kernel")
    a = k["autotune"]
    assert a["configs_literal"] is False and a["configs"] is None
    assert a["configs_text"] == "configs"
    assert "for bm in [32, 64, 128]" in a["configs_source"]
    assert "configs = configs[:1]" in a["configs_source"]
    assert a["key"] == ["M", "N", "K"]
    assert a["prune_configs_by"] == '{"early_config_prune": prune_configs}'
    assert a["pre_hook"] == "zero_output" and a["post_hook"] is None
    assert [d["kind"] for d in k["decorators"]] == ["autotune", "jit"]
    assert [c["callee"] for c in k["calls"]] == ["leaky_relu"]
    assert [p["name"] for p in k["params"]][-1] == "ACTIVATION"
    site, = k["launch_sites"]
    assert site["function"] == "matmul" and site["params"] == ["a", "b", "activation"]
    assert site["grid"]["kind"] == "name"
    assert site["grid"]["assigned"].startswith("grid = lambda META:")
    assert site["constexprs"] == [{"name": "ACTIVATION", "value": "activation",
                                   "positional": False, "from_param": True, "assigned": None}]
    assert site["num_warps"] is None and len(site["args"]) == 12


def test_literal_autotune_configs():
    a = kernel_of(example("rms_norm"), "rms_norm_fwd")["autotune"]
    assert a["configs_literal"] is True
    assert a["configs"] == [{"BLOCK_N": 256, "num_warps": 4, "num_stages": 1},
                            {"BLOCK_N": 1024, "num_warps": 4, "num_stages": 1}]
    assert a["key"] == ["N"]


def test_heuristics_and_a_named_grid():
    k = kernel_of(fixture("matvec_heuristics.py"), "matvec_kernel")
    assert k["heuristics"]["values"] == {"EVEN_K": 'lambda args: args["K"] % args["BLOCK_K"] == 0'}
    assert [d["kind"] for d in k["decorators"]] == ["heuristics", "jit"]
    assert tunables(k)["EVEN_K"]["why"] == "set by @triton.heuristics"
    assert [r["axis"] for r in k["reductions"]] == ["1"]
    site, = k["launch_sites"]
    assert site["grid"] == {"text": "grid", "kind": "name",
                            "assigned": "grid = (triton.cdiv(M, BLOCK_M),)"}
    assert [c["from_param"] for c in site["constexprs"]] == [True, True]


def test_liger_settings_from_a_helper():
    k = kernel_of(fixture("rms_norm_liger.py"), "_rms_norm_forward_kernel")
    site, = k["launch_sites"]
    assert site["grid"] == {"text": "(n_rows,)", "kind": "tuple", "assigned": None}
    block, = site["constexprs"]
    assert block["assigned"] == "BLOCK_SIZE, num_warps = calculate_settings(n_cols)"
    assert site["num_warps"] == "num_warps"
    t = tunables(k)["BLOCK_SIZE"]
    assert t["covers_row"] == "n_cols" and t["relates_to"] == ["n_cols"]
    assert [p["kind"] for p in k["params"] if p["name"] in ("eps", "offset", "n_cols")] == \
        ["scalar"] * 3
    assert [(r["op"], r["axis"]) for r in k["reductions"]] == [("sum", "0")]
    assert k["program_ids"][0]["axis"] == "0"


def test_attention_from_an_autograd_function():
    k = kernel_of(fixture("attention_causal.py"), "_attn_fwd")
    site, = k["launch_sites"]
    assert site["qualname"] == "_attention.forward" and site["function"] == "forward"
    assert site["params"] == ["ctx", "q", "k", "v", "causal", "sm_scale"]
    meta = {c["name"]: c for c in site["constexprs"]}
    assert meta["BLOCK_M"]["assigned"] == "BLOCK_M = 32"
    assert meta["IS_CAUSAL"]["from_param"] is True
    assert site["num_warps"] == "num_warps" and site["num_stages"] == "3"
    rng = k["loops"][1]
    assert rng["options"] == {"num_stages": "2"} and rng["depth"] == 1
    ops = [(m["op"], m["block_pointer"]) for m in k["memops"]]
    assert ("make_block_ptr", True) in ops and ("advance", True) in ops
    loads = [m for m in k["memops"] if m["op"] == "load" and m["block_pointer"]]
    assert [m["boundary_check"] for m in loads] == ["(1,)", "(0,)"]
    assert [m["padding_option"] for m in loads] == ['"zero"', '"zero"']
    dots = k["dots"]
    assert [(d["m"], d["n"], d["k"]) for d in dots] == [("BLOCK_M", "BLOCK_N", "HEAD_DIM"),
                                                       ("BLOCK_M", "HEAD_DIM", "BLOCK_N")]
    assert dots[1]["acc"] == "acc" and dots[0]["acc"] is None
    assert tunables(k)["IS_CAUSAL"]["why"] == "a flag (used in conditions)"


def test_in_place_and_memory_op_options():
    k = kernel_of(fixture("softmax_inplace.py"), "scale_shift_kernel")
    assert [(m["op"], m["pointer"]) for m in k["memops"]] == [("load", "x_ptr + offsets"),
                                                              ("store", "x_ptr + offsets")]
    assert k["memops"][1]["value"] == "x * alpha + beta"
    k = kernel_of(fixture("device_queries.py"), "add_persistent_kernel")
    assert [m["eviction_policy"] for m in k["memops"][:2]] == ['"evict_first"'] * 2
    assert all(m["in_loop"] for m in k["memops"])
    assert [n["axis"] for n in k["num_programs"]] == ["0"]
    soft = kernel_of(fixture("softmax_inplace.py"), "softmax_kernel")
    assert soft["loops"][0]["options"] == {"num_stages": "num_stages"}
    site, = soft["launch_sites"]
    assert site["grid"]["kind"] == "tuple"
    assert {c["name"]: c["assigned"] for c in site["constexprs"]} == {
        "BLOCK_SIZE": "BLOCK_SIZE = triton.next_power_of_2(n_cols)",
        "num_stages": "num_stages = 2"}


def test_file_level_facts():
    doc = analyze(fixture("device_queries.py"))
    assert [q["text"] for q in doc["device_queries"]] == [
        "DEVICE = triton.runtime.driver.active.get_active_torch_device()",
        "NUM_SM = torch.cuda.get_device_properties(DEVICE).multi_processor_count"]
    assert [q["span"]["line"] for q in doc["device_queries"]] == [16, 17]
    assert {f["name"]: f["launches"] for f in doc["functions"]} == {
        "add": ["add_kernel"], "add_persistent": ["add_persistent_kernel"]}
    doc = analyze(fixture(os.path.join("pkg", "ops.py")))
    assert [k["name"] for k in doc["kernels"]] == ["_layer_norm_fwd"]
    assert doc["device_queries"] == []
    doc = analyze(example("softmax"))  # its top-level demo queries nothing by name
    assert doc["device_queries"] == []
    assert [k["name"] for k in analyze(fixture("gemm_autotune.py"))["kernels"]] == \
        ["matmul_kernel", "leaky_relu"]


def test_jit_spellings(tmp_path):
    src = tmp_path / "spellings.py"
    src.write_text(
        "import triton\nimport triton.language as tl\nfrom triton import jit\n\n"
        "@jit\ndef a(x_ptr, N: tl.constexpr = 8):\n    tl.store(x_ptr + tl.arange(0, N), 1)\n\n"
        "@triton.jit(do_not_specialize=['n'])\ndef b(p, n):\n    tl.atomic_add(p, n)\n\n"
        "def helper():\n    pass\n")
    doc = analyze(str(src))
    assert [k["name"] for k in doc["kernels"]] == ["a", "b"]
    a, b = doc["kernels"]
    assert a["params"][1]["default"] == 8
    assert b["jit_options"] == {"do_not_specialize": "['n']"}
    assert kinds(b) == {"p": "pointer", "n": "scalar"}
    assert [(x["op"], x["pointer"], x["value"]) for x in b["atomics"]] == [("atomic_add", "p", "n")]
    assert [f["name"] for f in doc["functions"]] == ["helper"]


def test_errors(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import triton\n\ndef f(:\n    pass\n")
    with pytest.raises(ValueError, match=r"bad\.py:3: syntax error: "):
        analyze(str(bad))
    with pytest.raises(ValueError, match=r"no @triton.jit function 'nope' \(found: "
                                         r"matmul_kernel, leaky_relu\)"):
        analyze(fixture("gemm_autotune.py"), "nope")
    with pytest.raises(FileNotFoundError):
        analyze(str(tmp_path / "missing.py"))
    only = analyze(fixture("gemm_autotune.py"), "leaky_relu")
    assert [k["name"] for k in only["kernels"]] == ["leaky_relu"]


def test_every_span_cuts_its_text():
    """Spans are byte columns: slicing the source at a launch site gives the call back."""
    path = fixture("rms_norm_liger.py")
    lines = open(path, "rb").read().splitlines(keepends=True)
    k = kernel_of(path, "_rms_norm_forward_kernel")
    s = k["launch_sites"][0]["span"]
    text = lines[s["line"] - 1][s["col"]:] + b"".join(lines[s["line"]:s["end_line"] - 1]) + \
        lines[s["end_line"] - 1][:s["end_col"]]
    assert text.startswith(b"_rms_norm_forward_kernel[(n_rows,)](") and text.endswith(b")")
    p = k["params"][0]["span"]
    assert lines[p["line"] - 1][p["col"]:p["end_col"]] == b"Y_ptr"


def test_rewrite_sites(tmp_path):
    """exp calls, aligned offsets (a scalar times B plus an arange of B, not a gathered tile)
    and the tile map, each with byte spans that cut exactly their text."""
    src = tmp_path / "sites.py"
    src.write_text(
        "import triton\nimport triton.language as tl\n\n@triton.jit\n"
        "def k(idx, x, y, B: tl.constexpr):\n"
        "    pid_m = tl.program_id(0)\n    pid_n = tl.program_id(1)\n"
        "    offs = pid_m * B + tl.arange(0, B)\n"
        "    rows = tl.load(idx + tl.arange(0, B))\n"
        "    gathered = rows * B + tl.arange(0, B)\n"
        "    for i in range(0, pid_n, 1):\n"
        "        tl.store(y + gathered, tl.exp(tl.load(x + offs)))\n")
    k = analyze(str(src))["kernels"][0]
    assert [o["name"] for o in k["offsets"]] == ["offs"]
    assert cut(str(src), k["offsets"][0]["span"]) == "pid_m * B + tl.arange(0, B)"
    (e,) = k["math"]
    assert (cut(str(src), e["func_span"]), cut(str(src), e["arg_span"])) == \
        ("tl.exp", "tl.load(x + offs)")
    t = k["tile_map"]
    assert t["form"] == "grid2d" and (t["m_target"], t["n_target"]) == ("pid_m", "pid_n")
    assert cut(str(src), t["n_stmt"]) == "pid_n = tl.program_id(1)"
    loop = k["loops"][0]
    assert (cut(str(src), loop["iter_span"]), cut(str(src), loop["func_span"])) == \
        ("range(0, pid_n, 1)", "range")
    assert k["language"] == "tl"


def cut(path, span):
    return open(path, "rb").read()[span["start"]:span["end"]].decode()


def test_gemm_of_the_tutorial_kernels():
    path = example("matmul")
    g = kernel_of(path, "matmul_kernel")["gemm"]
    assert (g["m"], g["n"], g["k"], g["block_k"], g["group_m"]) == \
        ("M", "N", "K", "BLOCK_K", "GROUP_M")
    assert (g["k_var"], g["k_offset"], g["store_dtype"]) == ("k", "k", "tl.float16")
    assert [g[x]["base"] for x in "abc"] == ["a_ptr", "b_ptr", "c_ptr"]
    assert (g["a"]["row_start"], g["b"]["col_start"]) == ("pid_m * BLOCK_M", "pid_n * BLOCK_N")
    assert cut(path, g["a"]["ptrs_stmt"]).startswith("a_ptrs = a_ptr + offs_m[:, None]")
    assert cut(path, g["b"]["access"]).startswith("tl.load(b_ptrs, mask=")
    assert cut(path, g["a"]["advance"]) == "a_ptrs += BLOCK_K * stride_ak"
    assert cut(path, g["c"]["access"]).startswith("tl.store(c_ptrs, acc.to(tl.float16)")
    assert cut(path, g["dot"]) == "acc = tl.dot(a, b, acc)"
    assert cut(path, g["loop"]).startswith("for k in range(0, K, BLOCK_K):")
    body = g["tile_body"]
    assert cut(path, body["stmt"]) == "pid = tl.program_id(0)"
    assert cut(path, body["call"]) == "tl.program_id(0)"
    lines = [x["line"] for x in body["lines"]]
    assert lines[0] == body["stmt"]["line"] and 25 not in lines  # a blank line is not indented
    assert all(x["col"] == 0 for x in body["lines"])

    path = fixture("gemm_autotune.py")
    g = kernel_of(path, "matmul_kernel")["gemm"]
    assert (g["k_offset"], g["acc"], g["c"]["value"], g["c"]["mask"]) == \
        ("k * BLOCK_SIZE_K", "accumulator", "c", "c_mask")
    assert g["a"]["mask"] == "offs_k[None, :] < K - k * BLOCK_SIZE_K"  # rows wrap by % M
    assert kernel_of(path, "leaky_relu")["gemm"] is None
    assert kernel_of(example("attention"), "attn_fwd")["gemm"] is None


def edited_kernel(tmp_path, source, name, replacements):
    """Kernel `name` of a copy of `source` (tmp_path / "variant.py") with the replacements made."""
    text = open(source).read()
    for old, new in replacements:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "variant.py"
    path.write_text(text)
    return kernel_of(str(path), name)


def matmul_variant(tmp_path, *replacements):
    return edited_kernel(tmp_path, example("matmul"), "matmul_kernel", replacements)["gemm"]


def test_gemm_forms_it_takes(tmp_path):
    g = matmul_variant(tmp_path, (" + offs_k[None, :] * stride_ak", " + offs_k[None, :]"),
                       ("a_ptrs += BLOCK_K * stride_ak", "a_ptrs += BLOCK_K"),
                       ("acc = tl.dot(a, b, acc)", "acc += tl.dot(a, b)"),
                       ("c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * "
                        "stride_cn\n    tl.store(c_ptrs,",
                        "tl.store(c_ptr + stride_cm * offs_m[:, None] + offs_n[None, :] * "
                        "stride_cn,"))
    assert g["a"]["stride_col"] == "1"  # a stride left out
    assert g["c"]["ptrs"] is None and g["c"]["ptrs_stmt"] is None


@pytest.mark.parametrize("replacements", [
    [("& (offs_k[None, :] < K - k)", "& (offs_k[None, :] < K)")],  # not the K bound
    [("(offs_m[:, None] < M) & (offs_k", "(offs_m[:, None] >= offs_k[None, :]) & (offs_k")],
    [("other=0.0)\n        b =", "other=1.0)\n        b =")],  # padding that is not zero
    [("        acc = tl.dot(a, b, acc)\n        a_ptrs += BLOCK_K * stride_ak\n",
      "        acc = tl.dot(a, b, acc)\n"),
     ("        a = tl.load(", "        a_ptrs += BLOCK_K * stride_ak\n        a = tl.load(")],
    [("a_ptrs += BLOCK_K * stride_ak", "a_ptrs += 2 * BLOCK_K * stride_ak")],
    [("acc = tl.dot(a, b, acc)", "acc = tl.dot(a, b, acc)\n        acc = tl.dot(a, b, acc)")],
    [("(offs_n[None, :] < N))\n", "(offs_n[None, :] < M))\n")],  # N and M mixed up
    [("for k in range(0, K, BLOCK_K)", "for k in range(0, K, 2 * BLOCK_K)")],
    # a base moved after its tile is made (moved before it, along a batch axis, it is taken)
    [("* stride_bn\n", "* stride_bn\n    a_ptr += pid * 0\n")],
], ids=["k-bound", "causal-mask", "other", "advance-first", "double-step", "two-dots", "sizes",
        "step", "moved-base"])
def test_gemm_forms_it_refuses(tmp_path, replacements):
    assert matmul_variant(tmp_path, *replacements) is None


def test_tile_body_only_when_a_loop_over_tiles_keeps_the_result(tmp_path):
    # a second program id, a name bound before the program id and again after it, an early
    # return
    for replacement in [("pid = tl.program_id(0)\n",
                         "pid = tl.program_id(0)\n    batch = tl.program_id(1)\n"),
                        ("    pid = tl.program_id(0)\n",
                         "    scale = 1.0\n    pid = tl.program_id(0)\n    scale = 2.0\n"),
                        ("    pid = tl.program_id(0)\n",
                         "    if M == 0:\n        return\n    pid = tl.program_id(0)\n")]:
        g = matmul_variant(tmp_path, replacement)
        assert g is not None and g["tile_body"] is None, replacement


def without(path, spans):
    """The file with the bytes of `spans` deleted."""
    data = open(path, "rb").read()
    for s in sorted(spans, key=lambda s: -s["start"]):
        data = data[:s["start"]] + data[s["end"]:]
    return data.decode()


def test_loop_tails_of_the_kernels():
    """The K loops of the GEMMs, the softmax's two loops: their masks lose exactly the bound
    along the loop (a term with its `&`; a mask that is nothing else, with its `other`)."""
    path = example("matmul")
    (t,) = kernel_of(path, "matmul_kernel")["loop_tails"]
    assert (t["form"], t["var"], t["size"], t["block"]) == ("step", "k", "K", "BLOCK_K")
    assert cut(path, t["stop"]) == "K" and cut(path, t["span"]).startswith("for k in range(")
    assert cut(path, t["body"]).startswith("        a = tl.load(a_ptrs, mask=")
    assert cut(path, t["body"]).endswith("b_ptrs += BLOCK_K * stride_bk")
    text = without(path, t["drops"])
    assert "tl.load(a_ptrs, mask=(offs_m[:, None] < M), other=0.0)" in text
    assert "tl.load(b_ptrs, mask=(offs_n[None, :] < N), other=0.0)" in text

    path = fixture("gemm_autotune.py")
    (t,) = kernel_of(path, "matmul_kernel")["loop_tails"]
    assert (t["form"], cut(path, t["stop"])) == ("count", "tl.cdiv(K, BLOCK_SIZE_K)")
    text = without(path, t["drops"])
    assert "a = tl.load(a_ptrs)\n" in text and "b = tl.load(b_ptrs)\n" in text

    path = example("softmax")
    tails = kernel_of(path, "softmax_kernel")["loop_tails"]
    assert [(t["var"], t["size"], t["block"]) for t in tails] == \
        [("start", "n_cols", "BLOCK_N")] * 2
    text = without(path, tails[0]["drops"] + tails[1]["drops"])
    assert text.count("x = tl.load(in_row + cols)\n") == 2
    assert "tl.store(out_row + cols, tl.exp(x - row_max) / row_sum)" in text
    assert kernel_of(fixture("attention_causal.py"), "_attn_fwd")["loop_tails"] == []

    path = example("attention")
    (t,) = kernel_of(path, "attn_fwd")["loop_tails"]
    assert [cut(path, c) for c in t["trues"]] == ["cols[None, :] < S"]  # the score mask


def test_the_causal_diagonal():
    """The one-loop causal attention: its loop is a diagonal one, the causal condition its one
    cut, the sequence-length mask and condition left; the row tile's first row is the size."""
    path = fixture("flash_attn_causal.py")
    (t,) = kernel_of(path, "_fwd_kernel")["loop_tails"]
    assert (t["form"], t["var"], t["size"], t["block"]) == \
        ("diagonal", "start_n", "start_m * BLOCK_M", "BLOCK_N")
    assert cut(path, t["stop"]) == "end_n" and t["drops"] == []
    assert [cut(path, c) for c in t["trues"]] == \
        ["offs_m[:, None] >= (start_n + offs_n)[None, :]"]


def causal_tails(tmp_path, *replacements):
    return edited_kernel(tmp_path, fixture("flash_attn_causal.py"), "_fwd_kernel",
                         replacements)["loop_tails"]


def test_the_diagonal_through_a_name(tmp_path):
    """A condition named first (`mask = ...`, used only by the where) is cut where it is made;
    `C <= R` is the same condition."""
    path = str(tmp_path / "variant.py")
    (t,) = causal_tails(tmp_path, (
        "        qk += tl.where(offs_m[:, None] >= (start_n + offs_n)[None, :], 0, float(\"-inf\"))\n",
        "        causal = (start_n + offs_n)[None, :] <= offs_m[:, None]\n"
        "        qk += tl.where(causal, 0, float(\"-inf\"))\n"))
    assert t["form"] == "diagonal"
    assert [cut(path, c) for c in t["trues"]] == ["(start_n + offs_n)[None, :] <= offs_m[:, None]"]


@pytest.mark.parametrize("replacements", [
    [(">= (start_n + offs_n)[None, :]", "> (start_n + offs_n)[None, :] + 1")],  # not the columns
    [("offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)",
      "offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M) + 1")],  # not a row tile
    [("for start_n in range(0, end_n, BLOCK_N)", "for start_n in range(BLOCK_N, end_n, BLOCK_N)")],
    [("for start_n in range(0, end_n, BLOCK_N)", "for start_n in range(0, end_n, 2 * BLOCK_N)")],
    [("        m_i = m_ij\n", "        m_i = m_ij\n        end_n = end_n - 1\n")],
    [("        m_i = m_ij\n", "        m_i = m_ij\n        start_m = start_m + 1\n")],
    [("start_n = tl.multiple_of(start_n, BLOCK_N)", "start_n = start_n + 0")],
], ids=["columns", "not-a-run", "start", "step", "stop-rebound", "row-rebound", "var-rebound"])
def test_the_diagonal_it_refuses(tmp_path, replacements):
    assert causal_tails(tmp_path, *replacements) == []


def matmul_tails(tmp_path, *replacements):
    return edited_kernel(tmp_path, example("matmul"), "matmul_kernel", replacements)["loop_tails"]


@pytest.mark.parametrize("replacements", [
    [("< K - k)", "< K - k + 1)")],  # a bound the last iteration is not alone to need
    [("offs_k = tl.arange(0, BLOCK_K)", "offs_k = tl.arange(0, BLOCK_K) + 1")],
    [("for k in range(0, K, BLOCK_K)", "for k in range(0, K, 2 * BLOCK_K)")],
    [("for k in range(0, K, BLOCK_K)", "for k in range(BLOCK_K, K, BLOCK_K)")],
    [("        acc = tl.dot(a, b, acc)\n",
      "        acc = tl.dot(a, b, acc)\n        k = k + 1\n")],
    [("    acc = tl.zeros(", "    K = K - 1\n    acc = tl.zeros(")],
], ids=["bound", "not-arange", "step", "start", "var-rebound", "size-rebound"])
def test_loop_tails_it_refuses(tmp_path, replacements):
    assert matmul_tails(tmp_path, *replacements) == []


def test_scale_folds_of_the_attention_kernels():
    """`qk = tl.dot(q, k) * qk_scale` in the key loop, qk_scale = sm_scale * log2(e) made before
    it: the cut ` * qk_scale`, the row max, the subtraction's qk, the loop (in the causal
    fixture, the key loop inside the two-phase static_range, with a where of -inf between)."""
    for path, name, loop, m in ((example("attention"), "attn_fwd", "for start_n in range(",
                                 "m_new"),
                                (fixture("attention_causal.py"), "_attn_fwd",
                                 "for start_n in tl.range(", "m_ij")):
        (d,) = kernel_of(path, name)["scale_folds"]
        assert (d["x"], d["scale"], d["params"]) == ("qk", "qk_scale", ["sm_scale"])
        assert cut(path, d["stmt"]) == "qk = tl.dot(q, k) * qk_scale"
        assert cut(path, d["cut"]) == " * qk_scale"
        assert [cut(path, x) for x in d["maxes"]] == ["tl.max(qk, 1)"]
        assert [cut(path, x) for x in d["subs"]] == ["qk"]
        data = open(path, "rb").read()
        assert data[d["subs"][0]["end"]:].startswith(f" - {m}[:, None]".encode())
        assert cut(path, d["loop"]).startswith(loop)
    assert kernel_of(example("matmul"), "matmul_kernel")["scale_folds"] == []
    assert kernel_of(fixture("flash_attn_causal.py"), "_fwd_kernel")["scale_folds"] == []


def test_scale_folds_in_place():
    """`qk *= sm_scale` after the length mask, qk made afresh each iteration (`qk = tl.zeros`,
    then `qk += tl.dot`): the cut is the statement's whole line, and only the uses after it
    take the scale."""
    path = fixture("attention_varlen.py")
    (d,) = kernel_of(path, "_fwd_varlen")["scale_folds"]
    assert (d["x"], d["scale"], d["params"]) == ("qk", "sm_scale", ["sm_scale"])
    assert cut(path, d["cut"]) == "        qk *= sm_scale\n"
    assert [cut(path, x) for x in d["maxes"]] == ["tl.max(qk, 1)"]
    assert len(d["subs"]) == 1


def varlen_folds(tmp_path, *replacements):
    return edited_kernel(tmp_path, fixture("attention_varlen.py"), "_fwd_varlen",
                         replacements)["scale_folds"]


def test_scale_folds_in_place_forms(tmp_path):
    """`qk = qk * s` and `qk = s * qk` are the same statement; a max before it stays as it is."""
    path = str(tmp_path / "variant.py")
    for text in ("qk = qk * sm_scale", "qk = sm_scale * qk"):
        (d,) = varlen_folds(tmp_path, ("qk *= sm_scale", text))
        assert cut(path, d["cut"]) == f"        {text}\n"
    (d,) = varlen_folds(tmp_path, ("        qk *= sm_scale\n",
                                   "        m_raw = tl.max(qk, 1)\n        qk *= sm_scale\n"))
    assert [cut(path, x) for x in d["maxes"]] == ["tl.max(qk, 1)"]
    assert d["maxes"][0]["line"] > d["stmt"]["line"]


@pytest.mark.parametrize("replacements", [
    [("qk = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)\n        qk += tl.dot(q, k)",
      "qk += tl.dot(q, k)")],  # the last iteration's scores read before this one makes them
    [("qk *= sm_scale", "qk *= sm_scale; m_i = m_i")],  # not alone on its line
    [("qk *= sm_scale", "qk *= qk")],  # not a scale
], ids=["carried", "shared-line", "self"])
def test_scale_folds_in_place_it_refuses(tmp_path, replacements):
    assert varlen_folds(tmp_path, *replacements) == []


def attention_folds(tmp_path, *replacements):
    return edited_kernel(tmp_path, example("attention"), "attn_fwd", replacements)["scale_folds"]


def test_scale_folds_it_takes(tmp_path):
    """The scale first, a parenthesised dot, a literal scale (no parameter to check), a
    quotient."""
    path = str(tmp_path / "variant.py")
    (d,) = attention_folds(tmp_path, ("tl.dot(q, k) * qk_scale", "qk_scale * tl.dot(q, k)"))
    assert cut(path, d["cut"]) == "qk_scale * "
    (d,) = attention_folds(tmp_path, ("tl.dot(q, k) * qk_scale", "(tl.dot(q, k)) * 0.125"))
    assert (cut(path, d["cut"]), d["params"]) == (" * 0.125", [])
    (d,) = attention_folds(tmp_path, ("sm_scale * 1.4426950408889634",
                                      "1.4426950408889634 / sm_scale"))
    assert d["params"] == ["sm_scale"]


@pytest.mark.parametrize("replacements", [
    [("sm_scale * 1.4426950408889634", "-sm_scale * 1.4426950408889634")],  # not positive
    [("sm_scale * 1.4426950408889634", "(sm_scale - 1) * 1.4426950408889634")],
    [("        m_i = m_new\n", "        m_i = m_new\n        qk_scale = qk_scale * 0.5\n")],
    [("tl.dot(q, k) * qk_scale", "tl.dot(q, k) * cols[None, :]")],  # not a scalar
    [("tl.dot(q, k) * qk_scale", "tl.dot(q, k, acc=None) * qk_scale")],  # an accumulator
    [("-float(\"inf\"))\n", "0.0)\n")],  # a where that does not commute with the scale
    [("l_i = l_i * alpha + tl.sum(p, 1)", "l_i = l_i * alpha + tl.sum(p, 1) + tl.sum(qk, 1)")],
    [("tl.max(qk, 1)", "tl.max(p_prev, 1)"),
     ("    for start_n", "    p_prev = q\n    for start_n")],
], ids=["negated", "difference", "scale-rebound", "tensor", "acc", "where-other", "other-use",
        "no-max"])
def test_scale_folds_it_refuses(tmp_path, replacements):
    assert attention_folds(tmp_path, *replacements) == []


def test_written_only_pointers(tmp_path):
    def written_only(path, kernel):
        (k,) = [k for k in analyze(path)["kernels"] if k["name"] == kernel]
        return {p["name"] for p in k["params"] if p.get("written_only")}
    assert written_only(fixture("gemm_autotune.py"), "matmul_kernel") == {"c_ptr"}
    assert written_only(fixture("softmax_inplace.py"), "scale_shift_kernel") == set()  # in place
    # a pointer handed to a helper, which might load through it, is not written only
    path = tmp_path / "handed.py"
    path.write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def bump(p, offs):\n    tl.store(p + offs, tl.load(p + offs) + 1)\n\n\n@triton.jit\n"
        "def k(x_ptr, y_ptr, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
        "    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(y_ptr.dtype.element_ty))\n"
        "    tl.store(x_ptr + offs, 0.0)\n    bump(y_ptr, offs)\n")
    assert written_only(str(path), "k") == set()
    path.write_text(path.read_text().replace("    bump(y_ptr, offs)\n", ""))
    assert written_only(str(path), "k") == {"y_ptr"}


def test_a_block_unpacked_from_a_shape_is_fixed():
    # the page size of a paged KV cache is the cache's layout: another value reads other pages
    k = kernel_of(fixture("paged_decode_attention.py"), "paged_decode_attention_kernel")
    (t,) = [t for t in k["tunables"] if t["name"] == "kv_block_size"]
    assert t["kind"] == "fixed" and t["why"].startswith("a size of an input (_, kv_block_size")
    assert "kv_block_size" not in infer_space(k, {"kv_block_size": 16})["params"]


def test_a_block_the_host_reads_from_the_splatted_config_is_fixed():
    # the wrapper pads the routing to config["BLOCK_SIZE_M"] and launches with **config
    k = kernel_of(fixture("moe_grouped_gemm.py"), "moe_grouped_gemm_kernel")
    (site,) = k["launch_sites"]
    assert site["splats"] == ["config"] and "BLOCK_SIZE_M" in site["host_keys"]
    kinds_of = {t["name"]: t["kind"] for t in k["tunables"]}
    assert kinds_of["BLOCK_SIZE_M"] == "fixed" and kinds_of["BLOCK_SIZE_N"] == "block"


def test_a_loop_tail_through_a_mask_held_in_a_name():
    # `msk = cols < n_cols` then `mask=msk`: the gradient pass splits like the others
    k = kernel_of(fixture("fused_xent.py"), "cross_entropy_fwd_kernel")
    tails = {t["span"]["line"]: len(t["drops"]) for t in k["loop_tails"]}
    assert tails[62] == 3  # its load's mask and other, its store's mask


def test_exp_in_a_jit_helper_is_the_kernels_math_too():
    # GeGLU's tanh is a jit helper written with tl.exp: exp2 reaches it there
    k = kernel_of(fixture("glu_act.py"), "geglu_tanh_fwd_kernel")
    assert [(m["op"], m.get("helper")) for m in k["math"]] == [("exp", "_tanh")]
    assert kernel_of(fixture("glu_act.py"), "swiglu_fwd_kernel")["math"] == []
