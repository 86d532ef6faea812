"""The IR's compact layout keeps its API: attribute dicts shared until written, use lists."""

from __future__ import annotations

from shardc.dialect.ir import AttrDict


def test_attr_dicts_of_one_text_share_entries_until_one_is_written() -> None:
    text = 'broadcast_dimensions = array<i64: 0, 1>, "quoted.key" = 3 : i64, unit_attr'
    a, b = AttrDict(text), AttrDict(text)
    assert a["broadcast_dimensions"] == "array<i64: 0, 1>"
    assert b.get("quoted.key") == "3 : i64"
    assert "unit_attr" in a and a["unit_attr"] is None
    b["new"] = "1 : i32"
    assert "new" in b and "new" not in a
    assert b.pop("quoted.key") == "3 : i64"
    assert a.get("quoted.key") == "3 : i64"
    assert a.body() == text  # untouched: still its text
    assert b.body() == "broadcast_dimensions = array<i64: 0, 1>, unit_attr, new = 1 : i32"
    c = AttrDict(text)
    assert c.keys() == ["broadcast_dimensions", "quoted.key", "unit_attr"]


def test_attr_dict_pop_of_an_absent_key_and_copies_leave_the_text() -> None:
    text = "dimension = 0 : i64"
    a = AttrDict(text)
    assert a.pop("absent") is None and a.pop("dim") is None
    assert a.body() == text and len(a) == 1
    copy = a.copy()
    copy["dimension"] = "1 : i64"
    assert a["dimension"] == "0 : i64" and copy["dimension"] == "1 : i64"
    assert str(a) == "{dimension = 0 : i64}" and str(copy) == "{dimension = 1 : i64}"
    empty = AttrDict("")
    assert not empty and len(empty) == 0 and empty.body() == ""
    empty["x"] = None
    assert empty and str(empty) == "{x}"


def test_parser_reads_lines_as_split_would_in_any_chunking() -> None:
    from shardc.dialect.mlir_text import _lines

    texts = ["", "\n", "a", "a\n", "a\nb", "a\nb\n", "\n\n", "abc\n\ndef\n", "x\n" * 50]
    for text in texts:
        for chunk in (0, 1, 2, 3, 7, 1 << 20):
            assert list(_lines(text, chunk)) == text.split("\n"), (text, chunk)
