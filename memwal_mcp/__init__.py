"""memwal-mcp: long-term memory for AI agents, served over the Model Context Protocol."""

import os as _os

# NumPy's OpenBLAS runs every matrix product on a thread per core, and those threads spin
# while they wait for the next one. Beside the embedding model's own threads they took the
# cores from curation: 240 -> 300 memories/s on 2 cores with one BLAS thread. The one product
# big enough to gain from more cores, the scan of a large lane, splits itself across them
# (store/sqlite/matrix.py). This only works before NumPy is first imported (as in `memwal-mcp`,
# `python -m memwal_mcp` and `uvx memwal-mcp`); a value already set wins.
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# Fewer malloc arenas for the threads to come, and large blocks handed back when freed (see
# heap.py): 86 and 72 MiB less peak RSS.
from . import heap as _heap

_heap.limit_arenas()
_heap.fix_mmap_threshold()

__version__ = "0.1.0"
