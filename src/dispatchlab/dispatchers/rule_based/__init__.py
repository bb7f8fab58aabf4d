"""The rule-based family: a queue ordering × a selection scheme (strict, EASY,
conservative, power-aware) × an allocator, the baselines every centre runs."""
