"""The ``authors`` semantics of the variable-capacity strategies: a hand-checked run, the
spec and the readers; with g++, GCC's heap order and, with the authors' repository
(``$DISPATCHLAB_VR_REPO`` or the local mirror), the same result lines as their simu.cc
on a truncated Borg window."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from dispatchlab.cli.main import app
from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.dispatchers.variable_capacity.authors import AuthorsVC, simulate_authors
from dispatchlab.dispatchers.variable_capacity.authors_sim import AuthorsSetup, glibc_shuffle
from dispatchlab.dispatchers.variable_capacity.cpp_heap import heap_pop, heap_push
from dispatchlab.dispatchers.variable_capacity.target import TargetVC
from dispatchlab.engine.capacity import read_variation_rows
from dispatchlab.errors import ConfigError, WorkloadError
from dispatchlab.workload.vc_authors import authors_quantiles, read_authors_jobs

ROOT = Path(__file__).resolve().parents[2]
HAS_GXX = shutil.which("g++") is not None
needs_gxx = pytest.mark.skipif(not HAS_GXX, reason="g++ not installed (.ci/setup-gxx.sh)")


def harness() -> Any:
    """benchmarks/variable_resources_crosscheck.py as a module."""
    path = ROOT / "benchmarks" / "variable_resources_crosscheck.py"
    spec = importlib.util.spec_from_file_location("vr_crosscheck", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture()
def small(tmp_path: Path) -> tuple[Path, Path]:
    """2 machines of 2 cores, no change; a (2 cores), b and c (1 core)."""
    jobs = tmp_path / "jobs.txt"
    jobs.write_text("a 0 100 2 release\nb 0 50 1 release\nc 10 100 1 release\n")
    var = tmp_path / "var.txt"
    var.write_text("2\n")
    return jobs, var


@pytest.mark.slow
def test_first_fit_by_hand(small: tuple[Path, Path]) -> None:
    # a arrives first (ties go to the heap order: a, b, c) but the free space must
    # exceed its size (simu.cc's `MSpace > np`): a is queued, b and c go to machine 0,
    # a starts on machine 1 at b's end (50). Work 50 + 100 + 200 of 2 × 2 × 200 core-s.
    jobs, var = small
    res = simulate_authors(jobs, var, AuthorsSetup("ff-aware", 0, 200, machines=2, cores=2))
    assert (res.area, res.util_total, res.waste) == (800, 350, 0)
    assert res.goodput == pytest.approx(0.4375)
    assert res.max_stretch == 1.5 and res.mean_stretch == pytest.approx(3.5 / 3)
    assert res.line() == "800 350 350 0 1.5 1.16667 1 -nan"


def test_cli_runs_the_authors_semantics(small: tuple[Path, Path]) -> None:
    jobs, var = small
    out = CliRunner().invoke(app, ["simulate", "-w", str(jobs), "-p", "nodes=2,cores=2",
                                   "-d", "vc=ff-aware,semantics=authors", "--scenario",
                                   str(var), "--window-start", "0", "--window", "200",
                                   "--json"])
    assert out.exit_code == 0, out.output
    got = json.loads(out.output)
    assert got["goodput"] == pytest.approx(0.4375) and got["dispatcher"]["semantics"] == "authors"
    assert "dispatchlab" in got["versions"]
    bad = CliRunner().invoke(app, ["simulate", "-w", str(jobs), "-d",
                                   "vc=ff-aware,semantics=authors", "--window-start", "0",
                                   "--window", "200"])
    assert bad.exit_code != 0 and "--scenario" in bad.output


def test_specs() -> None:
    d = get_dispatcher("vc=packed,semantics=authors,quantiles=q.txt,safe=12")
    assert isinstance(d, AuthorsVC) and d.strategy == "packed-target-asap"
    assert (d.quantiles, d.safe, d.neighbourhood) == ("q.txt", 12, 11)
    assert isinstance(get_dispatcher("vc=target-asap"), TargetVC)
    for spec, field in (("vc=target-asap,semantics=code", "semantics"),
                        ("vc=target-asap,semantics=authors,depth=3", "depth"),
                        ("vc=target-asap,semantics=slides,safe=3", "safe"),
                        ("vc=fifo,semantics=authors", "vc"),
                        ("vc=target-asap,semantics=authors,safe=x", "safe")):
        with pytest.raises(ConfigError) as err:
            get_dispatcher(spec)
        assert err.value.field == field
    with pytest.raises(ConfigError, match="authors' simulation"):
        d.reset(None, np.random.default_rng())  # type: ignore[arg-type]
    # an engine run refuses it before anything runs, saying how to run it
    from dispatchlab import simulate
    from dispatchlab.workload.workload import Workload

    wl = Workload.from_columns(submit=[0], runtime=[10], walltime=[10], units=[1],
                               req={"cores": [1]})
    with pytest.raises(ConfigError, match=r"runs in its own simulator.*semantics=authors") as err:
        simulate(wl, "nodes=2,cores=4", d)
    assert err.value.field == "dispatcher"


def test_readers_name_the_line(tmp_path: Path) -> None:
    p = tmp_path / "jobs.txt"
    p.write_text("a 0 100 2 release\nb 0 x 1 release\n")
    with pytest.raises(WorkloadError, match="line 2: length 'x'"):
        read_authors_jobs(p)
    p.write_text("a 0 100 0 release\n")
    with pytest.raises(WorkloadError, match="cores must be"):
        read_authors_jobs(p)
    v = tmp_path / "var.txt"
    v.write_text("24\n1200 26\n1100 24\n")
    with pytest.raises(ConfigError, match="line 3: time 1100 goes back"):
        read_variation_rows(v)
    v.write_text("24\n1200 26\n2400 26\n")  # the no-op row is kept: it is an event there
    assert read_variation_rows(v) == (24, [(1200, 26), (2400, 26)])


def test_quantiles_as_gendata(tmp_path: Path) -> None:
    p = tmp_path / "jobs.txt"
    p.write_text("".join(f"j{k} 0 {100 * (k + 1)} {1 + k % 3} release\n" for k in range(50)))
    q = authors_quantiles(read_authors_jobs(p), packs=10)
    assert q == sorted(q) and len(q) in (9, 10)  # 10: float sums reach 1 just below
    src = harness().repo_dir()
    if src is None:
        pytest.skip("the authors' repository (genData.py) is not on this machine")
    gen = tmp_path / "genData.py"
    gen.write_bytes(harness().git_show(src, "genData.py"))
    subprocess.run([sys.executable, str(gen), str(p), str(tmp_path / "q.txt"), "10", "0",
                    "604800"], check=True)
    assert [int(x) for x in (tmp_path / "q.txt").read_text().split()] == q


@needs_gxx
def test_heap_pops_ties_as_libstdcxx(tmp_path: Path) -> None:
    src = tmp_path / "heap.cc"
    src.write_text("""#include <iostream>
