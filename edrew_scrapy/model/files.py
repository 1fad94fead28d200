"""A model directory on disk: ELMo options JSON + weights HDF5 (AllenNLP layout), head, model card.

    card.json           what the model is: version, variant, head config, threshold, training data and
                        licence, metrics, and the size and sha256 of every other file
    elmo_options.json   AllenNLP ELMo options (`allennlp.modules.elmo.Elmo(options_file, ...)`)
    elmo_weights.hdf5   AllenNLP ELMo weights (`Elmo(..., weight_file, ...)`), TensorFlow-style layout
    head.safetensors    the scalar mix and the classifier head
    head-NAME.safetensors  (a mixed model only) each further head, listed in the card's `heads`

Nothing is pickled: JSON, HDF5 and safetensors only. Every problem raises ModelError naming the file.
Every file is a regular file inside the directory (a link may point only within it), and no more of it is
read than the card says it holds (+1 byte, to tell a larger one): a link to /proc or a FIFO cannot hang
loading, and hostile JSON (nested 200,000 deep, a 5,000-digit number) is a ModelError like any other.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from pathlib import Path
from typing import Dict, List, Mapping, NamedTuple, Optional, Tuple, Union

import numpy as np

CARD = "card.json"
OPTIONS = "elmo_options.json"
WEIGHTS = "elmo_weights.hdf5"
HEAD = "head.safetensors"
FORMAT = "edrew-model"
FORMAT_VERSION = 1
# a card with `heads`: a release that reads version 1 alone refuses it, rather than scoring with its first head
MIXED_FORMAT_VERSION = 2
DATA_FILES = (OPTIONS, WEIGHTS, HEAD)
HEADS = "heads"  # the card's key of a mixed model: its heads, their files and weights
# how far the heads' weights may sum from 1 (they are decimals written as JSON numbers)
WEIGHT_SUM_TOLERANCE = 1e-6


class ModelError(Exception):
    """A model directory that cannot be used; the message names the file and what is wrong."""


# the install that adds PyTorch (setup.cfg's extra): training, evaluation and the native and allennlp backends
TORCH_EXTRA = "pip install 'edrew-scrapy[train]'"


class TorchMissing(ModelError, ModuleNotFoundError):
    """PyTorch is needed but not installed (the default install scores with numpy and leaves it out): a
    ModelError to the callers that load a model, a ModuleNotFoundError named `torch` to the others."""


def torch_missing(purpose: str, exc: BaseException) -> TorchMissing:
    """The TorchMissing to raise when `purpose` failed to import torch with `exc` (both kept, so that a
    caller can name its own purpose instead)."""
    missing = TorchMissing(f"{purpose} needs PyTorch, which is not importable here ({exc}); install it with: "
                           f"{TORCH_EXTRA}", name="torch")
    missing.purpose, missing.cause = purpose, exc
    return missing


def require_torch(purpose: str):
    """The torch module, or TorchMissing naming `purpose` and the extra that installs it."""
    try:
        import torch
    except ImportError as exc:
        raise torch_missing(purpose, exc) from None
    return torch


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def is_positive_int(value) -> bool:
    return is_count(value) and value > 0


def describe(exc: BaseException) -> str:
    """`Type: message` on one line: torch's messages span lines, and callers print ModelError as one."""
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# A card or an options file larger than this is not one (the shipped card is a few kB, options 1 kB).
MAX_JSON_BYTES = 1 << 20


def model_file(directory: Path, name: str) -> Path:
    """directory/name, resolved, when it is a regular file inside the directory; ModelError otherwise.

    A link may point only within the directory, and devices, FIFOs and sockets are refused: reading
    /proc/self/pagemap (size 0, endless) or opening a FIFO would block loading for good."""
    path = Path(directory) / name
    root = Path(os.path.realpath(directory))
    real = Path(os.path.realpath(path))
    if real != root and root not in real.parents:
        raise ModelError(f"{path}: links outside the model directory (to {real})")
    try:
        mode = os.stat(real).st_mode
    except FileNotFoundError:
        raise ModelError(f"{path}: file is missing") from None
    except OSError as exc:
        raise ModelError(f"{path}: cannot read ({describe(exc)})") from None
    if not stat.S_ISREG(mode):
        raise ModelError(f"{path}: not a regular file (a directory, device, FIFO or socket)")
    return real


