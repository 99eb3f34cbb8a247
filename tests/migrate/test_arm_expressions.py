"""The ARM expression evaluator: each function, nesting, escapes, parameters and variables,
copy loops, and refusals that name the expression and its path in the template."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from scheduler_lib.migrate.arm_expression import parse
from scheduler_lib.migrate.arm_template import Template
from scheduler_lib.migrate.deployment_functions import Deployment
from scheduler_lib.migrate.overrides import Overrides
from scheduler_lib.migrate.problems import SourceError, Unresolved

DEPLOYMENT = Deployment("sub-1", "rg-1", "westeurope")


def template(
    document: dict[str, Any] | None = None, sets: tuple[str, ...] = (), **kw: Any
) -> Template:
    return Template(
        document or {},
        given=kw.get("given", {}),
        overrides=Overrides(sets),
        deployment=kw.get("deployment", DEPLOYMENT),
    )


def value(expression: Any, document: dict[str, Any] | None = None, **kw: Any) -> Any:
    return template(document, **kw).value(expression, "resources[0].properties.x")


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("plain text", "plain text"),
        ("[[not an expression]", "[not an expression]"),
        ("[[", "[["),
        ("['it''s']", "it's"),
        ("[concat('a', 'b', 1)]", "ab1"),
        ("[concat(createArray(1), createArray(2, 3))]", [1, 2, 3]),
        ("[format('{0}-{1}-{0}', 'x', 2)]", "x-2-x"),
        ("[format('{{literal}} {0}', true())]", "{literal} True"),
        ("[toLower('ABC')]", "abc"),
        ("[toUpper('abc')]", "ABC"),
        ("[replace('a-b-c', '-', '')]", "abc"),
        ("[substring('scheduler', 3, 4)]", "edul"),
        ("[substring('scheduler', 5)]", "uler"),
        ("[string(12)]", "12"),
        ("[string(true())]", "True"),
        ("[string(createObject('a', 1))]", '{"a":1}'),
        ("[int('42')]", 42),
        ("[add(2, 3)]", 5),
        ("[sub(2, 3)]", -1),
        ("[mul(4, 3)]", 12),
        ("[div(-7, 2)]", -3),
        ("[mod(-7, 2)]", -1),
        ("[if(equals(1, 1), 'yes', 'no')]", "yes"),
        ("[if(equals('a', 'A'), 'yes', 'no')]", "no"),
        ("[and(true(), not(false()))]", True),
        ("[or(false(), false())]", False),
        ("[empty('')]", True),
        ("[empty(createArray())]", True),
        ("[empty(createObject('a', 1))]", False),
        ("[length('four')]", 4),
        ("[length(createArray(1, 2))]", 2),
        ("[union(createObject('a', 1), createObject('b', 2, 'a', 3))]", {"a": 3, "b": 2}),
        ("[union(createArray(1, 2), createArray(2, 3))]", [1, 2, 3]),
        ("[base64('one, two, three')]", "b25lLCB0d28sIHRocmVl"),
        ("[base64ToString('b25lLCB0d28sIHRocmVl')]", "one, two, three"),
        ("[split('a,b;c', createArray(',', ';'))]", ["a", "b", "c"]),
        ("[trim('  x  ')]", "x"),
        ("[padLeft('7', 3, '0')]", "007"),
        ("[json('{\"a\": [1, 2]}').a[1]]", 2),
        ("[createObject('Key', 'v').key]", "v"),
        ("[startsWith('Scheduler', 'sch')]", True),
        ("[contains('abc', 'b')]", True),
        ("[first(createArray('x', 'y'))]", "x"),
        ("[last('xyz')]", "z"),
        ("[coalesce(null(), 'second')]", "second"),
        ("[range(3, 2)]", [3, 4]),
        ("[less(1, 2)]", True),
        ("[greaterOrEquals('b', 'a')]", True),
        ("[dateTimeAdd('2023-01-01 00:00:00Z', 'P1Y')]", "2024-01-01T00:00:00Z"),
        ("[dateTimeAdd('2024-01-01 00:00:00Z', 'P1Y')]", "2024-12-31T00:00:00Z"),
        ("[dateTimeAdd('2024-02-01 00:00:00Z', 'P1M')]", "2024-03-02T00:00:00Z"),
        (
            "[dateTimeAdd('2026-03-02T09:00:00Z', '-PT90M', 'yyyy-MM-ddTHH:mm:ssZ')]",
            "2026-03-02T07:30:00Z",
        ),
        ("[dateTimeAdd('2026-03-02T09:00:00Z', 'PT1H', 'u')]", "2026-03-02 10:00:00Z"),
        ("[dateTimeToEpoch('2026-03-02T09:00:00Z')]", 1772442000),
        ("[dateTimeFromEpoch(1772442000)]", "2026-03-02T09:00:00Z"),
    ],
)
def test_functions(expression: str, expected: Any) -> None:
    assert value(expression) == expected


def test_deployment_functions_come_from_the_options() -> None:
    assert value("[resourceGroup().name]") == "rg-1"
    assert value("[resourceGroup().location]") == "westeurope"
    assert value("[subscription().subscriptionId]") == "sub-1"
    assert value("[resourceId('Microsoft.Web/sites', 'app')]") == (
        "/subscriptions/sub-1/resourceGroups/rg-1/providers/Microsoft.Web/sites/app"
    )
    assert value("[resourceId('other-rg', 'Microsoft.Web/sites/config', 'app', 'web')]") == (
        "/subscriptions/sub-1/resourceGroups/other-rg/providers/Microsoft.Web/sites/app/config/web"
    )
    assert value("[subscriptionResourceId('Microsoft.Resources/tags', 'default')]") == (
        "/subscriptions/sub-1/providers/Microsoft.Resources/tags/default"
    )


def test_nested_expressions_parameters_and_variables() -> None:
    document = {
        "parameters": {
            "prefix": {"type": "string", "defaultValue": "Nightly"},
            "hours": {"type": "array", "defaultValue": [1, 2]},
            "name": {
                "type": "string",
                "defaultValue": "[concat(toLower(parameters('prefix')), '-', "
                "string(length(parameters('hours'))))]",
            },
        },
        "variables": {
            "uri": "[format('https://{0}.example.com/{1}', parameters('name'), variables('path'))]",
            "path": "run",
        },
    }
    assert value("[variables('uri')]", document) == "https://nightly-2.example.com/run"
    assert value("[parameters('NAME')]", document) == "nightly-2"  # names are case-insensitive


def test_given_values_and_set_override_defaults_and_types_are_checked() -> None:
    document = {
        "parameters": {"count": {"type": "int", "defaultValue": 1, "allowedValues": [1, 2, 3]}}
    }
    assert value("[parameters('count')]", document, given={"count": 2}) == 2
    assert value("[parameters('count')]", document, sets=("count=3",)) == 3
    with pytest.raises(SourceError, match=r"parameters.count: 4 is not one of its allowedValues"):
        value("[parameters('count')]", document, sets=("count=4",))
    with pytest.raises(
        SourceError, match=r"parameters.count: is declared int but the value is a string"
    ):
        value("[parameters('count')]", document, given={"count": "two"})


def test_variable_and_property_copy_loops() -> None:
    document = {
        "variables": {
            "copy": [{"name": "slots", "count": 3, "input": "[mul(copyIndex('slots'), 15)]"}]
        }
    }
    assert value("[variables('slots')]", document) == [0, 15, 30]
    looped = {
        "copy": [{"name": "headers", "count": 2, "input": "[concat('h', copyIndex('headers', 1))]"}]
    }
    assert value(looped) == {"headers": ["h1", "h2"]}


def test_utc_now_only_as_a_parameter_default_and_only_with_an_import_time() -> None:
    document = {"parameters": {"start": {"type": "string", "defaultValue": "[utcNow('u')]"}}}
    at = Deployment("s", "r", "l", datetime(2026, 3, 2, 9, 30, tzinfo=UTC))
    assert value("[parameters('start')]", document, deployment=at) == "2026-03-02 09:30:00Z"
    with pytest.raises(
        Unresolved, match=r"parameter 'start' has no value and its default utcNow\('u'\)"
    ):
        value("[parameters('start')]", document)
    with pytest.raises(SourceError, match=r"utcNow\(\): is only allowed in a parameter's default"):
        value("[utcNow()]", deployment=at)
    plain = {"parameters": {"t": {"type": "string", "defaultValue": "[utcNow()]"}}}
    assert value("[parameters('t')]", plain, deployment=at) == "20260302T093000Z"


@pytest.mark.parametrize(
    ("expression", "named", "reason"),
    [
        (
            "[reference(resourceId('Microsoft.Web/sites', 'app')).hostNames[0]]",
            "reference(resourceId('Microsoft.Web/sites', 'app'))",
            "deployed state",
        ),
        (
            "[listKeys('rule', '2017-04-01').primaryKey]",
            "listKeys('rule', '2017-04-01')",
            "only Azure holds",
        ),
        ("[uniqueString(resourceGroup().id)]", "uniqueString(resourceGroup().id)", "unpublished"),
        ("[guid('a')]", "guid('a')", "unpublished"),
        ("[newGuid()]", "newGuid()", "random"),
        ("[resourceGroup().tags.owner]", "resourceGroup().tags", "tags are not known"),
    ],
)
def test_what_cannot_be_known_is_refused_with_the_expression_and_its_path(
    expression: str, named: str, reason: str
) -> None:
    with pytest.raises(Unresolved) as raised:
        value(expression)
    error = raised.value
    assert error.where == "resources[0].properties.x"
    assert error.expression == named
    assert reason in error.reason
    assert "--set 'resources[0].properties.x=VALUE'" in str(error)


def test_an_untaken_branch_may_hold_what_cannot_be_known() -> None:
    assert value("[if(false(), reference('x').y, 'fallback')]") == "fallback"


def test_a_set_path_replaces_the_value_in_the_template() -> None:
    assert (
        value("[reference('x').y]", sets=("resources[0].properties.x=https://given",))
        == "https://given"
    )
    assert value("[reference('x').y]", sets=("resources[0].properties.x:=[1]",)) == [1]


def test_missing_option_is_named() -> None:
    with pytest.raises(Unresolved, match="give --location"):
        value("[resourceGroup().location]", deployment=Deployment("s", "r"))


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("[concat('a']", "the expression ends too early"),
        ("[concat('a') extra]", "unexpected text"),
        ("[noSuchFunction(1)]", "noSuchFunction() is not a template function known here"),
        ("[parameters('missing')]", "declares no such parameter"),
        ("[add('a', 1)]", "add(): expects an integer, not a string"),
        ("[createArray(1)[5]]", "index 5 is outside the array"),
        ("[format('{0:N2}', 1)]", "only {n} placeholders"),
        ("[copyIndex()]", "outside a copy loop"),
    ],
)
def test_errors_name_the_path(expression: str, message: str) -> None:
    with pytest.raises(SourceError) as raised:
        value(expression)
    assert raised.value.where == "resources[0].properties.x"
    assert message in str(raised.value)


def test_parse_keeps_source_text_for_messages() -> None:
    node = parse("concat( 'a' , parameters('b').c[0] )")
    assert node.text == "concat( 'a' , parameters('b').c[0] )"


def test_a_variable_that_refers_to_itself_is_refused() -> None:
    with pytest.raises(SourceError, match="refers to itself"):
        value("[variables('a')]", {"variables": {"a": "[variables('b')]", "b": "[variables('a')]"}})
