"""Checks of the Azure deployment files that run without Azure.

Neither the Bicep compiler nor azd can be installed here, so this file is what stands between a
typo in `infra/` and a failed `azd up`: every `.bicep` file must parse (tree-sitter-bicep), and
the template must agree with the code's single source of truth, `scheduler_lib/config.py`:
every app setting the code reads is set (unless allow-listed below with its reason), every
table and queue is created, and the Python version is the project's. Values are read from the
parse tree, following variables and module parameters, not matched as text.
"""

from __future__ import annotations

import fnmatch
import json
import re
import tomllib
from dataclasses import dataclass, field
from datetime import timedelta
from functools import cache
from pathlib import Path

import pytest
import tree_sitter
import tree_sitter_bicep
import yaml

from scheduler_lib import config
from scheduler_lib.store.execution_queue import EARLY_DELIVERY

ROOT = Path(__file__).resolve().parent.parent
INFRA = ROOT / "infra"
MAIN = INFRA / "main.bicep"
BICEP_FILES = sorted(INFRA.rglob("*.bicep"))

#: Settings the code reads that the template deliberately does not set, and why.
NOT_SET_IN_AZURE = {
    "SCHEDULER_BENCH_COUNT_CALLS": "a benchmark's switch (bench/cost.py), never a deployment's",
    "SCHEDULER_DASHBOARD_EASY_AUTH": "off unless the operator turns on App Service authentication "
    "in front of the dashboard (README, The dashboard): the template does not",
    "AzureWebJobsStorage": "shared-key access is disabled on the storage account: the app reaches "
    "it with its managed identity through the AzureWebJobsStorage__* settings instead",
    "SCHEDULER_DISPATCH_WORKERS": "the local host's dispatch workers: in Azure the Functions "
    "host scales the dispatch function over instances",
    "SCHEDULER_EXECUTOR_CONCURRENCY": "the local host's executor slots: in Azure host.json's "
    "batchSize + newBatchThreshold per instance, and the host adds instances",
    "SCHEDULER_STORAGE_PREFIX": "defaults to empty: in Azure the storage account belongs to the "
    "scheduler alone, so tables and queues keep their plain names",
    "SCHEDULER_TRUSTED_PROXIES": "empty: in Azure App Service's front end is the only hop, known "
    "without a setting (WEBSITE_HOSTNAME); an operator who adds Front Door sets it",
    "SCHEDULER_PUBLIC_URL": "App Service's own host name (WEBSITE_HOSTNAME) is the public URL; "
    "an operator with a custom domain or Front Door sets it",
    "SCHEDULER_METRICS_TOKEN": "unset, GET /api/metrics is closed (404): an operator who scrapes "
    "it sets the token (docs/metrics.md), best as a Key Vault reference",
    "SCHEDULER_STORAGE_TRANSPORT": "the default (pooled) is what the project measures and "
    "tests; requests is an operator's way back, set by hand (docs/settings.md)",
    "SCHEDULER_METRICS_COLLECTION_LABELS": "the default (50) bounds the series; docs/metrics.md",
    "SCHEDULER_METRICS_JOB_LABELS": "the default (0: no job has a series of its own) is the "
    "cheapest; docs/metrics.md",
}
#: Settings the template sets ahead of the code (announced by the lead), and why.
SET_AHEAD_OF_CODE = {
    "SCHEDULER_OAUTH_AUTHORITY": "Entra ID authority for ActiveDirectoryOAuth actions",
}
#: Identity-based host storage and Application Insights auth cannot work without these.
REQUIRED_PLATFORM_SETTINGS = {
    "AzureWebJobsStorage__credential": "managedidentity",
    "AzureWebJobsStorage__queueServiceUri": None,
    "AzureWebJobsStorage__tableServiceUri": None,
    "AzureWebJobsStorage__blobServiceUri": None,
    "APPLICATIONINSIGHTS_AUTHENTICATION_STRING": None,
}
#: App settings that Flex Consumption rejects or ignores (runtime lives in functionAppConfig).
FLEX_DEPRECATED_SETTINGS = {
    "FUNCTIONS_WORKER_RUNTIME", "FUNCTIONS_EXTENSION_VERSION", "FUNCTIONS_WORKER_PROCESS_COUNT",
    "FUNCTIONS_MAX_HTTP_CONCURRENCY", "SCM_DO_BUILD_DURING_DEPLOYMENT", "ENABLE_ORYX_BUILD",
    "WEBSITE_RUN_FROM_PACKAGE", "WEBSITE_CONTENTAZUREFILECONNECTIONSTRING", "WEBSITE_CONTENTSHARE",
    "WEBSITE_MAX_DYNAMIC_APPLICATION_SCALE_OUT", "WEBSITE_NODE_DEFAULT_VERSION",
}  # fmt: skip
ROLE_IDS = {
    "Storage Blob Data Owner": "b7e6dc6d-f1e8-4753-8033-0f276bb0955b",
    "Storage Queue Data Contributor": "974c5e8b-45b9-4653-ba55-5f855dd0fb88",
    "Storage Table Data Contributor": "0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3",
    "Key Vault Secrets User": "4633458b-17de-408a-b874-0445c86b69e6",
    "Azure Service Bus Data Sender": "69a216fc-b8fb-44d8-bc22-1f3c2cd27a39",
    "Monitoring Metrics Publisher": "3913510d-42f4-4e42-8a64-420c390055eb",
}


