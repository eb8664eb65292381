"""The membership benchmark's method choices: the standard set by its own labels, then each extra method with
what it needs and the passes it adds per text, counted as the run counts them."""

from __future__ import annotations

from core.membership.method_choice import EXTRA_METHODS, method_choices, with_cost
from core.methods import default_methods


def test_an_extra_method_is_labelled_with_what_it_needs_and_its_passes():
    assert with_cost("recall", "ReCaLL", "non-member prefix") == "ReCaLL (non-member prefix; +1 pass per text)"
    assert with_cost("reference", "Reference model", "needs a second model") == (
        "Reference model (needs a second model; +1 pass per text)"
    )
    # auxiliary_cost: 1 pass + 1 per neighbour, 5 neighbours by default
    assert with_cost("neighbourhood", "Neighbourhood comparison", "reworded neighbours") == (
        "Neighbourhood comparison (reworded neighbours; +6 passes per text)"
    )


def test_the_choices_list_the_standard_set_then_the_extra_methods():
    choices = method_choices()
    standard = default_methods()
    assert list(choices) == [m.key for m in standard] + ["recall", "neighbourhood", "reference"]
    assert all(choices[m.key] == m.label for m in standard)
    assert list(EXTRA_METHODS) == ["recall", "neighbourhood", "reference"]
    assert choices["recall"] == "ReCaLL (non-member prefix; +1 pass per text)"
