"""The window is read as plain columns into pure Block values: the column order must be the
dataclass's, or every field lands in the wrong place."""

import dataclasses

import pytest

from timeline_app.domain.blocks import Block as BlockValue
from timeline_app.domain.contributions import NewBlock
from timeline_app.models import VALUE_FIELDS, Block, block_value
from timeline_app.services.blocks import blocks_append


def test_value_fields_follow_the_pure_block_field_order():
    assert tuple(f.name for f in dataclasses.fields(BlockValue)) == VALUE_FIELDS


@pytest.mark.django_db
def test_a_row_read_as_values_equals_the_row_as_a_value(conversation):
    timeline = conversation.timelines.get()
    blocks_append(
        timeline=timeline,
        blocks=[
            NewBlock(type="user.attachment", turn_id="t1", mime="image/png", data=b"\x89PNG", meta={"a": 1})
        ],
    )
    row = Block.objects.get(timeline=timeline)
    (values,) = Block.objects.filter(timeline=timeline).as_values()
    assert values == row.to_value() == block_value(*(getattr(row, name) for name in VALUE_FIELDS))
    assert values.data == "iVBORw==" and values.meta == {"a": 1} and values.mime == "image/png"
