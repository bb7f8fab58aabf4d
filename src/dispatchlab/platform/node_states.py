"""Node states, the vocabulary shared by the platform's power tables, the engine's
node-state log and the dispatchers' power decisions; only ``ON`` nodes are usable."""

ON, OFF, BOOTING, SHUTTING_DOWN, DOWN = 0, 1, 2, 3, 4
STATE_NAMES = ("on", "off", "booting", "shutting_down", "down")
