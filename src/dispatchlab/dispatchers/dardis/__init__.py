"""DARDIS (thesis ch. 5): node managers with utilization profiles and a fitting index,
start-time generators, task-manager policies; and the profile-aware rule-based
baselines it is compared with. See docs/dardis.md."""

from dispatchlab.dispatchers.dardis.dispatcher import Dardis
from dispatchlab.dispatchers.dardis.rule_based import ProfileRuleBased

__all__ = ["Dardis", "ProfileRuleBased"]
