"""Model directories: round trip, checksums, truncation, versions; nothing pickled."""
from __future__ import annotations

import json

import h5py
import numpy as np
import pytest
import torch
from _model_helpers import make_page, tiny_model

from edrew_scrapy.model import files
from edrew_scrapy.model.files import ModelError
from edrew_scrapy.model.scorer import load_model

torch.set_num_threads(1)


def test_round_trip_gives_the_same_weights_and_scores(tmp_path):
    _, bilm, head = tiny_model(tmp_path)
    scorer = load_model(tmp_path)
    saved, loaded = bilm.state_dict(), scorer.encoder.bilm.state_dict()
    assert saved.keys() == loaded.keys()
    for k in saved:
        assert torch.allclose(saved[k], loaded[k], atol=1e-6), k
    for k, v in head.state_dict().items():
        assert torch.equal(v, scorer.head.state_dict()[k])
    page = make_page()
    assert np.allclose(scorer.score([page])[0], load_model(tmp_path).score([page])[0])
    assert scorer.threshold == 0.5 and scorer.card["head"]["variant"] == "d"


def test_hdf5_has_allennlp_layout(tmp_path):
    options, _, _ = tiny_model(tmp_path)
    with h5py.File(tmp_path / files.WEIGHTS, "r") as f:
        assert f["char_embed"].shape == (261, options["char_cnn"]["embedding"]["dim"])
        assert f["CNN"]["W_cnn_0"].shape == (1, 1, 4, 4)
        assert "W_transform" in f["CNN_high_0"] and "W_carry" in f["CNN_high_0"]
        assert f["CNN_proj"]["W_proj"].shape == (16, 8)
        cell = f["RNN_1"]["RNN"]["MultiRNNCell"]["Cell1"]["LSTMCell"]
        assert cell["W_0"].shape == (8 + 8, 4 * 16) and cell["B"].shape == (64,) and cell["W_P_0"].shape == (16, 8)
    opts = json.loads((tmp_path / files.OPTIONS).read_text())
    assert opts["lstm"]["use_skip_connections"] and opts["char_cnn"]["max_characters_per_token"] == 50


def test_card_lists_checksums(tmp_path):
    tiny_model(tmp_path)
    card = json.loads((tmp_path / files.CARD).read_text())
    assert card["format_version"] == files.FORMAT_VERSION
    for name in files.DATA_FILES:
        assert card["files"][name]["sha256"] == files.sha256_of(tmp_path / name)


def test_corrupt_file_fails_its_checksum(tmp_path):
    tiny_model(tmp_path)
    data = bytearray((tmp_path / files.HEAD).read_bytes())
    data[-5] ^= 0xFF
    (tmp_path / files.HEAD).write_bytes(bytes(data))
    with pytest.raises(ModelError, match=r"head\.safetensors.*checksum"):
        load_model(tmp_path)


def test_truncated_hdf5_is_reported(tmp_path):
    tiny_model(tmp_path)
    path = tmp_path / files.WEIGHTS
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(ModelError, match=r"elmo_weights\.hdf5.*truncated"):
        load_model(tmp_path)
    # without the card's size check, h5py's own failure is still a ModelError naming the file
    with pytest.raises(ModelError, match=r"elmo_weights\.hdf5"):
        from edrew_scrapy.model.elmo import ElmoBiLm

        files.read_elmo_weights(path, ElmoBiLm(json.loads((tmp_path / files.OPTIONS).read_text())))


def test_wrong_version_and_missing_files(tmp_path):
    tiny_model(tmp_path)
    card = json.loads((tmp_path / files.CARD).read_text())
    card["format_version"] = 99
    (tmp_path / files.CARD).write_text(json.dumps(card))
    with pytest.raises(ModelError, match=r"card\.json.*version 99"):
        load_model(tmp_path)
    with pytest.raises(ModelError, match="does not exist"):
        load_model(tmp_path / "nowhere")
    with pytest.raises(ModelError, match="is a file, not a model directory"):
        load_model(tmp_path / files.CARD)
    other = tmp_path / "other"
    tiny_model(other)
    (other / files.OPTIONS).unlink()
    with pytest.raises(ModelError, match=r"elmo_options\.json.*missing"):
        load_model(other)
    (other / files.CARD).write_text("{not json")
    with pytest.raises(ModelError, match="not valid JSON"):
        load_model(other)


