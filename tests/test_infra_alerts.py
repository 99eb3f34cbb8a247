"""Checks of the alerts and the workbook in `infra/app/alerts.bicep`, without Azure.

An alert whose query names a metric the app does not emit never fires, silently: so every
query the template deploys (the alert rules' `.kql` files and the workbook's items, read
from the parse tree of the Bicep, through its `loadTextContent` calls) is checked against
what the app emits. Metric names, attributes and outcomes come from
`scheduler_lib/metrics/catalog.py` (only counters and histograms: the gauges are computed
at scrape time and never reach Azure Monitor); log messages and their custom dimensions
come from the `log.*(...)` calls in `scheduler_lib`, read with `ast`. Renaming a metric, an
attribute, an outcome or a message in the code makes these tests fail.

How the exporter names things (azure-monitor-opentelemetry-exporter, `_exporter.py`
`_convert_point_to_envelope`): the instrument's name is the metric's `Name`, its attributes
the `Properties`, a counter's value of one export interval the `Sum`, a histogram's count,
sum, min and max `ItemCount`, `Sum`, `Min`, `Max` (no buckets);
`tests/metrics/test_azure_export.py` runs the real exporter against a local endpoint.
"""

from __future__ import annotations

import ast
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import tree_sitter

from scheduler_lib.domain import HistoryStatus, Outcome
from scheduler_lib.metrics import catalog
from tests.test_infra import MAIN, ROOT, Scope, _named, _unwrap, declarations, properties

ALERTS = (MAIN.parent / "app" / "alerts.bicep").resolve()
MONITORING = ALERTS.parent / "monitoring"
#: The rules issue 23 asks for, by their `name` in `alertRules`.
EXPECTED_RULES = {"dispatcher-stalled", "overdue-jobs", "failure-rate", "poisoned-messages"}
#: Tabular operators a stage of these queries may start with (a typo there is caught).
OPERATORS = {"where", "extend", "project", "summarize", "top", "order", "sort", "take"}


# --- what the Bicep deploys -----------------------------------------------------------------


def evaluate(node: tree_sitter.Node, path: Path) -> Any:
    """Literals, arrays, objects, parameter defaults and `loadTextContent('<file>')`."""
    if node.type == "string":
        assert not any(c.type == "interpolation" for c in node.children), node.text
        return "".join(c.text.decode() for c in node.children if c.type == "string_content")
    if node.type == "number":
        return int(node.text.decode())
    if node.type == "array":
        return [evaluate(item, path) for item in _named(node)]
    if node.type == "object":
        return {key: evaluate(value, path) for key, value in properties(node).items()}
    if node.type == "identifier":
        return evaluate(declarations(path)["param", node.text.decode()], path)
    if node.type == "call_expression" and node.named_children[0].text == b"loadTextContent":
        (argument,) = _named(node.named_children[1])
        return (path.parent / evaluate(argument, path)).read_text()
    raise ValueError(f"cannot evaluate {node.type}: {node.text.decode()[:60]}")


@cache
def alert_rules() -> dict[str, dict[str, Any]]:
    rules = evaluate(declarations(ALERTS)["var", "alertRules"], ALERTS)
    return {rule["name"]: rule for rule in rules}


def resource_properties(symbol: str) -> dict[str, tree_sitter.Node]:
    return properties(properties(_unwrap(declarations(ALERTS)["resource", symbol]))["properties"])


@cache
def workbook() -> dict[str, Any]:
    return json.loads(evaluate(resource_properties("workbook")["serializedData"], ALERTS))


def workbook_queries() -> dict[str, str]:
    return {
        item["name"]: item["content"]["query"] for item in workbook()["items"] if item["type"] == 3
    }


def deployed_queries() -> dict[str, str]:
    rules = {f"rule:{name}": rule["query"] for name, rule in alert_rules().items()}
    return {**rules, **{f"workbook:{n}": q for n, q in workbook_queries().items()}}


# --- what the app emits ---------------------------------------------------------------------