#include <queue>
#include <vector>
using P = std::pair<long, long>;
int main() {
  auto cmp = [](P a, P b) { return a.first > b.first; };
  std::priority_queue<P, std::vector<P>, decltype(cmp)> q(cmp);
  std::string op; long k, v;
  while (std::cin >> op) {
    if (op == "push") { std::cin >> k >> v; q.push(P(k, v)); }
    else if (op == "pop") { std::cout << q.top().second << "\\n"; q.pop(); }
    else { while (!q.empty()) q.pop(); }
  }
}
""")
    exe = tmp_path / "heap"
    subprocess.run(["g++", "-O2", str(src), "-o", str(exe)], check=True)
    rng = np.random.default_rng(7)
    ops: list[str] = []
    expected: list[int] = []
    for _ in range(60):  # sequences with many ties
        K = np.zeros(400, np.int64)
        P = np.zeros(400, np.int64)
        n = 0
        for step in range(int(rng.integers(20, 300))):
            if n == 0 or rng.random() < 0.6:
                key, pay = int(rng.integers(0, 4)), step
                ops.append(f"push {key} {pay}")
                n = heap_push(K, P, n, key, pay)
            else:
                ops.append("pop")
                expected.append(int(P[0]))
                n = heap_pop(K, P, n)
        ops.append("clear")
    out = subprocess.run([str(exe)], input="\n".join(ops), capture_output=True, text=True,
                         check=True).stdout.split()
    assert [int(x) for x in out] == expected


@needs_gxx
def test_clock_seeded_shuffle_as_glibc(tmp_path: Path) -> None:
    src = tmp_path / "shuffle.cc"
    src.write_text("""#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <vector>
int main(int argc, char** argv) {
  for (int k = 1; k < argc; k++) {
    srand(atol(argv[k]));
    std::vector<int> v;
    for (int i = 0; i < 152; i++) v.push_back(i);
    std::random_shuffle(v.begin(), v.end());
    for (int x : v) std::cout << x << " ";
    std::cout << "\\n";
  }
}
""")
    exe = tmp_path / "shuffle"
    subprocess.run(["g++", "-O2", str(src), "-o", str(exe)], check=True, capture_output=True)
    seeds = [0, 1, 2, 1_764_230_000, 4_294_967_295]
    out = subprocess.run([str(exe), *map(str, seeds)], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert [list(map(int, line.split())) for line in out] == \
        [glibc_shuffle(152, s) for s in seeds]


@needs_gxx
def test_same_lines_as_simu_cc_on_a_truncated_window(tmp_path: Path) -> None:
    h = harness()
    repo = h.repo_dir()
    if repo is None:
        pytest.skip("the authors' repository (simu.cc) is not on this machine; set "
                    "DISPATCHLAB_VR_REPO to a clone of lucasperotin/variableResources")
    folder = tmp_path / "vr"
    folder.mkdir()
    (folder / "simu.cc").write_bytes(h.git_show(repo, "simu.cc"))
    (folder / "vargen.py").write_bytes(h.git_show(repo, "vargen.py"))
    subprocess.run(["g++", "simu.cc", "-o", "SIM", "-O3"], cwd=folder, check=True)
    full = h.git_show(repo, "files/traces/borgSO/7D_864000.txt").decode().splitlines()
    jobs = folder / "jobs.txt"
    jobs.write_text("\n".join(full[:400]) + "\n")  # 400 jobs: a truncated window
    (folder / "DATA.txt").write_text(
        "\n".join(map(str, authors_quantiles(read_authors_jobs(jobs)))) + "\n")
    start, window = 864000, 172800  # two days
    var = h.make_walk(folder, "authors", 3, start + window)  # vargen.py, unmodified, seeded
    strategies = list(h.EXACT)
    cpp = h.run_cpp(folder, jobs, var, start, window, 1, strategies, folder / "runs")
    for s in strategies:
        ours = simulate_authors(jobs, var, AuthorsSetup(s, start, window),
                                str(folder / "DATA.txt"))
        assert ours.line() == cpp[s][0], s
