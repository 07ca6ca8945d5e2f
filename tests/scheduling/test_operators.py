"""The extra-spec operator grammar (Nova's extra_specs_ops), operator by operator."""

import pytest

from aggregates.scheduling.operators import OPERATORS, SchedulingInputError, match, operator_of


@pytest.mark.parametrize(
    ("value", "requirement", "expected"),
    [
        # No operator: the whole requirement must equal the value.
        ("true", "true", True),
        ("True", "true", False),
        ("a b", "a b", True),
        ("a", "a b", False),
        ("not-true", "true", False),
        # "=" means at least.
        ("4", "= 4", True),
        ("8", "= 4", True),
        ("2", "= 4", False),
        # Numeric equality and comparisons compare numbers, not strings.
        ("4.0", "== 4", True),
        ("5", "== 4", False),
        ("5", "!= 4", True),
        ("4.0", "!= 4", False),
        ("10", ">= 9", True),
        ("8", ">= 9", False),
        ("9", ">= 9", True),
        ("9", "<= 10", True),
        ("11", "<= 10", False),
        ("10.0", "<= 10", True),
        # String comparisons.
        ("ssd", "s== ssd", True),
        ("SSD", "s== ssd", False),
        ("hdd", "s!= ssd", True),
        ("ssd", "s!= ssd", False),
        ("10", "s< 9", True),  # "10" < "9" as strings
        ("9", "s< 10", False),
        ("abc", "s< abc", False),
        ("abc", "s<= abc", True),
        ("abd", "s<= abc", False),
        ("b", "s> a", True),
        ("a", "s> b", False),
        ("a", "s> a", False),
        ("abc", "s>= abc", True),
        ("abb", "s>= abc", False),
        # Substrings.
        ("fast-ssd", "<in> ssd", True),
        ("fast-hdd", "<in> ssd", False),
        ("avx2,sse4", "<all-in> avx2 sse4", True),
        ("avx2", "<all-in> avx2 sse4", False),
        # <or>: the value equals one of the words.
        ("b", "<or> a <or> b", True),
        ("c", "<or> a <or> b", False),
        ("a", "<or> a", True),
        ("a", "<or> b <or> c <or> a", True),
        ("<or>", "<or> a <or> b", False),  # the keywords are not candidates
        # Extra operands are ignored by single-operand operators.
        ("ssd", "s== ssd hdd", True),
        ("5", ">= 4 100", True),
    ],
)
def test_match(value, requirement, expected):
    assert match(value, requirement) is expected


@pytest.mark.parametrize("op", sorted(OPERATORS))
def test_operator_without_operand_never_matches(op):
    assert match(op, op) is False
    assert match("", op) is False
    assert match("4", f"  {op}  ") is False


@pytest.mark.parametrize("requirement", ["= 4", "== 4", "!= 4", ">= 4", "<= 4"])
def test_numeric_operator_with_non_numeric_value_raises(requirement):
    with pytest.raises(SchedulingInputError) as raised:
        match("lots", requirement)
    assert "'lots' is not a number" in str(raised.value)
    assert requirement.split()[0] in str(raised.value)


def test_numeric_operator_with_non_numeric_operand_raises():
    with pytest.raises(SchedulingInputError, match="'four' is not a number"):
        match("4", ">= four")


def test_scheduling_input_error_is_a_value_error():
    assert issubclass(SchedulingInputError, ValueError)


def test_string_operators_accept_any_text():
    assert match("lots", "s>= abc") is True


@pytest.mark.parametrize(
    ("requirement", "expected"),
    [(">= 4", ">="), ("<or> a <or> b", "<or>"), ("true", None), ("", None), ("> 4", None), ("s== x", "s==")],
)
def test_operator_of(requirement, expected):
    assert operator_of(requirement) == expected


def test_no_numeric_greater_or_less_than():
    # "> 4" is not an operator, so the requirement is compared whole.
    assert match("5", "> 4") is False
    assert match("> 4", "> 4") is True


def test_grammar_has_exactly_novas_operators():
    assert OPERATORS == {
        "=", "==", "!=", ">=", "<=", "s==", "s!=", "s<", "s<=", "s>", "s>=", "<in>", "<all-in>", "<or>",
    }  # fmt: skip
