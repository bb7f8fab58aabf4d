"""The variable-capacity first-fit strategies' compiled loop (``ff-aware``, ``ff-unaware``):
the loop (:mod:`.first_fit_loop`), the machines each scenario row moves, drawn before it
(:mod:`.scenario_choice`), the plan the engine asks for (:mod:`.plan`), the run that records
its outcome (:mod:`.runner`) and its ahead-of-time unit (:mod:`.kernel`)."""