@cache
def logged_messages() -> dict[str, set[str]]:
    """Constant messages of `log.<level>(...)` calls without arguments (the text that
    arrives as AppTraces' Message) -> the keys of their `extra`."""
    found: dict[str, set[str]] = {}
    for path in (ROOT / "scheduler_lib").rglob("*.py"):
        for call in ast.walk(ast.parse(path.read_text())):
            if not (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr in ("debug", "info", "warning", "error", "exception")
                and len(call.args) == 1
                and isinstance(call.args[0], ast.Constant)
                and isinstance(call.args[0].value, str)
            ):
                continue
            extra = next((k.value for k in call.keywords if k.arg == "extra"), None)
            keys = (
                {k.value for k in extra.keys if isinstance(k, ast.Constant)}
                if isinstance(extra, ast.Dict)
                else set()
            )
            found.setdefault(call.args[0].value, set()).update(keys)
    return found


def _literals(text: str) -> list[str]:
    return re.findall(r'"([^"]*)"', text)


def problems(query: str) -> list[str]:
    """What in `query` the app does not emit (empty: every name is real)."""
    query = re.sub(r"//[^\n]*", "", query)
    stages = [stage.strip() for stage in query.split("\n|")]
    found = [
        f"unknown operator: {s.split()[0]}" for s in stages[1:] if s.split()[0] not in OPERATORS
    ]
    names = re.findall(r'\bName\s*==\s*"([^"]*)"', query)
    for group in re.findall(r"\bName\s+in\s*\(([^)]*)\)", query):
        names += _literals(group)
    keys = set(re.findall(r"\bProperties\.(\w+)", query))
    keys |= set(re.findall(r"\bProperties\[\"(\w+)\"\]", query))
    table = stages[0]
    if table == "AppMetrics":
        if not names:
            found.append("names no metric")
        exported = {m.otel: m for m in (*catalog.COUNTERS, *catalog.HISTOGRAMS)}
        found += [f"not a metric the app exports: {n}" for n in names if n not in exported]
        metrics = [exported[n] for n in names if n in exported]
        labels = {label for m in metrics for label in m.labels}
        found += [f"not an attribute of {names}: {k}" for k in sorted(keys - labels)]
        outcomes = set()
        if catalog.OCCURRENCES in metrics:
            outcomes |= {o.value for o in Outcome}
        if catalog.ATTEMPTS in metrics:
            outcomes |= {HistoryStatus.COMPLETED.value, HistoryStatus.FAILED.value}
        compared = re.findall(r'(?i)outcome\)?\s*(?:==|!=|in)\s*(\([^)]*\)|"[^"]*")', query)
        words = {w for group in compared for w in _literals(group)}
        found += [f"not an outcome: {w}" for w in sorted(words - outcomes)]
    elif table == "AppTraces":
        messages = re.findall(r'\bMessage\s*==\s*"([^"]*)"', query)
        if not messages:
            found.append("names no log message")
        logged = logged_messages()
        found += [f"not a message the app logs: {m}" for m in messages if m not in logged]
        extras = set().union(*(logged.get(m, set()) for m in messages))
        found += [f"not a dimension of {messages}: {k}" for k in sorted(keys - extras)]
    else:
        found.append(f"not a table of the workspace the rules read: {table}")
    return found


# --- tests ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(deployed_queries()))
def test_every_deployed_query_names_only_what_the_app_emits(name: str) -> None:
    assert problems(deployed_queries()[name]) == []