def test_shapes_that_disagree_with_options_are_reported(tmp_path):
    tiny_model(tmp_path)
    options = json.loads((tmp_path / files.OPTIONS).read_text())
    options["lstm"]["dim"] = 8  # fewer parameters than the file holds: the shapes are compared
    files.write_options(tmp_path / files.OPTIONS, options)
    card = json.loads((tmp_path / files.CARD).read_text())
    files.write_card(tmp_path, card)
    with pytest.raises(ModelError, match=r"elmo_weights\.hdf5.*shape"):
        load_model(tmp_path)


@pytest.mark.parametrize("backend", ["native", "allennlp"])
@pytest.mark.parametrize("decoy", [False, True])
def test_options_larger_than_their_weights_are_refused_before_anything_is_allocated(tmp_path, backend, decoy):
    # A crafted options file: an LSTM of 2**24 cells would allocate some 2**50 bytes if built. The biLM is
    # built on torch's meta device and each dataset's shape read from the file's metadata first, so it is
    # refused by shape, not by a failed allocation; an unread dataset declaring 2**40 values changes nothing.
    # (The AllenNLP backend is refused too, before allennlp is imported.)
    tiny_model(tmp_path)
    edit_json(tmp_path / files.OPTIONS, _set("lstm", "dim", 2 ** 24))
    if decoy:
        with h5py.File(tmp_path / files.WEIGHTS, "r+") as f:
            f.create_dataset("decoy", shape=(2 ** 40,), dtype="f4", chunks=(2 ** 16,), compression="gzip")
    rewrite_checksums(tmp_path)
    with pytest.raises(ModelError, match=r"elmo_weights\.hdf5: dataset \S+ has shape \(\d+, \d+\), "
                                         r"the options file implies \(\d+, 67108864\)"):
        load_model(tmp_path, backend=backend)


@pytest.mark.parametrize("make, problem", [
    # an element type that is itself an array: `shape` does not show its 2**27 floats per row
    (lambda g: g.create_dataset("b_proj", shape=(8,), dtype=np.dtype(("f4", (2 ** 27,))), chunks=(1,),
                                compression="gzip"), "not numbers"),
    (lambda g: g.create_dataset("b_proj", data=np.zeros(8, dtype=[("a", "f4"), ("b", "f4")])), "not numbers"),
    (lambda g: g.create_dataset("b_proj", data=np.array([b"1.5"] * 8)), "not numbers"),
    (lambda g: g.create_group("b_proj"), "is not a dataset"),
    # its data in another file, which the card's checksum does not cover (a FIFO there would block)
    (lambda g: g.create_dataset("b_proj", shape=(8,), dtype="f4", external=[("/dev/zero", 0, h5py.h5f.UNLIMITED)]),
     "outside the file"),
    (lambda g: g.__setitem__("b_proj", h5py.ExternalLink("/elsewhere.h5", "/b")), "links to another file"),
])
def test_datasets_that_are_not_plain_arrays_in_the_file_are_refused_unread(tmp_path, make, problem):
    tiny_model(tmp_path)
    with h5py.File(tmp_path / files.WEIGHTS, "r+") as f:
        del f["CNN_proj"]["b_proj"]
        make(f["CNN_proj"])
    rewrite_checksums(tmp_path)
    load_fails(tmp_path, rf"elmo_weights\.hdf5: .*{problem}")


def test_the_dataset_layout_is_known_without_the_weights():
    # elmo_shapes (what a meta-device biLM is checked against) gives elmo_arrays' shapes
    from _model_helpers import TINY

    from edrew_scrapy.model.elmo import ElmoBiLm, default_options

    for n_layers in (1, 2):
        bilm = ElmoBiLm(default_options(n_layers=n_layers, **TINY))
        assert files.elmo_shapes(bilm) == {k: v.shape for k, v in files.elmo_arrays(bilm).items()}


def test_a_head_larger_than_its_weights_is_refused_before_it_is_built(tmp_path):
    tiny_model(tmp_path)
    edit_json(tmp_path / files.CARD, _set("head", "node_dim", 10 ** 7))  # ~3 GB of float32 if built
    load_fails(tmp_path, r"card\.json: the head configuration describes [\d,]+ parameters; head\.safetensors holds")


