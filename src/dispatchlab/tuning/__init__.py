"""Training and studies that run whole simulations: they sit above ``simulate()``."""