@pytest.mark.parametrize(
    ("query", "problem"),
    [
        pytest.param(
            'AppMetrics\n| where Name == "scheduler.occurence"',
            "not a metric the app exports: scheduler.occurence",
            id="misspelt-metric",
        ),
        pytest.param(
            'AppMetrics\n| where Name == "scheduler.jobs.overdue"',
            "not a metric the app exports: scheduler.jobs.overdue",
            id="gauge-only-scraped",
        ),
        pytest.param(
            'AppMetrics\n| where Name == "scheduler.occurrences"\n| extend J = Properties.job',
            "not an attribute of ['scheduler.occurrences']: job",
            id="wrong-attribute",
        ),
        pytest.param(
            'AppMetrics\n| where Name == "scheduler.occurrences" and '
            'tostring(Properties.outcome) == "Poison"',
            "not an outcome: Poison",
            id="wrong-outcome",
        ),
        pytest.param(
            'AppTraces\n| where Message == "overdue job reindexed"',
            "not a message the app logs: overdue job reindexed",
            id="wrong-message",
        ),
        pytest.param(
            'AppTraces\n| where Message == "overdue job re-indexed"\n| extend T = Properties.tag',
            "not a dimension of ['overdue job re-indexed']: tag",
            id="wrong-dimension",
        ),
        pytest.param(
            'AppMetrics\n| wehre Name == "scheduler.occurrences"',
            "unknown operator: wehre",
            id="wrong-operator",
        ),
        pytest.param("customMetrics\n| take 1", "not a table", id="wrong-table"),
    ],
)
def test_a_name_the_app_does_not_emit_is_reported(query: str, problem: str) -> None:
    assert any(found.startswith(problem) for found in problems(query)), problems(query)


@pytest.mark.parametrize("name", sorted(deployed_queries()))
def test_renaming_any_metric_or_message_a_deployed_query_names_is_caught(name: str) -> None:
    """The check reads the real queries: each metric name or message in them, changed,
    is reported (what a rename in the code would look like from the query's side)."""
    query = deployed_queries()[name]
    named = re.findall(r'\b(?:Name|Message)\s*==\s*"([^"]*)"', query)
    assert named
    for word in named:
        assert problems(query.replace(f'"{word}"', f'"{word}x"')) != [], word
    for key in set(re.findall(r"\bProperties\.(\w+)", query)):
        assert problems(query.replace(f"Properties.{key}", f"Properties.{key}x")) != [], key
    for word in {w for w in (o.value for o in Outcome) if f'"{w}"' in query}:
        assert problems(query.replace(f'"{word}"', f'"{word}x"')) != [], word


def test_the_four_rules_watch_the_signals_the_app_sends() -> None:
    rules = alert_rules()
    assert set(rules) == EXPECTED_RULES
    ticks = catalog.DISPATCHER_TICKS.otel
    stalled = rules["dispatcher-stalled"]
    # No heartbeat row in the window is the alert: count the rows, fire below one.
    assert f'Name == "{ticks}"' in stalled["query"]
    assert (stalled["timeAggregation"], stalled["operator"], stalled["threshold"]) == (
        "Count", "LessThan", 1,
    )  # fmt: skip
    overdue = rules["overdue-jobs"]
    assert (overdue["timeAggregation"], overdue["operator"], overdue["threshold"]) == (
        "Count", "GreaterThan", 0,
    )  # fmt: skip
    assert '"Poisoned"' in rules["poisoned-messages"]["query"]
    assert rules["failure-rate"]["threshold"] == 10  # the parameter's default


@pytest.mark.parametrize("name", sorted(EXPECTED_RULES))
def test_a_measured_rule_measures_a_column_its_query_makes(name: str) -> None:
    rule = alert_rules()[name]
    if rule["measure"]:
        assert re.search(rf"\b{rule['measure']}\s*=", rule["query"])
        assert rule["timeAggregation"] in ("Maximum", "Total", "Average", "Minimum")
    else:
        assert rule["timeAggregation"] == "Count"


def test_every_file_of_monitoring_is_deployed() -> None:
    text = ALERTS.read_text()
    loaded = set(re.findall(r"loadTextContent\('monitoring/([^']+)'\)", text))
    assert loaded == {p.name for p in MONITORING.iterdir()}


def test_rules_read_the_workspace_and_deploy_before_its_tables_exist() -> None:
    rule = properties(_unwrap(declarations(ALERTS)["resource", "rules"]))
    assert rule["kind"].text == b"'LogAlert'"
    props = properties(rule["properties"])
    assert [s.text for s in _named(props["scopes"])] == [b"workspaceId"]
    assert props["skipQueryValidation"].text == b"true"
    _, alerts = Scope(MAIN).module("./app/alerts.bicep")
    assert alerts.args["workspaceId"][0].text == b"logAnalytics.outputs.resourceId"