def test_a_compressed_dataset_is_measured_before_it_is_read(tmp_path):
    # HDF5 stores a dataset nobody wrote as its fill value: a 4 GB dataset in a file of a few KB. Its shape
    # is compared with the options' before any of it is read.
    tiny_model(tmp_path)
    with h5py.File(tmp_path / files.WEIGHTS, "r+") as f:
        del f["CNN_proj"]["b_proj"]
        f["CNN_proj"].create_dataset("b_proj", shape=(2 ** 30,), dtype="f4", chunks=(2 ** 16,), compression="gzip")
    rewrite_checksums(tmp_path)
    assert (tmp_path / files.WEIGHTS).stat().st_size < 10 ** 6
    load_fails(tmp_path, r"elmo_weights\.hdf5: dataset CNN_proj/b_proj has shape \(1073741824,\)")


def test_no_pickle_in_the_model_package():
    from pathlib import Path

    import edrew_scrapy.model as model_pkg

    for py in Path(model_pkg.__file__).parent.glob("*.py"):
        text = py.read_text()
        for banned in ("import pickle", "torch.load(", "torch.save(", "import dill"):
            assert banned not in text, f"{py.name} uses {banned}"


def test_a_head_that_reads_more_features_than_this_version_computes(tmp_path):
    tiny_model(tmp_path)
    card = json.loads((tmp_path / files.CARD).read_text())
    card["head"]["n_features"] = 99
    (tmp_path / files.CARD).write_text(json.dumps(card))
    with pytest.raises(ModelError, match=r"card\.json.*99 shallow features"):
        load_model(tmp_path, verify=False)


