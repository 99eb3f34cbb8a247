"""The paging arithmetic of `read_page`, over a plain list standing in for the *page
protocol* (rows + continuation token) — including short pages, which Table storage may
return but Azurite never does. Storage itself is covered over real Azurite in
test_lists_api.py."""

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_lib.api.paging import decode_position, encode_position, read_page


def pages_of(rows: list[int], short_every: int):
    """fetch(size, token): up to `size` rows from offset `token`; every `short_every`-th
    call returns fewer rows than asked, like a storage partition boundary does."""
    calls = [0]

    def fetch(size: int, token: str | None) -> tuple[list[int], str | None]:
        calls[0] += 1
        start = int(token or 0)
        if short_every and calls[0] % short_every == 0:
            size = max(1, size // 2)
        page = rows[start : start + size]
        end = start + len(page)
        return page, (str(end) if end < len(rows) else None)

    return fetch


@settings(max_examples=200, deadline=None)
@given(
    total=st.integers(0, 60),
    top=st.integers(1, 10),
    skip=st.integers(0, 70),
    short_every=st.integers(0, 3),
)
def test_pages_cover_every_row_once_in_order(total, top, skip, short_every):
    rows = list(range(total))
    fetch = pages_of(rows, short_every)
    seen: list[int] = []
    page, position = read_page(fetch, position=None, skip=skip, top=top)
    while True:
        assert len(page) <= top
        seen += page
        if position is None:
            break
        assert page, "a nextLink never leads from or to an empty page"
        page, position = read_page(fetch, position=position, skip=0, top=top)
        assert page
    assert seen == rows[skip:]


def test_positions_round_trip():
    assert decode_position(encode_position("tok", 3)) == ("tok", 3)
    assert decode_position(None) == (None, 0)