# --- a small reader of Bicep parse trees --------------------------------------------------------

_PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bicep.language()))


def syntax_errors(source: bytes) -> list[str]:
    """Every ERROR or MISSING node, as `line:column type`."""
    found: list[str] = []
    stack = [_PARSER.parse(source).root_node]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            found.append(f"{node.start_point[0] + 1}:{node.start_point[1] + 1} {node.type}")
        stack.extend(node.children)
    return found


def _named(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    return [c for c in node.named_children if c.type not in ("comment", "decorators")]


def _key(prop: tree_sitter.Node) -> str:
    """The name of an object property, whether written `name:` or `'name':`."""
    first = prop.named_children[0]
    return first.text.decode() if first.type == "identifier" else string_literal(first)


def string_literal(node: tree_sitter.Node) -> str:
    assert node.type == "string" and not any(c.type == "interpolation" for c in node.children)
    return "".join(c.text.decode() for c in node.children if c.type == "string_content")


def properties(obj: tree_sitter.Node) -> dict[str, tree_sitter.Node]:
    """Object literal -> {key: value node}."""
    assert obj.type == "object", obj.type
    return {
        _key(p): p.named_children[-1] for p in obj.named_children if p.type == "object_property"
    }


@dataclass
class Scope:
    """One Bicep file, plus the argument nodes its caller passed to its params."""

    path: Path
    args: dict[str, tuple[tree_sitter.Node, Scope]] = field(default_factory=dict)

    @property
    def decls(self) -> dict[tuple[str, str], tree_sitter.Node]:
        return declarations(self.path)

    def lookup(self, name: str) -> tuple[tree_sitter.Node, Scope]:
        if ("var", name) in self.decls:
            return self.decls["var", name], self
        if name in self.args:
            return self.args[name]
        default = self.decls.get(("param", name))
        if default is not None and default.type != "type":
            return default, self
        raise LookupError(f"{self.path.name}: no variable or passed parameter {name!r}")

    def module(self, relative: str) -> tuple[tree_sitter.Node, Scope]:
        """The `params` object of `module x '<relative>'` and the module file's scope."""
        for (kind, _), body in self.decls.items():
            if kind == "module" and module_reference(body) == relative:
                params = properties(_unwrap(body))["params"]
                args = {k: (v, self) for k, v in properties(params).items()}
                return params, Scope((self.path.parent / relative).resolve(), args)
        raise LookupError(f"{self.path.name} has no module {relative!r}")


@cache
def declarations(path: Path) -> dict[tuple[str, str], tree_sitter.Node]:
    """(kind, symbol) -> value node, for var, param (default), module, resource and output."""
    root = _PARSER.parse(path.read_bytes()).root_node
    kinds = {
        "variable_declaration": "var",
        "parameter_declaration": "param",
        "module_declaration": "module",
        "resource_declaration": "resource",
        "output_declaration": "output",
    }
    out: dict[tuple[str, str], tree_sitter.Node] = {}
    for decl in root.named_children:
        if decl.type in kinds:
            out[kinds[decl.type], decl.named_children[0].text.decode()] = decl.named_children[-1]
    return out


def module_reference(body: tree_sitter.Node) -> str:
    """The path, registry reference or type of the module or resource whose value is `body`."""
    return string_literal(body.parent.named_children[1])


def _unwrap(node: tree_sitter.Node) -> tree_sitter.Node:
    """The object inside `if (...) {...}` / `[for ...: {...}]` / `(...)`."""
    while node.type in ("if_statement", "for_statement", "parenthesized_expression"):
        node = _named(node)[-1]
    return node


def resolve(node: tree_sitter.Node, scope: Scope) -> object:
    """A string, list or dict value, following variables and module arguments."""
    if node.type == "identifier":
        return resolve(*scope.lookup(node.text.decode()))
    if node.type == "string":
        parts = []
        for child in node.children:
            if child.type == "string_content":
                parts.append(child.text.decode())
            elif child.type == "interpolation":
                parts.append(str(resolve(_named(child)[0], scope)))
        return "".join(parts)
    if node.type == "array":
        return [resolve(item, scope) for item in _named(node)]
    if node.type == "object":
        return {k: resolve(v, scope) for k, v in properties(node).items()}
    if node.type == "parenthesized_expression":
        return resolve(_named(node)[0], scope)
    if node.type == "boolean":
        return node.text.decode() == "true"
    raise ValueError(f"{scope.path.name}: cannot evaluate {node.type}: {node.text.decode()[:60]}")


def setting_names(
    node: tree_sitter.Node, scope: Scope
) -> dict[str, tuple[tree_sitter.Node, Scope]]:
    """The keys an app-settings expression can produce: objects, union(), ternaries, names."""
    if node.type == "object":
        return {k: (v, scope) for k, v in properties(node).items()}
    if node.type == "identifier":
        return setting_names(*scope.lookup(node.text.decode()))
    if node.type == "call_expression" and node.named_children[0].text.decode() == "union":
        merged: dict[str, tuple[tree_sitter.Node, Scope]] = {}
        for arg in _named(node.named_children[1]):
            merged.update(setting_names(arg, scope))
        return merged
    if node.type in ("ternary_expression", "parenthesized_expression"):
        merged = {}
        for branch in _named(node)[1:] if node.type == "ternary_expression" else _named(node):
            merged.update(setting_names(branch, scope))
        return merged
    raise ValueError(f"{scope.path.name}: app settings from {node.type}: {node.text.decode()[:60]}")


# --- what the template says -----------------------------------------------------------------------


def function_app() -> tuple[dict[str, tree_sitter.Node], Scope]:
    """The params of the Function App (AVM web/site module in app/api.bicep) and their scope."""
    _, api = Scope(MAIN).module("./app/api.bicep")
    return properties(properties(_unwrap(api.decls["module", "api"]))["params"]), api


@cache
def app_settings() -> dict[str, tuple[tree_sitter.Node, Scope]]:
    """Every app setting name the template gives the Function App -> (value node, scope)."""
    site, api = function_app()
    return setting_names(site["appSettingsKeyValuePairs"], api)


def storage_module_args() -> tuple[list[str], list[str]]:
    """(table names, queue names) that main.bicep has app/storage-data.bicep create."""
    _, data = Scope(MAIN).module("./app/storage-data.bicep")
    tables, queues = resolve(*data.args["tableNames"]), resolve(*data.args["queueNames"])
    # The module must create a resource for each name it receives.
    loops = [d.parent.text.decode() for (k, _), d in data.decls.items() if k == "resource"]
    assert any("tableServices/tables@" in t and "in tableNames:" in t for t in loops)
    assert any("queueServices/queues@" in t and "in queueNames:" in t for t in loops)
    return tables, queues  # type: ignore[return-value]


# --- tests ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", BICEP_FILES, ids=lambda p: str(p.relative_to(INFRA)))
def test_bicep_file_parses_without_errors(path: Path) -> None:
    assert syntax_errors(path.read_bytes()) == []


@pytest.mark.parametrize(
    "snippet",
    [
        pytest.param("param p string =\n", id="param-without-value"),
        pytest.param("var x = {\n  a: 'b'\n", id="unclosed-object"),
        pytest.param("resource r 'a@1' = {\n  name: 'a' 'b'\n}\n", id="two-values-one-key"),
        pytest.param("var s = '${a'\n", id="unclosed-interpolation"),
    ],
)
def test_parser_reports_broken_bicep(snippet: str) -> None:
    assert syntax_errors(snippet.encode()) != []


def test_expected_bicep_files_exist() -> None:
    assert MAIN in BICEP_FILES and len(BICEP_FILES) > 1


@pytest.mark.parametrize("path", BICEP_FILES, ids=lambda p: str(p.relative_to(INFRA)))
def test_module_references_resolve(path: Path) -> None:
    """Local module paths exist; registry modules are pinned to an exact version."""
    for (kind, name), body in declarations(path).items():
        if kind != "module":
            continue
        ref = module_reference(body)
        if ref.startswith("br/public:"):
            assert re.fullmatch(r"br/public:avm/[a-z0-9/-]+:\d+\.\d+\.\d+", ref), (name, ref)
        else:
            assert (path.parent / ref).is_file(), f"module {name}: {ref} does not exist"


def test_every_setting_the_app_reads_is_in_the_catalog() -> None:
    """`APP_SETTINGS` is what the template and the docs are checked against, so a setting the
    code reads but the catalog misses escapes both checks (SCHEDULER_DASHBOARD_EASY_AUTH did).
    The import command's own variables (`migrate/`: SCHEDULER_URL, ...) are a client's, not
    the app's."""
    source = Path(config.__file__).parent
    read = {
        name
        for path in source.rglob("*.py")
        if "migrate" not in path.relative_to(source).parts
        for name in re.findall(r'"(SCHEDULER_[A-Z_]+)"', path.read_text())
    }
    assert read - set(config.APP_SETTINGS) == set()


@pytest.mark.parametrize("name", sorted(config.APP_SETTINGS))
def test_every_app_setting_the_code_reads_is_set_or_allow_listed(name: str) -> None:
    if name in NOT_SET_IN_AZURE:
        assert name not in app_settings(), f"{name} is allow-listed but the template sets it"
    else:
        assert name in app_settings(), f"{name} is read by the code but not set by infra"


def test_allow_lists_are_current() -> None:
    assert set(NOT_SET_IN_AZURE) <= set(config.APP_SETTINGS)
    for name in app_settings():
        if name.startswith("SCHEDULER_"):
            assert name in config.APP_SETTINGS or name in SET_AHEAD_OF_CODE, f"{name}: typo?"


@pytest.mark.parametrize("name", sorted(REQUIRED_PLATFORM_SETTINGS))
def test_identity_based_host_settings_are_set(name: str) -> None:
    assert name in app_settings()
    if (expected := REQUIRED_PLATFORM_SETTINGS[name]) is not None:
        assert resolve(*app_settings()[name]) == expected


def test_no_setting_that_flex_consumption_rejects() -> None:
    assert FLEX_DEPRECATED_SETTINGS.isdisjoint(app_settings())


def test_api_keys_come_from_key_vault_through_the_user_assigned_identity() -> None:
    node, _ = app_settings()["SCHEDULER_API_KEYS"]
    assert node.text.decode().startswith("'@Microsoft.KeyVault(SecretUri=${")
    site, _ = function_app()
    identities = properties(site["managedIdentities"])["userAssignedResourceIds"]
    assert site["keyVaultAccessIdentityResourceId"].text.decode() == "identityId"
    assert [i.text.decode() for i in _named(identities)] == ["identityId"]


def test_execution_queue_setting_names_the_created_queue() -> None:
    _, queues = storage_module_args()
    value = resolve(*app_settings()["SCHEDULER_EXECUTION_QUEUE"])
    assert value == config.EXECUTION_QUEUE == queues[0]


def test_dispatch_queue_setting_names_the_created_queue() -> None:
    _, queues = storage_module_args()
    value = resolve(*app_settings()["SCHEDULER_DISPATCH_QUEUE"])
    assert value == config.DISPATCH_QUEUE == config.Settings().dispatch_queue_name
    assert value in queues and f"{value}-poison" in queues


def test_every_table_and_queue_the_code_uses_is_created() -> None:
    tables, queues = storage_module_args()
    azure = config.Settings(storage_prefix="")
    assert sorted(tables) == sorted(azure.table_name(t) for t in config.TABLES)
    assert sorted(queues) == sorted(
        [
            azure.execution_queue_name,
            azure.poison_queue_name,
            azure.dispatch_queue_name,
            f"{azure.dispatch_queue_name}-poison",
            azure.notify_queue_name,
            f"{azure.notify_queue_name}-poison",
        ]
    )
    assert all(re.fullmatch(r"[A-Za-z][A-Za-z0-9]{2,62}", t) for t in tables)
    assert all(re.fullmatch(r"[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]", q) for q in queues)


def test_python_runtime_matches_the_project() -> None:
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    project_version = re.search(r"\d+\.\d+", requires).group()  # type: ignore[union-attr]
    site, api = function_app()
    runtime = properties(site["functionAppConfig"])["runtime"]
    assert resolve(runtime, api) == {"name": "python", "version": project_version}


def assigned_role_ids(path: Path) -> set[str]:
    """Role definition ids that the roleAssignments resources of one file assign."""
    scope, found = Scope(path), set()
    for (kind, _), body in declarations(path).items():
        if kind != "resource" or "/roleAssignments@" not in module_reference(body):
            continue
        role = properties(properties(_unwrap(body))["properties"])["roleDefinitionId"]
        # resourceId('Microsoft.Authorization/roleDefinitions', <id>): follow <id>, and
        # through a loop variable (`for roleId in storageRoleIds`) to the list it walks.
        (id_arg,) = _named(role.named_children[1])[1:]
        loop = body if body.type == "for_statement" else None
        if loop is not None and id_arg.text == _named(loop)[0].text:
            found |= set(resolve(_named(loop)[1], scope))  # type: ignore[arg-type]
        else:
            found.add(str(resolve(id_arg, scope)))
    return found


@pytest.mark.parametrize("role", sorted(ROLE_IDS), ids=lambda r: r.replace(" ", "-"))
def test_template_assigns_role(role: str) -> None:
    assigned = set().union(*(assigned_role_ids(p) for p in INFRA.glob("app/*.bicep")))
    assert ROLE_IDS[role] in assigned


def test_azure_yaml_points_at_existing_paths() -> None:
    spec = yaml.safe_load((ROOT / "azure.yaml").read_text())
    infra = spec.get("infra", {})
    assert (ROOT / infra.get("path", "infra") / f"{infra.get('module', 'main')}.bicep").is_file()
    (name, service), *others = spec["services"].items()
    assert (
        others == [] and service["host"] == "function" and service["language"] in ("python", "py")
    )
    project = ROOT / service["project"]
    assert (project / "host.json").is_file() and (project / "requirements.txt").is_file()
    # azd finds the app to deploy to by its `azd-service-name` tag.
    site, api = function_app()
    assert "'azd-service-name': serviceName" in site["tags"].text.decode()
    assert resolve(*api.lookup("serviceName")) == name


def test_main_parameters_match_main_bicep() -> None:
    doc = json.loads((INFRA / "main.parameters.json").read_text())
    declared = {n for k, n in declarations(MAIN) if k == "param"}
    assert set(doc["parameters"]) <= declared
    # azd re-reads the current API keys from the vault that the last provision reported.
    keys = doc["parameters"]["schedulerApiKeys"]["value"]
    vault_var, secret = re.fullmatch(
        r"\$\(secretOrRandomPassword \$\{(\w+)\} ([\w-]+)\)", keys
    ).groups()
    assert ("output", vault_var) in declarations(MAIN)
    assert secret == resolve(*Scope(MAIN).lookup("apiKeysSecretName"))


def test_host_json() -> None:
    host = json.loads((ROOT / "host.json").read_text())
    assert host["version"] == "2.0"
    assert host["extensionBundle"] == {
        "id": "Microsoft.Azure.Functions.ExtensionBundle",
        "version": "[4.*, 5.0.0)",
    }
    queues = host["extensions"]["queues"]
    assert queues["maxDequeueCount"] == 5 and queues["messageEncoding"] == "base64"
    sampling = host["logging"]["applicationInsights"]["samplingSettings"]
    assert sampling["isEnabled"] and "Request" in sampling["excludedTypes"]
    hours, minutes, seconds = map(int, host["functionTimeout"].split(":"))
    assert 60 < hours * 3600 + minutes * 60 + seconds <= 30 * 60  # > one 60 s action


def test_queue_trigger_picks_up_an_early_delivery_in_time_and_the_devhost_keeps_up() -> None:
    """A scheduled occurrence is visible at least EARLY_DELIVERY before its second: the
    trigger's longest idle poll must fit in it. The worker has a thread for each message the
    trigger runs at once; the local host, standing for as many instances as the load needs,
    runs at least as many."""
    queues = json.loads((ROOT / "host.json").read_text())["extensions"]["queues"]
    hours, minutes, seconds = map(int, queues["maxPollingInterval"].split(":"))
    assert timedelta(hours=hours, minutes=minutes, seconds=seconds) <= EARLY_DELIVERY
    in_flight = queues["batchSize"] + queues["newBatchThreshold"]
    assert config.Settings().executor_concurrency >= in_flight
    api = (INFRA / "app/api.bicep").read_text()
    threads = re.search(r"PYTHON_THREADPOOL_THREAD_COUNT: '(\d+)'", api)
    assert threads and in_flight < int(threads.group(1)) <= 32


def test_local_settings_example() -> None:
    local = json.loads((ROOT / "local.settings.json.example").read_text())
    assert local["IsEncrypted"] is False
    values = local["Values"]
    assert values["FUNCTIONS_WORKER_RUNTIME"] == "python"
    assert values["AzureWebJobsStorage"] == "UseDevelopmentStorage=true"
    assert values["SCHEDULER_EXECUTION_QUEUE"] == config.EXECUTION_QUEUE
    assert values["SCHEDULER_DISPATCH_QUEUE"] == config.DISPATCH_QUEUE  # the trigger's %name%
    assert values["SCHEDULER_API_KEYS"]
    assert set(values) - {"FUNCTIONS_WORKER_RUNTIME"} <= set(config.APP_SETTINGS)
    config.Settings.from_env(values)  # every value is one the code accepts


def test_funcignore_keeps_the_app_and_drops_the_rest() -> None:
    patterns = {
        line.strip()
        for line in (ROOT / ".funcignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {".venv", "tests", "bench", "infra", ".azurite", "docs", "node_modules"} <= patterns
    kept = {"function_app.py", "host.json", "requirements.txt", "scheduler_lib"}
    assert kept.isdisjoint(patterns)


#: Roles whose data actions include sending a queue message (messages/add/action).
QUEUE_SENDER_ROLES = {
    "974c5e8b-45b9-4653-ba55-5f855dd0fb88": "Storage Queue Data Contributor",
    "c6a89b2d-59bc-44d0-9896-0f6e12d7b80a": "Storage Queue Data Message Sender",
}


def test_identity_based_queue_and_service_bus_actions_reach_what_the_template_grants() -> None:
    """A Storage-queue action without a sasToken sends with the app identity to the app's own
    account: the identity holds a role that may add messages there, and the setting that
    limits identity-based sends names exactly that account (and the namespace the template
    creates, on which the identity is a Service Bus Data Sender)."""
    assert assigned_role_ids(INFRA / "app" / "rbac.bicep") & set(QUEUE_SENDER_ROLES)
    settings = app_settings()
    accounts, _ = settings["SCHEDULER_IDENTITY_STORAGE_ACCOUNTS"]
    assert accounts.text.decode() == "storage.outputs.name"
    namespaces, _ = settings["SCHEDULER_IDENTITY_SERVICEBUS_NAMESPACES"]
    assert "serviceBus!.outputs.name" in namespaces.text.decode()
    assert ROLE_IDS["Azure Service Bus Data Sender"] in assigned_role_ids(
        INFRA / "app" / "servicebus.bicep"
    )


def test_managed_identity_audiences_stay_closed_unless_the_operator_opens_them() -> None:
    """`ManagedServiceIdentity` HTTP actions mint the app identity's tokens: the template
    sets SCHEDULER_IDENTITY_AUDIENCES from a parameter that is empty by default (the type is
    refused), which azd fills from the environment variable of the same name when set."""
    value, scope = app_settings()["SCHEDULER_IDENTITY_AUDIENCES"]
    assert value.text.decode() == "identityAudiences"
    assert resolve(value, scope) == ""
    doc = json.loads((INFRA / "main.parameters.json").read_text())
    assert doc["parameters"]["identityAudiences"]["value"] == "${SCHEDULER_IDENTITY_AUDIENCES=}"


# --- deployment hygiene ------------------------------------------------------------------------


def module_params(scope: Scope, symbol: str) -> dict[str, tree_sitter.Node]:
    """The `params` object of `module <symbol> ...` in `scope`'s file."""
    return properties(properties(_unwrap(scope.decls["module", symbol]))["params"])


def test_basic_auth_publishing_is_off_for_scm_and_ftp() -> None:
    """Deployments go through the identity (azd, `func publish` with Entra ID); the site's
    SCM and FTP basic-auth credentials would be a second, password-based way in."""
    site, api = function_app()
    policies = resolve(site["basicPublishingCredentialsPolicies"], api)
    assert sorted(policies, key=lambda p: p["name"]) == [  # type: ignore[arg-type]
        {"name": "ftp", "allow": False},
        {"name": "scm", "allow": False},
    ]


def test_storage_account_is_identity_first_and_not_replicated_across_tenants() -> None:
    params = module_params(Scope(MAIN), "storage")
    scope = Scope(MAIN)
    assert resolve(params["allowSharedKeyAccess"], scope) is False
    assert resolve(params["allowCrossTenantReplication"], scope) is False
    assert resolve(params["defaultToOAuthAuthentication"], scope) is True


def test_key_vault_purge_protection_is_on_unless_turned_off() -> None:
    """Purge protection defaults to on (a deleted vault and its keys can be recovered for
    the retention period); a throwaway environment may turn it off to reuse the name."""
    main = Scope(MAIN)
    default = main.decls["param", "keyVaultPurgeProtection"]
    assert resolve(default, main) is True
    _, vault = main.module("./app/keyvault.bicep")
    assert vault.args["enablePurgeProtection"][0].text.decode() == "keyVaultPurgeProtection"
    props = properties(properties(vault.decls["resource", "vault"])["properties"])
    # Key Vault refuses `false` (purge protection cannot be turned off): off means unset.
    assert props["enablePurgeProtection"].text.decode() == ("enablePurgeProtection ? true : null")
    assert resolve(*vault.lookup("enablePurgeProtection")) is True


#: Made by the tools a developer runs here; none of them belongs in the app's package.
TOOL_OUTPUT = (
    ".schemathesis", ".hypothesis", ".pytest_cache", ".ruff_cache", ".mypy_cache", ".coverage",
    "htmlcov", ".devcontainer", ".idea", ".vscode", ".azurite", ".python_packages",
)  # fmt: skip


def test_funcignore_drops_everything_but_the_app() -> None:
    """Every top-level entry of the working copy, and every tool's output directory, is left
    out of the package except the app itself (and .funcignore, which the publisher reads)."""
    patterns = [
        line.strip().rstrip("/")
        for line in (ROOT / ".funcignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    kept = {"function_app.py", "host.json", "requirements.txt", "scheduler_lib", ".funcignore"}
    entries = {p.name for p in ROOT.iterdir()} | set(TOOL_OUTPUT)
    shipped = {
        entry
        for entry in entries - kept
        if not any(fnmatch.fnmatch(entry, pattern) for pattern in patterns)
    }
    assert shipped == set()


# --- telemetry: one path to Application Insights ---------------------------------------------


def test_telemetry_reaches_app_insights_once_through_the_worker() -> None:
    """The Functions OpenTelemetry set-up: the host in OpenTelemetry mode, and the Python
    worker streaming its own logs and traces (PYTHON_APPLICATIONINSIGHTS_ENABLE_TELEMETRY),
    which stops the host from forwarding them a second time. function_app.py then must not
    configure an exporter of its own (tests/test_function_app.py checks that)."""
    host = json.loads((ROOT / "host.json").read_text())
    assert host["telemetryMode"] == "OpenTelemetry"
    assert resolve(*app_settings()["PYTHON_APPLICATIONINSIGHTS_ENABLE_TELEMETRY"]) == "true"
    assert "APPLICATIONINSIGHTS_CONNECTION_STRING" in app_settings()


def test_app_insights_authenticates_with_the_managed_identity() -> None:
    """App Insights has local auth disabled: the exporter takes an Entra ID token for the
    user-assigned identity named in the authentication string."""
    node, _ = app_settings()["APPLICATIONINSIGHTS_AUTHENTICATION_STRING"]
    assert node.text.decode() == "'Authorization=AAD;ClientId=${identityClientId}'"
    site, _ = function_app()
    identities = properties(site["managedIdentities"])["userAssignedResourceIds"]
    assert [i.text.decode() for i in _named(identities)] == ["identityId"]


def test_exporter_is_recent_enough_to_read_the_authentication_string() -> None:
    """azure-monitor-opentelemetry-exporter reads APPLICATIONINSIGHTS_AUTHENTICATION_STRING
    (and builds the managed-identity credential) from 1.0.0b36 on; an older one would send
    unauthenticated telemetry that App Insights refuses."""
    from packaging.requirements import Requirement
    from packaging.version import Version

    requirements = {
        (req := Requirement(line.split("#")[0].strip())).name: req
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.split("#")[0].strip()
    }
    exporter = requirements["azure-monitor-opentelemetry-exporter"]
    assert not exporter.specifier.contains(Version("1.0.0b35"), prereleases=True)
    assert exporter.specifier.contains(Version("1.0.0b36"), prereleases=True)
    assert "azure-monitor-opentelemetry" in requirements