def edit_json(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def rewrite_checksums(directory):
    """The card's sizes and sha256s made to match the data files again, as after a deliberate edit."""
    files.write_card(directory, json.loads((directory / files.CARD).read_text()))


def load_fails(directory, pattern):
    with pytest.raises(ModelError, match=pattern) as raised:
        load_model(directory)
    assert "\n" not in str(raised.value)
    return str(raised.value)


def _set(*keys_and_value):
    *keys, last, value = keys_and_value

    def change(data):
        for key in keys:
            data = data[key]
        data[last] = value
    return change


@pytest.mark.parametrize("change, problem", [
    (_set("threshold", "abc"), "threshold"),
    (_set("threshold", None), "threshold"),
    (_set("threshold", 5), "threshold"),
    (_set("threshold", True), "threshold"),
    (_set("region_share", "0.7"), "region_share"),
    (_set("format_version", True), "version"),
    (_set("files", files.HEAD, "abc"), "files.head.safetensors"),
    (_set("files", files.OPTIONS, "bytes", "544"), "files.elmo_options.json"),
    (_set("files", files.WEIGHTS, "sha256", None), "files.elmo_weights.hdf5"),
    (_set("files", ["abc"]), "checksums"),
])
def test_card_fields_of_the_wrong_type_or_range_name_the_card(tmp_path, change, problem):
    tiny_model(tmp_path)
    edit_json(tmp_path / files.CARD, change)
    load_fails(tmp_path, rf"card\.json: .*{problem}")


@pytest.mark.parametrize("change, problem", [
    (_set("head", "node_dim", -1), "head.node_dim"),
    (_set("head", "node_dim", 0), "head.node_dim"),
    (_set("head", "context_dim", "32"), "head.context_dim"),
    (_set("head", "elmo_dim", None), "head.elmo_dim"),
    (_set("head", "use_text", "yes"), "head.use_text"),
    (_set("head", "dropout", -0.5), "head.dropout"),
    (_set("head", "abc"), "no head configuration"),
])
def test_bad_head_configuration_names_the_card(tmp_path, change, problem):
    tiny_model(tmp_path)
    edit_json(tmp_path / files.CARD, change)
    load_fails(tmp_path, rf"card\.json: .*{problem}")


def test_head_tensors_that_do_not_fit_the_card_give_a_one_line_message(tmp_path):
    tiny_model(tmp_path)
    edit_json(tmp_path / files.CARD, _set("head", "node_dim", 4))  # smaller: the tensors are compared
    load_fails(tmp_path, r"head\.safetensors: tensors do not match")


def test_a_head_built_for_another_bilm_is_reported(tmp_path):
    from _model_helpers import TINY

    from edrew_scrapy.model.elmo import ElmoBiLm, default_options

    tiny_model(tmp_path)
    options = default_options(n_layers=1, **TINY)
    files.write_options(tmp_path / files.OPTIONS, options)
    files.write_elmo_weights(tmp_path / files.WEIGHTS, ElmoBiLm(options))
    rewrite_checksums(tmp_path)
    load_fails(tmp_path, r"card\.json: head\.n_layers is 3, the ELMo options .* give 2")


@pytest.mark.parametrize("change, problem", [
    (_set("lstm", "dim", -5), "lstm.dim"),
    (_set("lstm", "projection_dim", 2.5), "lstm.projection_dim"),
    (_set("char_cnn", "embedding", "dim", "4"), "char_cnn.embedding.dim"),
    (_set("char_cnn", "filters", [[0, 4]]), "char_cnn.filters"),
    (_set("char_cnn", "filters", [[2, -4]]), "char_cnn.filters"),
    (_set("char_cnn", "n_highway", -1), "char_cnn.n_highway"),
    (_set("lstm", "cell_clip", "3"), "lstm.cell_clip"),
    (_set("char_cnn", "abc"), "char_cnn"),
    (_set("char_cnn", "activation", "foo"), "activation 'foo'"),
])
def test_bad_elmo_options_name_the_options_file(tmp_path, change, problem):
    tiny_model(tmp_path)
    edit_json(tmp_path / files.OPTIONS, change)
    rewrite_checksums(tmp_path)
    load_fails(tmp_path, rf"elmo_options\.json: .*{problem}")


def test_torch_errors_building_the_bilm_name_the_options_file(tmp_path):
    from edrew_scrapy.model.scorer import build_bilm

    options, _, _ = tiny_model(tmp_path)
    options["lstm"]["dim"] = -5  # past read_options' checks, torch's RuntimeError
    with pytest.raises(ModelError, match=r"elmo_options\.json: ELMo options do not describe a model \(RuntimeError"):
        build_bilm(options, tmp_path / files.OPTIONS)


def test_non_finite_head_weights_are_reported(tmp_path):
    tiny_model(tmp_path)
    state = files.read_head(tmp_path / files.HEAD)
    for tensor in state.values():
        tensor.fill_(float("nan"))
    files.write_head(tmp_path / files.HEAD, state)
    rewrite_checksums(tmp_path)
    load_fails(tmp_path, r"head\.safetensors: tensor .* NaN")


def test_non_finite_elmo_weights_are_reported(tmp_path):
    tiny_model(tmp_path)
    with h5py.File(tmp_path / files.WEIGHTS, "r+") as f:
        f["CNN_proj"]["b_proj"][0] = np.inf
    rewrite_checksums(tmp_path)
    load_fails(tmp_path, r"elmo_weights\.hdf5: dataset CNN_proj/b_proj .* infinite")


@pytest.mark.parametrize("change, problem", [
    (_set("char_cnn", "n_highway", 10 ** 8), "char_cnn.n_highway must be an integer from 0 to 64"),
    (_set("lstm", "n_layers", 10 ** 8), "lstm.n_layers is 100000000, at most 64"),
    (_set("char_cnn", "filters", [[1, 1]] * 10 ** 5), "char_cnn.filters must be a list of 1 to 64"),
])
def test_layer_counts_are_bounded_before_any_module_is_built(tmp_path, change, problem):
    # each layer is Python objects even on the meta device: 10**8 of them would take hours
    tiny_model(tmp_path)
    edit_json(tmp_path / files.OPTIONS, change)
    rewrite_checksums(tmp_path)
    load_fails(tmp_path, rf"elmo_options\.json: {problem}")


def test_the_shipped_default_names_every_training_set_and_trained_on_none_it_may_not():
    """models/default's card: each set its head learnt from with licence and credit, none that may not train
    a shipped model (dragnet, AGPL-3.0: evaluation only), and a command that runs from the repository."""
    from edrew_scrapy.data.mix import KNOWN_DATASETS
    card = files.read_card(files.DEFAULT_MODEL_DIR)
    sets = card["training"]["datasets"]
    assert {s["name"] for s in sets} == {"wcxb-dev", "fundus-news", "mozilla-readability"}
    for s in sets:
        known = KNOWN_DATASETS[s["name"]]
        assert (s["licence"], s["credit"], s["may_train_a_shipped_model"]) == (known["licence"], known["credit"], True)
        assert s["train"] > 0
    for html in card["training"]["pretrain"].get("html", []):  # the biLM's unlabelled pages, if any
        assert html["may_train_a_shipped_model"] and html["licence"] != KNOWN_DATASETS["dragnet"]["licence"]
    assert KNOWN_DATASETS["dragnet"]["trains"] is False
    assert "dragnet" not in card["training"]["command"]
    assert [s["name"] for s in card["training"]["not_trained_on"]] == ["dragnet"]
    assert "/work/" not in json.dumps(card) and "/tmp/" not in json.dumps(card)
