"""Registers the built-in dispatcher presets and the rule-based spec parser."""

from __future__ import annotations

from functools import partial

from dispatchlab.dispatchers.registry import (
    register,
    register_canonicalizer,
    register_spec_parser,
)
from dispatchlab.dispatchers.rule_based.policy import Policy
from dispatchlab.dispatchers.rule_based.presets import (
    PRESETS,
    build_preset,
    canonical_spec,
    parse_spec,
)

for _name, (_spec, _description) in PRESETS.items():
    register(_name, partial(build_preset, _name), _description, family="rule-based",
             kind=Policy)
register_spec_parser(parse_spec)
register_canonicalizer(canonical_spec)
register_canonicalizer(lambda f: f["cp"].strip() if set(f) == {"cp"} else None)

import dispatchlab.dispatchers.cp.presets  # noqa: E402, F401  (registers the CP presets)
from dispatchlab.dispatchers.malleable.setups import register_presets  # noqa: E402

register_presets()

from dispatchlab.dispatchers.dardis.presets import (  # noqa: E402
    register_presets as register_dardis_presets,
)

register_dardis_presets()
from dispatchlab.dispatchers.variable_capacity.presets import (  # noqa: E402
    register_presets as register_vc_presets,
)

register_vc_presets()

from dispatchlab.dispatchers.offline_plan.presets import (  # noqa: E402
    canonical_spec as offline_canonical_spec,
)
from dispatchlab.dispatchers.offline_plan.presets import (  # noqa: E402
    parse_spec as parse_offline_spec,
)
from dispatchlab.dispatchers.offline_plan.presets import (  # noqa: E402
    register_presets as register_offline_presets,
)

register_offline_presets()
register_spec_parser(parse_offline_spec)
register_canonicalizer(offline_canonical_spec)

from dispatchlab.dispatchers.pa_hpc_sim.presets import (  # noqa: E402
    register_presets as register_pa_presets,
)

register_pa_presets()
