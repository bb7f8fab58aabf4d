"""The ``dispatchlab`` command line."""
