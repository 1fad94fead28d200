"""EDREW_TORCH_THREADS: scoring sets torch's intra-op threads once, when the model loads."""
import pytest
from scrapy.settings import Settings

from edrew_scrapy.scrapy.scoring import load_scorer
from edrew_scrapy.scrapy.settings import EdrewSettings

torch = pytest.importorskip("torch")


@pytest.fixture
def restore_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def test_default_is_one_thread(restore_threads):
    torch.set_num_threads(2)
    conf = EdrewSettings.from_settings(Settings())
    assert conf.torch_threads == 1
    load_scorer(conf)
    assert torch.get_num_threads() == 1


def test_zero_leaves_torch_alone(restore_threads):
    torch.set_num_threads(2)
    load_scorer(EdrewSettings.from_settings(Settings({"EDREW_TORCH_THREADS": 0})))
    assert torch.get_num_threads() == 2