def _open_regular(real: Path, shown: Path) -> int:
    """A descriptor of `real`, opened without blocking (a FIFO swapped in after model_file's check) and
    checked again to be a regular file."""
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise ModelError(f"{shown}: cannot read ({describe(exc)})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ModelError(f"{shown}: not a regular file (a directory, device, FIFO or socket)")
    return fd


def _read_blocks(directory: Path, name: str, limit: int):
    """The blocks of directory/name, at most `limit` + 1 bytes in all."""
    shown = Path(directory) / name
    fd = _open_regular(model_file(directory, name), shown)
    try:
        left = limit + 1
        while left > 0:
            try:
                block = os.read(fd, min(left, 1 << 20))
            except OSError as exc:
                raise ModelError(f"{shown}: cannot read ({describe(exc)})") from None
            if not block:
                return
            left -= len(block)
            yield block
    finally:
        os.close(fd)


def read_limited(directory: Path, name: str, limit: int) -> bytes:
    """directory/name's bytes; ModelError when it is not a regular file inside the directory or holds
    more than `limit` bytes."""
    data = b"".join(_read_blocks(directory, name, limit))
    if len(data) > limit:
        raise ModelError(f"{Path(directory) / name}: larger than {limit:,} bytes")
    return data


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def load_json(directory: Path, name: str, limit: int, what: str) -> object:
    """directory/name parsed as JSON of at most `limit` bytes; every way it can fail is a ModelError
    saying `what` it is not (deep nesting is a RecursionError, an over-long integer a ValueError)."""
    data = read_limited(directory, name, limit)
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ModelError(f"{Path(directory) / name}: {what} ({describe(exc)})") from None


# --- card ---------------------------------------------------------------------------------------------

class HeadEntry(NamedTuple):
    """One head of a model: its name, file in the folder, weight in the mix and head configuration; the page
    types on which it sits out (pagetype.py's type at `min_probability` or more: the other heads' weights then
    share its weight)."""

    name: str
    file: str
    weight: float
    config: dict
    not_on: Tuple[str, ...] = ()
    min_probability: float = 0.5


def head_entries(card: Mapping, path: Union[str, Path] = CARD) -> List[HeadEntry]:
    """The heads whose probabilities a model's scores mix, first the card's own (head.safetensors, the
    card's `head`). A card without `heads` has that one, weight 1. With `heads`: the first entry is
    head.safetensors and takes the card's configuration (it carries no `head` of its own), every other
    entry carries its `head`; names and files are distinct, each file is in the card's `files`, and the
    weights sum to 1. ModelError naming the card otherwise (the schema has checked the types)."""
    entries = card.get(HEADS)
    if entries is None:
        return [HeadEntry("head", HEAD, 1.0, card["head"])]
    heads: List[HeadEntry] = []
    for k, entry in enumerate(entries):
        if k == 0:
            if entry["file"] != HEAD or "head" in entry:
                raise ModelError(f"{path}: heads[0] must be the card's own head: file {HEAD}, its configuration "
                                 f"the card's `head` (not repeated in the entry)")
            config = card["head"]
        elif "head" not in entry:
            raise ModelError(f"{path}: heads[{k}] ({entry['file']}) has no head configuration")
        else:
            config = entry["head"]
        if entry["file"] not in card["files"]:
            raise ModelError(f"{path}: heads[{k}]: files does not list the checksum of {entry['file']}")
        not_on = tuple(entry.get("not_on_page_types", ()))
        if k == 0 and not_on:
            raise ModelError(f"{path}: heads[0] scores every page: it takes no not_on_page_types")
        heads.append(HeadEntry(entry["name"], entry["file"], float(entry["weight"]), config, not_on,
                               float(entry.get("page_type_probability", 0.5))))
    for key in ("name", "file"):
        values = [getattr(h, key) for h in heads]
        if len(set(values)) != len(values):
            raise ModelError(f"{path}: heads: two entries have the same {key}")
    total = sum(h.weight for h in heads)
    if abs(total - 1.0) > WEIGHT_SUM_TOLERANCE:
        raise ModelError(f"{path}: heads: the weights sum to {total:g}, not 1")
    return heads


def write_card(directory: Path, card: Mapping) -> dict:
    """Write card.json with the size and checksum of every data file (call after writing them)."""
    directory = Path(directory)
    full = dict(card)
    full["format"] = FORMAT
    full["format_version"] = FORMAT_VERSION
    full["files"] = {
        name: {"bytes": (directory / name).stat().st_size, "sha256": sha256_of(directory / name)}
        for name in DATA_FILES
    }
    (directory / CARD).write_text(json.dumps(full, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return full


def read_card(directory: Path, verify: bool = True) -> dict:
    """Read and check card.json, and (verify=True) the size and sha256 of every file it lists."""
    from . import schema

    directory = Path(directory)
    path = directory / CARD
    if not directory.is_dir():
        raise ModelError(f"{directory}: " + ("is a file, not a model directory" if directory.exists()
                                             else "model directory does not exist"))
    if not (path.exists() or path.is_symlink()):
        raise ModelError(f"{path}: model card is missing")
    card = load_json(directory, CARD, MAX_JSON_BYTES, "model card is not valid JSON")
    if not isinstance(card, dict) or card.get("format") != FORMAT:
        kind = card.get("format") if isinstance(card, dict) else None
        raise ModelError(f"{path}: not an edrew model card (format {kind!r})")
    version = card.get("format_version")
    if isinstance(version, bool) or version not in (FORMAT_VERSION, MIXED_FORMAT_VERSION):
        raise ModelError(f"{path}: model format version {version!r} is not supported "
                         f"(this edrew-scrapy reads versions {FORMAT_VERSION} and {MIXED_FORMAT_VERSION})")
    if (HEADS in card) != (version == MIXED_FORMAT_VERSION):
        raise ModelError(f"{path}: a card with `{HEADS}` (a mixed model) is format version {MIXED_FORMAT_VERSION}, "
                         f"one without is version {FORMAT_VERSION}; this one is version {version}")
    threshold = card.get("threshold", 0.5)
    if not is_number(threshold) or not 0 <= threshold <= 1:
        raise ModelError(f"{path}: threshold must be a number in [0, 1], not {threshold!r}")
    share = card.get("region_share")
    if share is not None and (not is_number(share) or not 0.5 < share <= 1):
        raise ModelError(f"{path}: region_share must be a number in (0.5, 1] or null, not {share!r}")
    files = card.get("files")
    if not isinstance(files, dict) or set(DATA_FILES) - set(files):
        raise ModelError(f"{path}: card does not list the checksums of {', '.join(DATA_FILES)}")
    for name in DATA_FILES:
        entry = files[name]
        if not (isinstance(entry, dict) and is_count(entry.get("bytes")) and isinstance(entry.get("sha256"), str)):
            raise ModelError(f"{path}: files.{name} must be an object with an integer 'bytes' and a string "
                             f"'sha256', not {entry!r}")
    if not isinstance(card.get("head"), dict):
        raise ModelError(f"{path}: the card has no head configuration")
    schema.check(card, schema.CARD_SCHEMA, path, "not a valid model card")
    extra_heads = [h.file for h in head_entries(card, path) if h.file not in DATA_FILES]
    for name in DATA_FILES + tuple(extra_heads):
        data = directory / name
        expected = files[name]
        size = model_file(directory, name).stat().st_size
        if size != expected["bytes"]:
            what = "truncated" if size < expected["bytes"] else "wrong size"
            raise ModelError(f"{data}: {what} ({size} bytes, the card says {expected['bytes']})")
        if verify:
            # at most the card's size + 1 bytes: a file whose stat() says less than it holds is read no further
            digest, held = hashlib.sha256(), 0
            for block in _read_blocks(directory, name, expected["bytes"]):
                digest.update(block)
                held += len(block)
            if held < expected["bytes"]:
                raise ModelError(f"{data}: truncated ({held} bytes read, the card says {expected['bytes']})")
            if held > expected["bytes"]:
                raise ModelError(f"{data}: wrong size (more than the {expected['bytes']} bytes the card says)")
            if digest.hexdigest() != expected["sha256"]:
                raise ModelError(f"{data}: sha256 checksum does not match the card (file corrupt or changed)")
    return card


# --- ELMo options -------------------------------------------------------------------------------------
MAX_LAYERS = 64  # most LSTM layers, highway layers and filter widths an options file may ask for


def write_options(path: Path, options: Mapping) -> None:
    Path(path).write_text(json.dumps(options, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def read_options(path: Path, max_bytes: Optional[int] = None) -> dict:
    """The options file at `path` (in a model directory), of at most `max_bytes` (the card's size of it)
    and MAX_JSON_BYTES, checked field by field and then against schema.OPTIONS_SCHEMA."""
    from . import schema

    path = Path(path)
    limit = MAX_JSON_BYTES if max_bytes is None else min(max_bytes, MAX_JSON_BYTES)
    options = load_json(path.parent, path.name, limit, "not a valid ELMo options file")
    lstm = options.get("lstm") if isinstance(options, dict) else None
    cnn = options.get("char_cnn") if isinstance(options, dict) else None
    if not (isinstance(lstm, dict) and isinstance(cnn, dict) and isinstance(cnn.get("embedding"), dict)):
        raise ModelError(f"{path}: not a valid ELMo options file (it needs the objects lstm, char_cnn "
                         f"and char_cnn.embedding)")
    if cnn.get("max_characters_per_token") != 50:
        raise ModelError(f"{path}: max_characters_per_token must be 50 (ELMo character ids)")
    # Checked here rather than left to torch, whose errors (negative dimensions, kernels wider than the
    # input) would not name the file, or would come only when the first page is scored.
    sizes = {"lstm.projection_dim": lstm.get("projection_dim"), "lstm.dim": lstm.get("dim"),
             "lstm.n_layers": lstm.get("n_layers"), "char_cnn.embedding.dim": cnn["embedding"].get("dim")}
    for key, value in sizes.items():
        if not is_positive_int(value):
            raise ModelError(f"{path}: {key} must be a positive integer, not {value!r}")
    # Counts of layers are structural (AllenNLP's largest ELMo: 2 LSTM layers, 2 highway layers, 7 filter
    # widths); each one becomes Python objects before any size can be compared with the weights file.
    if lstm["n_layers"] > MAX_LAYERS:
        raise ModelError(f"{path}: lstm.n_layers is {lstm['n_layers']}, at most {MAX_LAYERS}")
    n_highway = cnn.get("n_highway")
    if not (is_count(n_highway) and n_highway <= MAX_LAYERS):
        raise ModelError(f"{path}: char_cnn.n_highway must be an integer from 0 to {MAX_LAYERS}, not {n_highway!r}")
    filters = cnn.get("filters")
    if not (isinstance(filters, list) and 0 < len(filters) <= MAX_LAYERS and all(
            isinstance(f, list) and len(f) == 2 and all(map(is_positive_int, f)) and f[0] <= 50 for f in filters)):
        raise ModelError(f"{path}: char_cnn.filters must be a list of 1 to {MAX_LAYERS} [width, count] pairs of "
                         f"positive integers, widths at most 50, not {filters!r}")
    for key in ("cell_clip", "proj_clip"):
        clip = lstm.get(key)
        if clip is not None and not (is_number(clip) and clip >= 0):
            raise ModelError(f"{path}: lstm.{key} must be a non-negative number or null, not {clip!r}")
    schema.check(options, schema.OPTIONS_SCHEMA, path, "not a valid ELMo options file")
    return options


# --- ELMo weights (HDF5, the layout AllenNLP's Elmo loads) -------------------------------------------------
# AllenNLP converts TensorFlow-trained weights while loading: matrices are transposed, the highway carry
# gate is negated, LSTM gates are stored in TensorFlow order (input, candidate, forget, output) with the
# forget bias kept apart (+1 added on load). Writing applies the inverse so loading gives back our tensors.

def _swap_gate_blocks(array: np.ndarray, cell: int) -> np.ndarray:
    """Swap gate blocks 1 and 2 along axis 0 (PyTorch i,f,g,o <-> TensorFlow i,g,f,o); its own inverse."""
    out = array.copy()
    out[cell: 2 * cell] = array[2 * cell: 3 * cell]
    out[2 * cell: 3 * cell] = array[cell: 2 * cell]
    return out


def elmo_arrays(bilm) -> Dict[str, np.ndarray]:
    """The HDF5 datasets for an ElmoBiLm, by path."""
    def np32(t):
        return t.detach().cpu().numpy().astype(np.float32)

    enc = bilm.token_embedder
    arrays: Dict[str, np.ndarray] = {"char_embed": np32(enc.char_embedding.weight)[1:]}
    for i, conv in enumerate(enc.convolutions):
        # torch (out, in, width) -> TF (1, width, in, out)
        arrays[f"CNN/W_cnn_{i}"] = np.transpose(np32(conv.weight), (2, 1, 0))[None]
        arrays[f"CNN/b_cnn_{i}"] = np32(conv.bias)
    for k, layer in enumerate(enc.highways._layers):
        dim = layer.weight.shape[1]
        w, b = np32(layer.weight), np32(layer.bias)
        arrays[f"CNN_high_{k}/W_transform"] = w[:dim].T.copy()
        arrays[f"CNN_high_{k}/W_carry"] = (-w[dim:]).T.copy()
        arrays[f"CNN_high_{k}/b_transform"] = b[:dim]
        arrays[f"CNN_high_{k}/b_carry"] = -b[dim:]
    arrays["CNN_proj/W_proj"] = np32(enc.projection.weight).T.copy()
    arrays["CNN_proj/b_proj"] = np32(enc.projection.bias)
    for i, layers in enumerate(zip(bilm.lstm.forward_layers, bilm.lstm.backward_layers)):
        for j, cell in enumerate(layers):
            c = cell.cell_size
            base = f"RNN_{j}/RNN/MultiRNNCell/Cell{i}/LSTMCell"
            torch_w = np.concatenate([np32(cell.input_linearity.weight), np32(cell.state_linearity.weight)], axis=1)
            arrays[f"{base}/W_0"] = _swap_gate_blocks(torch_w, c).T.copy()
            tf_bias = _swap_gate_blocks(np32(cell.state_linearity.bias), c)
            tf_bias[2 * c: 3 * c] -= 1.0
            arrays[f"{base}/B"] = tf_bias
            arrays[f"{base}/W_P_0"] = np32(cell.state_projection.weight).T.copy()
    return arrays


def elmo_shapes(bilm) -> Dict[str, tuple]:
    """The shape of each HDF5 dataset elmo_arrays writes, from the module's parameter shapes alone, so that
    it works on a biLM built on the meta device (tests check the two agree)."""
    enc = bilm.token_embedder
    vocab, char_dim = enc.char_embedding.weight.shape
    shapes: Dict[str, tuple] = {"char_embed": (vocab - 1, char_dim)}
    for i, conv in enumerate(enc.convolutions):
        out, inp, width = conv.weight.shape
        shapes[f"CNN/W_cnn_{i}"] = (1, width, inp, out)
        shapes[f"CNN/b_cnn_{i}"] = (out,)
    for k, layer in enumerate(enc.highways._layers):
        dim = layer.weight.shape[1]
        shapes.update({f"CNN_high_{k}/W_transform": (dim, dim), f"CNN_high_{k}/W_carry": (dim, dim),
                       f"CNN_high_{k}/b_transform": (dim,), f"CNN_high_{k}/b_carry": (dim,)})
    out, inp = enc.projection.weight.shape
    shapes["CNN_proj/W_proj"] = (inp, out)
    shapes["CNN_proj/b_proj"] = (out,)
    for i, layers in enumerate(zip(bilm.lstm.forward_layers, bilm.lstm.backward_layers)):
        for j, cell in enumerate(layers):
            base = f"RNN_{j}/RNN/MultiRNNCell/Cell{i}/LSTMCell"
            gates, inp = cell.input_linearity.weight.shape
            hidden = cell.state_linearity.weight.shape[1]
            proj, c = cell.state_projection.weight.shape
            shapes[f"{base}/W_0"] = (inp + hidden, gates)
            shapes[f"{base}/B"] = (gates,)
            shapes[f"{base}/W_P_0"] = (c, proj)
    return {name: tuple(int(n) for n in shape) for name, shape in shapes.items()}


def check_elmo_datasets(path: Path, shapes: Mapping[str, tuple]) -> None:
    """Every dataset the options imply is a plain numeric array of the implied shape, stored inside this
    file, judged from the file's metadata before any data is read: a compressed dataset nobody wrote reads
    back as gigabytes from a few kilobytes, an array element type hides dimensions from `shape`, and
    external storage or links would load bytes the card's checksum does not cover (or block on a FIFO)."""
    import h5py

    try:
        with h5py.File(path, "r") as fin:
            _check_datasets(fin, path, shapes)
    except ModelError:
        raise
    except (OSError, KeyError, ValueError, RuntimeError, TypeError) as exc:
        raise ModelError(f"{path}: cannot read HDF5 weights ({type(exc).__name__}: {exc})") from None


def _check_datasets(fin, path: Path, shapes: Mapping[str, tuple]) -> None:
    """check_elmo_datasets on an open file."""
    import h5py

    for name, shape in shapes.items():
        if name not in fin:
            raise ModelError(f"{path}: dataset {name} is missing")
        for where in [name[:i] for i, ch in enumerate(name) if ch == "/"] + [name]:
            if isinstance(fin.get(where, getlink=True), h5py.ExternalLink):
                raise ModelError(f"{path}: {where} links to another file")
        ds = fin[name]
        if not isinstance(ds, h5py.Dataset):
            raise ModelError(f"{path}: {name} is not a dataset")
        if ds.external or ds.is_virtual:
            raise ModelError(f"{path}: dataset {name} keeps its data outside the file")
        if ds.dtype.kind not in "fiu" or ds.dtype.subdtype is not None:
            raise ModelError(f"{path}: dataset {name} holds {ds.dtype}, not numbers")
        if ds.shape != tuple(shape):
            raise ModelError(f"{path}: dataset {name} has shape {ds.shape}, "
                             f"the options file implies {tuple(shape)}")


def write_elmo_weights(path: Path, bilm) -> None:
    import h5py

    with h5py.File(path, "w", track_order=True) as fout:
        for name, array in elmo_arrays(bilm).items():
            fout.create_dataset(name, data=array)


def elmo_shapes_of_options(options: Mapping) -> Dict[str, tuple]:
    """elmo_shapes from the options alone (read_options checked them), without building a module: what a
    torch-free process (the numpy backend) checks a weights file against."""
    from .chars import N_CHARACTERS

    cnn, lstm = options["char_cnn"], options["lstm"]
    char_dim, proj, cell = cnn["embedding"]["dim"], lstm["projection_dim"], lstm["dim"]
    n_filters = sum(n for _, n in cnn["filters"])
    shapes: Dict[str, tuple] = {"char_embed": (N_CHARACTERS - 1, char_dim)}
    for i, (width, n) in enumerate(cnn["filters"]):
        shapes[f"CNN/W_cnn_{i}"] = (1, width, char_dim, n)
        shapes[f"CNN/b_cnn_{i}"] = (n,)
    for k in range(cnn["n_highway"]):
        shapes.update({f"CNN_high_{k}/W_transform": (n_filters, n_filters),
                       f"CNN_high_{k}/W_carry": (n_filters, n_filters),
                       f"CNN_high_{k}/b_transform": (n_filters,), f"CNN_high_{k}/b_carry": (n_filters,)})
    shapes["CNN_proj/W_proj"] = (n_filters, proj)
    shapes["CNN_proj/b_proj"] = (proj,)
    for i in range(lstm["n_layers"]):
        for j in range(2):
            base = f"RNN_{j}/RNN/MultiRNNCell/Cell{i}/LSTMCell"
            shapes[f"{base}/W_0"] = (2 * proj, 4 * cell)
            shapes[f"{base}/B"] = (4 * cell,)
            shapes[f"{base}/W_P_0"] = (cell, proj)
    return {name: tuple(int(n) for n in shape) for name, shape in shapes.items()}


def read_elmo_arrays(path: Path, shapes: Mapping[str, tuple]) -> Dict[str, np.ndarray]:
    """The datasets named in `shapes` as float32 arrays, each checked (metadata, shape, finite values)."""
    import h5py

    loaded: Dict[str, np.ndarray] = {}
    try:
        with h5py.File(path, "r") as fin:
            _check_datasets(fin, path, shapes)  # every dataset and its shape, before any data is read
            for name in shapes:
                array = np.asarray(fin[name][...], dtype=np.float32)
                if not np.isfinite(array).all():
                    raise ModelError(f"{path}: dataset {name} holds NaN or infinite values")
                loaded[name] = array
    except ModelError:
        raise
    except (OSError, KeyError, ValueError, RuntimeError, TypeError) as exc:
        raise ModelError(f"{path}: cannot read HDF5 weights ({type(exc).__name__}: {exc})") from None
    return loaded


def lstm_arrays(loaded: Mapping[str, np.ndarray], layer: int, direction: int,
                n_in: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One LSTM cell's (input weight, state weight, bias, projection) in PyTorch's layout (gates i, f, g,
    o; weights (4 * cell, in), the forget bias with its +1), from the HDF5 arrays."""
    base = f"RNN_{direction}/RNN/MultiRNNCell/Cell{layer}/LSTMCell"
    c = loaded[f"{base}/B"].shape[0] // 4
    torch_w = _swap_gate_blocks(loaded[f"{base}/W_0"].T, c)
    tf_bias = loaded[f"{base}/B"].copy()
    tf_bias[2 * c: 3 * c] += 1.0
    return (torch_w[:, :n_in], torch_w[:, n_in:], _swap_gate_blocks(tf_bias, c), loaded[f"{base}/W_P_0"].T)


def read_elmo_weights(path: Path, bilm) -> None:
    """Load an AllenNLP-layout weight file into an ElmoBiLm built from the matching options."""
    import torch

    loaded = read_elmo_arrays(path, elmo_shapes(bilm))

    def put(param, array):
        with torch.no_grad():
            param.copy_(torch.from_numpy(np.ascontiguousarray(array)))

    enc = bilm.token_embedder
    char = np.zeros(tuple(enc.char_embedding.weight.shape), dtype=np.float32)
    char[1:] = loaded["char_embed"]
    put(enc.char_embedding.weight, char)
    for i, conv in enumerate(enc.convolutions):
        put(conv.weight, np.transpose(loaded[f"CNN/W_cnn_{i}"][0], (2, 1, 0)))
        put(conv.bias, loaded[f"CNN/b_cnn_{i}"])
    for k, layer in enumerate(enc.highways._layers):
        put(layer.weight, np.concatenate([loaded[f"CNN_high_{k}/W_transform"].T,
                                          -loaded[f"CNN_high_{k}/W_carry"].T], axis=0))
        put(layer.bias, np.concatenate([loaded[f"CNN_high_{k}/b_transform"],
                                        -loaded[f"CNN_high_{k}/b_carry"]], axis=0))
    put(enc.projection.weight, loaded["CNN_proj/W_proj"].T)
    put(enc.projection.bias, loaded["CNN_proj/b_proj"])
    for i, layers in enumerate(zip(bilm.lstm.forward_layers, bilm.lstm.backward_layers)):
        for j, cell in enumerate(layers):
            w_in, w_state, bias, w_proj = lstm_arrays(loaded, i, j, cell.input_size)
            put(cell.input_linearity.weight, w_in)
            put(cell.state_linearity.weight, w_state)
            put(cell.state_linearity.bias, bias)
            put(cell.state_projection.weight, w_proj)


# --- head (safetensors) ---------------------------------------------------------------------------------

def write_head(path: Path, state: Mapping) -> None:
    from safetensors.torch import save_file

    save_file({k: v.detach().contiguous().cpu() for k, v in state.items()}, str(path))


def read_head_arrays(path: Path) -> Dict[str, np.ndarray]:
    """head.safetensors as numpy arrays (safetensors' numpy API: no torch), each checked to be finite."""
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    try:
        state = load_file(str(path))
    except (SafetensorError, OSError, ValueError, RuntimeError, TypeError) as exc:
        raise ModelError(f"{path}: cannot read safetensors head ({describe(exc)})") from None
    for name, array in state.items():
        if array.dtype.kind != "f" or not np.isfinite(array).all():
            raise ModelError(f"{path}: tensor {name} holds NaN or infinite values, or not floats")
    return state


def read_head(path: Path) -> dict:
    import torch
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        state = load_file(str(path))
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise ModelError(f"{path}: cannot read safetensors head ({describe(exc)})") from None
    for name, tensor in state.items():
        if not torch.isfinite(tensor).all():
            raise ModelError(f"{path}: tensor {name} holds NaN or infinite values")
    return state


def model_size_bytes(directory: Path) -> int:
    return sum(os.path.getsize(Path(directory) / n) for n in (CARD,) + DATA_FILES)


# Where the shipped model is: here, without torch, so that the page-type classifier and the metadata
# (read in a crawl process that never imports torch) find it.
def _holds_shipped_model(directory: Path) -> bool:
    """`directory` has an edrew model card: a folder that merely shares the name (another package's
    top-level models/default in the same site-packages) must not be taken for ours."""
    try:
        card = load_json(directory, CARD, MAX_JSON_BYTES, "not a model card")
    except (ModelError, OSError):
        return False
    return isinstance(card, dict) and card.get("format") == FORMAT


def _shipped_models_dir(module_file: str = __file__) -> Path:
    """models/ of the repository (a clone or an editable install), else the copy a wheel installs
    under <prefix>/share/edrew-scrapy/models (setup.cfg's data_files).

    The prefix is looked for upwards from the package first (<prefix>/lib/pythonX.Y/site-packages on
    POSIX, <prefix>/Lib/site-packages on Windows, the folder itself for `pip install --target`), so
    that the install this code was imported from gives its own models: `pip install --prefix` lands
    away from sys.prefix, and a `--user` install that shadows a system-wide one is newer than it. Then
    sys.prefix and the user base (~/.local), for layouts where the data went elsewhere.
    When nothing is found, the repository's path, so that the error names where a clone keeps them."""
    import site

    package_parent = Path(module_file).resolve().parent.parent.parent
    in_repo = package_parent / "models"
    if _holds_shipped_model(in_repo / "default"):
        return in_repo
    bases = [package_parent, *list(package_parent.parents)[:3], Path(sys.prefix), Path(site.getuserbase())]
    for base in bases:
        installed = base / "share" / "edrew-scrapy" / "models"
        if _holds_shipped_model(installed / "default"):
            return installed
    return in_repo


DEFAULT_MODEL_DIR = _shipped_models_dir() / "default"
# what --model, EDREW_MODEL and load_model() read as the shipped model (write ./default for a folder of that name)
DEFAULT_MODEL_NAME = "default"


def model_directory(path: Union[str, Path, None]) -> Path:
    """The model folder a name means: None or "default" is the shipped models/default, anything else a path."""
    if path is None or path == DEFAULT_MODEL_NAME:  # a Path never equals the str
        return DEFAULT_MODEL_DIR
    return Path(path)
