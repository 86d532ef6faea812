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
    from shardc.dialect.text.generic import _lines

    texts = ["", "\n", "a", "a\n", "a\nb", "a\nb\n", "\n\n", "abc\n\ndef\n", "x\n" * 50]
    for text in texts:
        for chunk in (0, 1, 2, 3, 7, 1 << 20):
            assert list(_lines(text, chunk)) == text.split("\n"), (text, chunk)


def test_uses_pair_each_user_with_its_operand_index() -> None:
    from shardc.dialect.ir import AttrDict, Block, Operation
    from shardc.dialect.types import parse_type

    t = parse_type("tensor<4xf32>")
    block = Block([t, t])
    x, y = block.args
    add = Operation.fast("stablehlo.add", [x, x], AttrDict(""), AttrDict(""), None)
    mul = Operation("stablehlo.multiply", [y, x], [t])
    assert x.uses == [(add, 0), (add, 1), (mul, 1)] and x.num_uses == 3
    assert list(x.users) == [add, add, mul]
    assert y.uses == [(mul, 0)]
    add.set_operand(0, y)
    assert x.uses == [(add, 1), (mul, 1)] and y.uses == [(mul, 0), (add, 0)]
    neg = Operation("stablehlo.negate", [mul.results[0]], [t])
    assert mul.results[0].uses == [(neg, 0)]
    x.replace_all_uses_with(y)
    assert x.uses == [] and add.operands == [y, y] and mul.operands == [y, y]
    assert sorted(i for op, i in y.uses if op is add) == [0, 1]
    neg.drop_operands()
    assert mul.results[0].uses == [] and neg.operands == []
    mul.results[0].uses = []  # (what Module.release does)
    assert not mul.results[0].uses


def test_alias_locations_are_stored_as_numbers_and_print_back() -> None:
    from shardc.dialect.text import parse_generic, print_generic

    text = "\n".join(
        [
            '#loc = loc("f.py":1:2)',
            '#loc7 = loc("g.py":3:4)',
            '"builtin.module"() ({',
            '  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, '
            'sym_name = "main"}> ({',
            "  ^bb0(%arg0: tensor<4xf32> loc(#loc)):",
            '    %0 = "stablehlo.negate"(%arg0) : (tensor<4xf32>) -> tensor<4xf32> loc(#loc7)',
            '    %1 = "stablehlo.abs"(%0) : (tensor<4xf32>) -> tensor<4xf32> loc(#loc)',
            '    %2 = "stablehlo.sine"(%1) : (tensor<4xf32>) -> tensor<4xf32> loc(#loc07)',
            '    "func.return"(%2) : (tensor<4xf32>) -> () loc("h.py":5:6)',
            "  }) : () -> () loc(#loc)",
            "}) : () -> () loc(#loc)",
            "",
        ]
    )
    module = parse_generic(text)
    neg, abs_, sine, ret = module.funcs["main"].regions[0].entry.ops
    assert neg.loc == "loc(#loc7)" and module.resolve_loc(neg.loc) == "g.py:3:4"
    assert abs_.loc == "loc(#loc)" and sine.loc == "loc(#loc07)"
    assert ret.loc == 'loc("h.py":5:6)'
    assert print_generic(module) == text
    neg.loc = None
    assert neg.loc is None
