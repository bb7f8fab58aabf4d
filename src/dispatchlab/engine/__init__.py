"""The discrete-event engine: state, events, decisions and the loop that applies them."""
