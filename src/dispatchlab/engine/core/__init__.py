"""The engine core: one compiled event loop (:mod:`.loop`) over one state record
(:mod:`.record`), which a family's compiled decision kernel plugs into at its decision
points. Importing this package does not import Numba; its modules other than
:mod:`.codes` do.
"""
