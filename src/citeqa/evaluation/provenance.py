"""What produced a run: code version and commit, model, index, reader weights, answer settings, QA file, date,
libraries.

The block is stored in ``report.json`` and in the ``.meta.json`` sidecar of a predictions
file, so a number can always be traced to its inputs. Collecting it never fails: what
cannot be found (no git, no index folder) is None.
"""

from __future__ import annotations

import json
import platform
import subprocess
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citeqa.records import sha256_file, sha256_text, to_dict

if TYPE_CHECKING:
    from citeqa.claims.thresholds import ClaimThresholds
    from citeqa.engine import Engine
    from citeqa.qa.scoring import ScoringModel
    from citeqa.qa.settings import AnswerSettings
    from citeqa.qa.verifier import Verifier
    from citeqa.reader.reader import Reader

GIT_TIMEOUT_S = 5.0


def collect_provenance(engine: Engine, qa_file: Path | None, run: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The provenance block of a run of ``engine`` on ``qa_file``; ``run`` adds per-run options (e.g. ``k``)."""
    from citeqa import __version__
    from citeqa.index.manifest import library_versions

    manifest = engine.manifest
    commit, dirty = git_state(Path(__file__).resolve().parents[1])
    return {
        "citeqa_version": __version__,
        "git_commit": commit,
        "git_dirty": dirty,
        "model": manifest.model,
        "backend": manifest.backend,
        "index": {
            "manifest_sha256": index_manifest_sha256(engine.index_dir),
            "documents": len(manifest.documents),
            "passages": engine.passage_count,
            "chunker": _plain(manifest.chunker),
        },
        "reader": reader_record(engine.reader),
        "settings": settings_record(engine.settings, engine.claim_thresholds),
        "run": dict(run) if run is not None else {},
        "qa_file": file_record(qa_file),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "libraries": library_versions(),
    }


def git_state(folder: Path) -> tuple[str | None, bool | None]:
    """HEAD's commit and whether tracked files differ from it, when ``folder``'s files are tracked by git.

    (None, None) without git, outside a repository, or when the package is an untracked
    copy inside one (an install into a virtualenv that lives in a checkout).
    """
    tracked = _git(folder, "ls-files", "--error-unmatch", "__init__.py")
    commit = _git(folder, "rev-parse", "HEAD") if tracked is not None else None
    if commit is None:
        return None, None
    status = _git(folder, "status", "--porcelain", "--untracked-files=no")
    return commit, None if status is None else bool(status)


def _git(folder: Path, *args: str) -> str | None:
    """A git command's stripped output in ``folder``, or None on any failure."""
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def index_manifest_sha256(index_dir: Path | None) -> str | None:
    """sha256 of the live generation's ``manifest.json`` (None when there is none to read)."""
    from citeqa.errors import CiteqaError
    from citeqa.index.manifest import MANIFEST_NAME
    from citeqa.index.store import current_generation

    if index_dir is None:
        return None
    try:
        folder = current_generation(Path(index_dir))
        return sha256_file(folder / MANIFEST_NAME) if folder is not None else None
    except (OSError, CiteqaError):
        return None


def file_record(path: Path | None) -> dict[str, str | None] | None:
    """A file's name and sha256 (the sha256 is None when it cannot be read)."""
    if path is None:
        return None
    path = Path(path)
    try:
        digest: str | None = sha256_file(path)
    except OSError:
        digest = None
    return {"name": path.name, "sha256": digest}


def reader_record(reader: Reader | None) -> dict[str, str | None] | None:
    """The reader's weights file, by name and sha256 (None without a reader: answers without it)."""
    if reader is None:
        return None
    record = file_record(reader.weights_path)
    return None if record is None else {"weights": record["name"], "weights_sha256": record["sha256"]}


def default_settings(engine: Engine) -> dict[str, Any]:
    """:func:`settings_record` of the settings :meth:`Engine.open` gives an engine over this index and
    with this reader (on or off) when nothing is overridden: what :func:`changed_settings` compares with."""
    from citeqa.settings import Settings

    defaults = Settings.for_model(engine.manifest.model, reader=engine.reader is not None)
    return settings_record(defaults.answer, defaults.claims)


def changed_settings(current: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of ``current`` that differ from ``defaults`` (nested mappings compared entry by entry,
    under dotted names such as ``retrieval.fusion``), with their values in ``current``; entries that
    ``current`` lacks are left out."""
    old = dict(_flattened(defaults))
    return {name: value for name, value in _flattened(current) if name not in old or old[name] != value}


def _flattened(data: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in data.items():
        if isinstance(value, Mapping):
            out.extend(_flattened(value, f"{prefix}{key}."))
        else:
            out.append((f"{prefix}{key}", value))
    return out


def settings_record(settings: AnswerSettings, claims: ClaimThresholds | None = None) -> dict[str, Any]:
    """The answer settings (and the claim thresholds, under ``claims``, when given) as JSON data;
    the scorer and the verifier as the sha256 of their weights, not the weights."""
    from citeqa.qa.scoring import ScoringModel
    from citeqa.qa.verifier import Verifier

    record = {}
    for f in fields(settings):
        value = getattr(settings, f.name)
        if isinstance(value, ScoringModel | Verifier):
            record[f.name] = scoring_record(value)
        else:
            record[f.name] = _plain(value)
        if f.name == "scoring" and claims is not None:  # after the scorer, where records have listed them
            record["claims"] = _plain(claims)
    return record


def scoring_record(model: ScoringModel | Verifier) -> dict[str, Any]:
    """sha256 of the scorer's (or the verifier's) weights (canonical JSON), its threshold and where it was fitted."""
    canonical = json.dumps(model.to_dict(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return {
        "weights_sha256": sha256_text(canonical),
        "abstain_below": model.abstain_below,
        "fitted_commit": model.fitted.get("commit"),
        "fitted_date": model.fitted.get("date"),
    }


def _plain(value: Any) -> Any:
    """Dataclasses, enums and paths as plain JSON data."""
    if is_dataclass(value) and not isinstance(value, type):
        return _plain(to_dict(value))
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    return value
