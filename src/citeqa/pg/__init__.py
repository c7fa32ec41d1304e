"""The index in PostgreSQL: pgvector for vectors, citeqa's own terms for BM25, sharded by document.

``citeqa index --backend postgresql://H1/DB,postgresql://H2/DB`` builds the local index as
always and publishes it (:mod:`citeqa.pg.publish`); ``citeqa ask/check/serve --backend ...``
answer from it (:mod:`citeqa.pg.backend`). Tables and generations: :mod:`citeqa.pg.schema`;
shards and their errors: :mod:`citeqa.pg.shards`; BM25: :mod:`citeqa.pg.bm25`; local nodes
for tests and benchmarks: :mod:`citeqa.pg.nodes`. Needs ``pip install -e '.[postgres]'``.
"""
