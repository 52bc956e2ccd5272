"""capsim from Python: simulate, estimate, plan, validate, calibrate and replay what-ifs of GPU training clusters.

Every function takes a path or a JSON-shaped object (dicts and lists in the shape of the file
format) and returns what the command of the same name prints with --json, as dicts and lists.
Bad input raises InputError (a ValueError) with the attributes file, pointer and message.
The manual: docs/python.md.
"""

from capsim._capsim import (InputError, calibrate_fit, estimate, plan, simulate, validate,
                            whatif)
from capsim.frames import to_frame

__all__ = ["InputError", "calibrate_fit", "estimate", "plan", "simulate", "to_frame", "validate",
           "whatif"]
