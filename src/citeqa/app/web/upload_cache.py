"""The upload cache: the folder Gradio writes uploads (and its copies of outputs) to.

Each ``citeqa serve`` process owns a folder of its own, ``serve-<pid>`` under
``$GRADIO_TEMP_DIR`` (or under a private ``citeqa-uploads-<uid>`` in the system temp
folder), so a second server started by the same user never sweeps the first one's
pending uploads; the folders of servers that are gone are removed when the next starts.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from citeqa.errors import ServerError

#: Age (seconds) at which an abandoned upload is deleted (see :class:`citeqa.app.web.holder.UploadSettings`).
UPLOAD_MAX_AGE_S = 3600
OWN_PREFIX = "serve-"


def upload_cache_dir() -> Path:
    """The folder Gradio writes uploads to (``$GRADIO_TEMP_DIR`` or its default)."""
    from gradio.utils import get_upload_folder

    return Path(get_upload_folder())


def private_upload_cache() -> Path:
    """A folder for this user's citeqa uploads only (mode 0700), used unless ``$GRADIO_TEMP_DIR`` is set."""
    folder = Path(tempfile.gettempdir()) / f"citeqa-uploads-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    if folder.is_symlink() or folder.stat().st_uid != os.getuid():
        raise ServerError(f"{folder} belongs to another user; set GRADIO_TEMP_DIR to a folder of your own")
    return folder


def own_upload_cache(base: str | Path | None = None) -> Path:
    """This process's cache folder (mode 0700) under ``base`` (default :func:`private_upload_cache`), empty.

    The folders of citeqa servers that are no longer running are removed first.
    """
    root = Path(base) if base else private_upload_cache()
    root.mkdir(parents=True, exist_ok=True)
    for stale in root.glob(f"{OWN_PREFIX}*"):
        pid = stale.name[len(OWN_PREFIX) :]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)) and not stale.is_symlink():
            shutil.rmtree(stale, ignore_errors=True)
    folder = root / f"{OWN_PREFIX}{os.getpid()}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(mode=0o700)
    return folder


def remove_upload_cache(folder: Path) -> None:
    """Remove this process's cache folder and everything in it (at exit)."""
    if folder.name.startswith(OWN_PREFIX) and not folder.is_symlink():
        shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive, and not ours to judge
    return True


def discard_uploads(paths: Iterable[str | Path]) -> None:
    """Delete uploaded files that lie in the upload cache (and their folders when empty); others are kept."""
    cache = upload_cache_dir().resolve()
    for item in paths:
        path = Path(item).resolve()
        if cache not in path.parents:
            continue
        with contextlib.suppress(OSError):
            path.unlink()
        with contextlib.suppress(OSError):
            if path.parent != cache:
                path.parent.rmdir()


def upload_path(item: Any) -> str:
    """The temp path of an uploaded file (a str, a FileData-like object or a dict)."""
    if isinstance(item, (str, Path)):
        return str(item)
    return str(item["path"] if isinstance(item, dict) else getattr(item, "path", None) or item.name)


def upload_name(item: Any) -> str:
    """The name the user's file had (Gradio keeps it as the temp file's name)."""
    name = item.get("orig_name") if isinstance(item, dict) else getattr(item, "orig_name", None)
    return name or Path(upload_path(item)).name
