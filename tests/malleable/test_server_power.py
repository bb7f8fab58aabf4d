"""The malleable family's server power figures are platform node specs: Table 1 and the
authors' code constants read as one-unit servers (per-state model, whole-second delays)."""

from __future__ import annotations

import pytest

from dispatchlab.dispatchers.malleable.config import CODE, CODE_POWER, PAPER, TABLE1, state_model
from dispatchlab.dispatchers.malleable.cost import malleable_platform
from dispatchlab.energy.accounting import StatePowerModel
from dispatchlab.platform.power import NodePowerSpec


def test_table1_is_the_state_model_of_the_paper() -> None:
    assert state_model(TABLE1) == StatePowerModel()  # idle 95, computing 190.74, ... W
    assert PAPER.power == TABLE1


def test_code_constants_are_rounded_and_swapped() -> None:
    m = state_model(CODE_POWER)
    assert (m.idle, m.busy, m.off, m.booting, m.shutting_down) == (95.0, 191.0, 10.0, 101.0,
                                                                    125.0)
    assert CODE.power == CODE_POWER


@pytest.mark.parametrize(("power", "boot", "shutdown"), [(TABLE1, 152, 7), (CODE_POWER, 151, 6)])
def test_platform_delays_are_rounded_up_to_whole_seconds(power: NodePowerSpec, boot: int,
                                                         shutdown: int) -> None:
    plat = malleable_platform(3, power)
    assert plat.n_nodes == 3
    assert plat.boot_time is not None and plat.boot_time.tolist() == [boot] * 3
    assert plat.shutdown_time is not None and plat.shutdown_time.tolist() == [shutdown] * 3
