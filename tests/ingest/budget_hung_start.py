"""A worker reader (see budget_readers.py) whose import does not end: a worker that hangs starting.

Ten minutes rather than for ever, should anything but the worker (which is killed at its deadline)
ever import it."""

import threading

threading.Event().wait(600)
raise ImportError("budget_hung_start is only a worker that hangs starting")
