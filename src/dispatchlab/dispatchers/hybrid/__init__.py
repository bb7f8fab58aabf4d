"""The hybrid offline/online pipeline of thesis ch. 7: next-day forecast, offline plan,
profile extraction (Alg. 8 and the decision tree of §6.8.3), DARDIS with node shutdown.
See docs/hybrid.md."""
