"""``linbook.datasets.load`` / ``load_csv`` with a name that is no data set: an error naming the parameter ``name``
and listing the valid names. Before session 23: "no data set 'nope'; available: [...]" (no parameter named, and a
``FileNotFoundError`` from ``load_csv``; an unhashable name gave Python's "unhashable type"); ``as_frame="x"`` was
taken as true."""

import pytest
from adversarial.harness import assert_clear_error

from linbook import datasets


@pytest.mark.parametrize("loader", ["load", "load_csv"])
@pytest.mark.parametrize("name", ["nope", "IRIS", 3, None, ["iris"]])
def test_an_unknown_name_is_named_with_the_valid_ones(loader, name):
    with pytest.raises(ValueError) as info:
        getattr(datasets, loader)(name)
    assert_clear_error(info.value, "name")
    assert all(repr(valid) in str(info.value) for valid in datasets.available())
    assert isinstance(info.value, FileNotFoundError)          # what load_csv raised before, still caught


def test_as_frame_must_be_a_bool():
    with pytest.raises(TypeError) as info:
        datasets.load("iris", as_frame="x")
    assert_clear_error(info.value, "as_frame")
