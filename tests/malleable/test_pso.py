"""The particle swarm: one update computed by hand, seeding, resuming, engines."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dispatchlab.dispatchers.malleable.bounds import bounds_for
from dispatchlab.tuning.pso import (
    Swarm,
    SwarmSpec,
    pso_step,
    reflect,
)


def test_one_velocity_and_position_update_by_hand() -> None:
    # Two particles, two parameters in [0, 1], χ = 0.1.
    x = np.array([[0.2, 0.9], [0.5, 0.5]])
    v = np.array([[0.1, 0.3], [-0.2, 0.0]])
    pbest = np.array([[0.4, 0.8], [0.5, 0.1]])
    gbest = np.array([0.6, 0.7])
    phi1 = np.array([[1.5], [0.5]])
    phi2 = np.array([[0.25], [2.0]])
    lo, hi = np.zeros(2), np.ones(2)
    new_x, new_v = pso_step(x, v, pbest, gbest, phi1, phi2, lo, hi)
    # particle 0: v = 0.1·(v + 1.5·(p − x) + 0.25·(g − x))
    #   = 0.1·([0.1, 0.3] + [0.3, −0.15] + [0.1, −0.05]) = [0.05, 0.01]
    # particle 1: v = 0.1·([−0.2, 0] + 0.5·[0, −0.4] + 2·[0.1, 0.2]) = [0.0, 0.02]
    assert new_v == pytest.approx(np.array([[0.05, 0.01], [0.0, 0.02]]))
    assert new_x == pytest.approx(np.array([[0.25, 0.91], [0.5, 0.52]]))


def test_reflection_at_the_bounds() -> None:
    lo, hi = np.array([0.0, 362.0]), np.array([1.0, 100000.0])
    out = reflect(np.array([[1.25, 300.0], [-0.1, 500.0]]), lo, hi)
    # 1.25 → 1 − 0.25; 300 → 362 + 62; −0.1 → 0.1
    assert out == pytest.approx(np.array([[0.75, 424.0], [0.1, 500.0]]))


def test_bounds_of_each_condition() -> None:
    assert len(bounds_for(1).names) == 8 and len(bounds_for(2).names) == 9
    b3 = bounds_for(3)
    assert b3.names[:4] == ("w_n", "w_alpha", "w_d", "bias")
    assert b3.lo[3] == -0.5 and b3.hi[3] == 0.5
    assert bounds_for(1, "code").lo[b3.names.index("t1") - 1] == 260


def _spec(**kw: object) -> SwarmSpec:
    return SwarmSpec(**{"condition": 3, "particles": 4, "epochs": 4, "sets": 3, **kw})  # type: ignore[arg-type]


def test_training_is_seeded_and_resumes_exactly(tmp_path: Path) -> None:
    whole = Swarm(_spec()).run()
    again = Swarm(_spec()).run()
    assert whole.history == again.history
    state = tmp_path / "swarm.json"
    Swarm(_spec(), state).run(until=2)
    resumed = Swarm(_spec(), state)
    assert resumed.state.epoch == 2
    final = resumed.run()
    assert final.history == whole.history
    assert final.gbest.tolist() == whole.gbest.tolist()
    assert np.isfinite(final.gbest_cost) and final.gbest_cost == min(map(min, final.history))
    # another seed moves the particles elsewhere
    assert Swarm(_spec(seed=1)).run().history != whole.history


def test_a_stored_training_of_another_spec_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "swarm.json"
    Swarm(_spec(), state).run(until=1)
    with pytest.raises(Exception, match="another specification"):
        Swarm(_spec(sets=2), state)


def test_code_rule_follows_the_epoch_best() -> None:
    st = Swarm(_spec(rule="code")).run()
    last = st.history[-1]
    assert st.gbest_cost == min(last)


@pytest.mark.slow
def test_local_pool_and_dask_give_the_same_training() -> None:
    from dispatchlab.experiments.backends import DaskBackend, LocalBackend

    alone = Swarm(_spec(epochs=3)).run()
    with LocalBackend(2) as engine:
        pooled = Swarm(_spec(epochs=3)).run(engine)
    with DaskBackend(None, 2) as engine:
        dask = Swarm(_spec(epochs=3)).run(engine)
    assert pooled.history == alone.history == dask.history
    assert pooled.gbest.tolist() == alone.gbest.tolist() == dask.gbest.tolist()