def test_action_group_only_when_an_email_or_a_webhook_is_given() -> None:
    decls = declarations(ALERTS)
    group = decls["resource", "actionGroup"]
    assert group.type == "if_statement" and _named(group)[0].text == b"(hasReceivers)"
    assert decls["var", "hasReceivers"].text == b"!empty(alertEmail) || !empty(alertWebhookUrl)"
    assert evaluate(decls["param", "alertEmail"], ALERTS) == ""
    assert evaluate(decls["param", "alertWebhookUrl"], ALERTS) == ""
    # A webhook URL often carries its key: never in the deployment's parameters shown.
    for path in (ALERTS, MAIN):
        webhook = declarations(path)["param", "alertWebhookUrl"].parent
        assert b"@secure()" in webhook.prev_named_sibling.text
    actions = properties(resource_properties("rules")["actions"])["actionGroups"]
    assert actions.text.decode().startswith("hasReceivers ?")


def test_main_passes_the_alert_parameters_that_azd_reads_from_the_environment() -> None:
    _, alerts = Scope(MAIN).module("./app/alerts.bicep")
    passed = {name: node.text.decode() for name, (node, _) in alerts.args.items()}
    assert passed["alertEmail"] == "alertEmail"
    assert passed["alertWebhookUrl"] == "alertWebhookUrl"
    assert passed["failureRatePercent"] == "alertFailureRatePercent"
    parameters = json.loads((MAIN.parent / "main.parameters.json").read_text())["parameters"]
    assert parameters["alertEmail"]["value"] == "${ALERT_EMAIL=}"
    assert parameters["alertWebhookUrl"]["value"] == "${ALERT_WEBHOOK_URL=}"


def test_resource_types_use_released_api_versions() -> None:
    """GA versions (no -preview), none older than the first with every property used
    (scheduledQueryRules' skipQueryValidation, workbooks' kind `shared` only)."""
    minimum = {
        "Microsoft.Insights/actionGroups": "2023-01-01",
        "Microsoft.Insights/scheduledQueryRules": "2023-12-01",
        "Microsoft.Insights/workbooks": "2023-06-01",
    }
    used = dict(re.findall(r"resource \w+ '([\w./]+)@([\w-]+)'", ALERTS.read_text()))
    assert set(used) == set(minimum)
    for kind, version in used.items():
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", version) and version >= minimum[kind], kind


def test_workbook_items_query_the_workspace_over_the_chosen_time_range() -> None:
    book = workbook()
    assert book["version"] == "Notebook/1.0"
    parameters = {
        p["name"]
        for item in book["items"]
        if item["type"] == 9
        for p in item["content"]["parameters"]
    }
    queries = [item["content"] for item in book["items"] if item["type"] == 3]
    assert {"lateness", "outcomes", "worst-jobs"} <= set(workbook_queries())
    for content in queries:
        assert content["resourceType"] == "microsoft.operationalinsights/workspaces"
        assert content["timeContextFromParameter"] in parameters
        for used in re.findall(r"\{(\w+)(?::\w+)?\}", content["query"]):
            assert used in parameters
    lateness = workbook_queries()["lateness"]
    assert f'"{catalog.START_LATENESS.otel}"' in lateness and "percentilew(" in lateness


def test_every_field_the_rule_loop_reads_is_in_every_rule() -> None:
    """What the Bicep compiler would refuse: `rule.<field>` missing from an entry."""
    body = declarations(ALERTS)["resource", "rules"].text.decode()
    used = set(re.findall(r"\brule\.(\w+)", body))
    assert used and all(used <= set(rule) for rule in alert_rules().values())


@pytest.mark.parametrize("module", ["./app/alerts.bicep"])
def test_main_passes_every_required_parameter_and_no_unknown_one(module: str) -> None:
    _, scope = Scope(MAIN).module(module)
    declared = {name: node for (kind, name), node in scope.decls.items() if kind == "param"}
    required = {name for name, node in declared.items() if node.type == "type"}
    assert set(scope.args) <= set(declared)
    assert required <= set(scope.args)
