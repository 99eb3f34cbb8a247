"""Tag limits of a job collection body, checked before anything is stored."""

import pytest

from scheduler_lib.errors import ValidationError
from scheduler_lib.wire.collections import normalize_body
from scheduler_lib.wire.tags import MAX_TAGS_BYTES


def test_tags_over_64_kib_of_json_are_refused_naming_tags():
    """Each tag within ARM's limits (512/256 characters), 3-byte characters throughout."""
    tags = {f"{i:02d}".ljust(512, "€"): "€" * 256 for i in range(50)}
    with pytest.raises(ValidationError) as caught:
        normalize_body({"tags": tags})
    assert caught.value.field == "tags"
    assert str(MAX_TAGS_BYTES) in caught.value.message


def test_tags_just_within_64_kib_are_accepted():
    tags = {f"{i:02d}".ljust(512, "n"): "€" * 256 for i in range(50)}  # 50 * 1294 bytes
    assert normalize_body({"tags": tags})[1] == tags


@pytest.mark.parametrize(
    ("tags", "field"),
    [
        ({f"t{i}": "" for i in range(51)}, "tags"),
        ({"n" * 513: "v"}, "tags"),
        ({"": "v"}, "tags"),
        ({"env": "v" * 257}, "tags.env"),
        ({"env": 1}, "tags.env"),
    ],
)
def test_arm_tag_limits(tags, field):
    with pytest.raises(ValidationError) as caught:
        normalize_body({"tags": tags})
    assert caught.value.field == field
