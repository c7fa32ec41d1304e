"""A worker reader (see budget_readers.py) whose import never ends: a worker that hangs starting."""

import threading

threading.Event().wait()
