"""PBS/Torque/Cray job widths from what was allocated (see ``data/torque/README.md``)."""

from __future__ import annotations

from pathlib import Path

from dispatchlab.workload.accounting import AccountingOptions
from dispatchlab.workload.pbs_accounting import load_pbs
from dispatchlab.workload.workload import Workload

TORQUE = Path(__file__).parent / "data" / "torque"


def by_id(wl: Workload, name: str) -> dict[int, int]:
    return dict(zip(wl.job_id.tolist(), getattr(wl, name).tolist(), strict=True))


def test_real_torque_records_take_the_allocated_slots() -> None:
    """Real Torque 2.x-5.x E records (RAL, WestGrid, kept in APEL's tests): one slot per
    ``exec_host`` entry, ``b391/0-3`` ranges and ``total_execution_slots`` as Torque's
    own test (src/server/test/accounting/test_accounting.c) counts them; the requests
    (``Resource_List.nodes=1``, or missing) say nothing of the 8- and 4-core jobs."""
    wl = load_pbs(TORQUE / "apel_torque_accounting.log")
    assert by_id(wl, "units") == {21048463: 1, 21010040: 8, 24940336: 1, 21414868: 4,
                                  21430205: 4, 37803854: 1}
    assert by_id(wl, "runtime")[21048463] == 19 * 3600 + 23 * 60 + 4  # ``19:23:4``
    assert by_id(wl, "runtime")[24940336] == 12767  # Torque 5.1.2 writes seconds
    rep = wl.meta["load_report"]
    assert (rep["width_from_allocation"], rep["width_from_request"]) == (6, 0)


def test_torque_and_cray_widths() -> None:
    opts = AccountingOptions(units="nodes")
    wl = load_pbs(TORQUE / "torque_cray_shapes.log", opts)
    # 4101: node0703/0-27+node0704/0-27 = 56 (total_execution_slots=56), not ncpus=1;
    # 4102: 14 hosts × 0-7 + 16 hosts × 0 = 128 slots; 4103: no exec_host, the request
    # nodes=14:ppn=8+16:ppn=1 = 128; 4104: mppwidth=48 PEs; 4105: 12 PEs × mppdepth 4
    cpus = {j: u * c for j, u, c in zip(wl.job_id.tolist(), wl.units.tolist(),
                                        wl.req[:, 0].tolist(), strict=True)}
    assert cpus == {4101: 56, 4102: 30 * 5, 4103: 30 * 5, 4104: 48, 4105: 48}
    assert by_id(wl, "units") == {4101: 2, 4102: 30, 4103: 30, 4104: 2, 4105: 2}
    pool = load_pbs(TORQUE / "torque_cray_shapes.log")
    assert by_id(pool, "units") == {4101: 56, 4102: 128, 4103: 128, 4104: 48, 4105: 48}
    rep = pool.meta["load_report"]
    assert (rep["width_from_allocation"], rep["width_from_request"]) == (4, 1)


def test_real_pbs_pro_exec_host_indices_are_not_counts() -> None:
    """NCAR Casper's PBS Pro records (from pbsparse's tests): ``crhtc65/24`` is slot 24
    of the host, one CPU; two hosts of one CPU each is 2."""
    wl = load_pbs(TORQUE.parent / "pbs" / "ncar_casper_pbspro.log")
    assert by_id(wl, "units") == {2281314: 1, 2281981: 2}
    assert by_id(wl, "runtime") == {2281314: 1, 2281981: 1}
    assert by_id(wl, "walltime") == {2281314: 3600, 2281981: 3600}
    rep = wl.meta["load_report"]
    assert (rep["width_from_allocation"], rep["width_from_request"]) == (2, 0)
    nodes = load_pbs(TORQUE.parent / "pbs" / "ncar_casper_pbspro.log",
                     AccountingOptions(units="nodes"))
    assert by_id(nodes, "units") == {2281314: 1, 2281981: 2}


def test_trace_info_counts_the_request_fallback_as_cleaning() -> None:
    from dispatchlab.workload.trace_summary import trace_info

    info = trace_info(TORQUE / "torque_cray_shapes.log")
    assert info["cleaning"]["width_from_request"] == 1
    assert "width_from_allocation" not in info["cleaning"]  # no change: what was allocated
    assert info["load_report"]["width_from_allocation"] == 4
