"""Benchmarks for memwal-mcp: figures printed by hand-run scripts, not timed tests.

`python -m benchmarks.retrieval --data FILE.jsonl` measures retrieval quality
(recall@k, nDCG@k) and recall latency through the real remember and recall paths.
"""

import memwal_mcp  # noqa: F401 -- before NumPy loads: it sets NumPy's BLAS threads, as in the server
