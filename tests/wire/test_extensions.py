"""The extension mechanism at every location, with a catalog of this test's own entries (the
real catalog's are tested through the API): validation with the request's version, the
2016-03-01 refusal naming the field, errorActions, enum choices and the older form."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_lib.errors import ValidationError
from scheduler_lib.wire import collections, extensions, jobs, readers
from scheduler_lib.wire.versions import (
    ApiVersion,
    Catalog,
    ExtensionChoice,
    ExtensionProperty,
    Location,
    parse_version,
    require,
)

OLD, NEW = ApiVersion.V2016_03_01, ApiVersion.V2026_12_01


def _flag(value: Any, path: str) -> bool:
    return readers.boolean(value, path)


TEST_CATALOG = Catalog(
    properties=(
        ExtensionProperty(Location.REQUEST, "signed", _flag, {"type": "boolean"}),
        ExtensionProperty(Location.ACTION, "mainOnly", _flag, {}, error_action=False),
        ExtensionProperty(Location.RETRY_POLICY, "jitter", _flag, {"type": "boolean"}),
        ExtensionProperty(Location.COLLECTION, "audited", _flag, {"type": "boolean"}),
        ExtensionProperty(Location.AUTHENTICATION, "federated", _flag, {"type": "boolean"}),
    ),
    choices=(
        ExtensionChoice(Location.RETRY_POLICY, "retryType", "Exponential", "Fixed"),
        ExtensionChoice(Location.AUTHENTICATION, "type", "Identity", "NotSpecified"),
    ),
)


@pytest.fixture(autouse=True)
def catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extensions, "CATALOG", TEST_CATALOG)


def _job(**action: Any) -> dict[str, Any]:
    request = {"uri": "https://example.com/", "method": "GET", "signed": True}
    error = {"type": "Http", "request": dict(request)}
    return {
        "action": {"type": "Http", "request": request, "errorAction": error, **action},
    }


def test_the_new_version_stores_each_location_the_old_refuses_it() -> None:
    policy = {"retryType": "exponential", "retryInterval": "PT1M", "jitter": True}
    definition, _, _ = jobs.normalize_properties(
        _job(mainOnly=True, retryPolicy=policy), version=NEW
    )
    action = definition["action"]
    assert action["request"]["signed"] is True and action["errorAction"]["request"]["signed"]
    assert action["mainOnly"] is True
    assert action["retryPolicy"] == {
        "retryType": "Exponential",
        "retryInterval": "PT1M",
        "retryCount": 4,
        "jitter": True,
    }
    with pytest.raises(ValidationError) as error:
        jobs.normalize_properties(_job(), version=OLD)
    assert error.value.target == "properties.action.request.signed"
    assert "not a known property" in str(error.value)
    with pytest.raises(ValidationError) as error:
        jobs.normalize_properties(_job(retryPolicy={"retryType": "Exponential"}), version=OLD)
    assert error.value.target == "properties.action.retryPolicy.retryType"


def test_a_property_for_main_actions_only_is_unknown_in_an_error_action() -> None:
    job = _job()
    job["action"]["errorAction"]["mainOnly"] = True
    with pytest.raises(ValidationError) as error:
        jobs.normalize_properties(job, version=NEW)
    assert error.value.target == "properties.action.errorAction.mainOnly"


def test_a_bad_value_is_refused_naming_its_path() -> None:
    job = _job()
    job["action"]["errorAction"]["request"]["signed"] = "yes"
    with pytest.raises(ValidationError) as error:
        jobs.normalize_properties(job, version=NEW)
    assert error.value.target == "properties.action.errorAction.request.signed"


def test_the_older_form_leaves_out_what_the_version_lacks() -> None:
    policy = {"retryType": "Exponential", "jitter": True}
    definition, _, _ = jobs.normalize_properties(_job(retryPolicy=policy), version=NEW)
    older = extensions.older_form(definition, OLD)
    assert "signed" not in older["action"]["request"]
    assert "signed" not in older["action"]["errorAction"]["request"]
    assert older["action"]["retryPolicy"] == {
        "retryType": "Fixed",
        "retryInterval": "PT30S",
        "retryCount": 4,
    }
    assert jobs.normalize_properties(older, version=OLD)[0] == older  # valid as 2016-03-01
    assert extensions.older_form(definition, NEW) == definition


def test_collection_properties_follow_the_version() -> None:
    body = {"properties": {"audited": True}}
    with pytest.raises(ValidationError) as error:
        collections.normalize_body(body, OLD)
    assert error.value.target == "properties.audited"
    stored = collections.complete(collections.normalize_body(body, NEW)[2])
    assert stored["audited"] is True
    patched = collections.complete(collections.merge(stored, {"state": "Disabled"}))
    assert patched["audited"] is True  # an old PATCH keeps it
    assert "audited" not in collections.complete({})  # an old PUT drops it
    assert "audited" not in extensions.collection_older_form(stored, OLD)


def test_an_authentication_type_of_the_new_version() -> None:
    job = _job()
    job["action"]["request"]["authentication"] = {"type": "identity", "federated": True}
    definition, _, _ = jobs.normalize_properties(job, version=NEW)
    stored = definition["action"]["request"]["authentication"]
    assert stored == {"type": "Identity", "federated": True}
    older = extensions.older_form(definition, OLD)["action"]["request"]["authentication"]
    assert older == {"type": "NotSpecified"}
    del job["action"]["request"]["signed"], job["action"]["errorAction"]
    with pytest.raises(ValidationError) as error:
        jobs.normalize_properties(job, version=OLD)
    assert error.value.target == "properties.action.request.authentication.type"


def test_a_route_of_the_new_version_only() -> None:
    require(NEW, NEW, "backfill")
    with pytest.raises(ValidationError) as error:
        require(OLD, NEW, "backfill")
    assert error.value.target == "api-version" and "2026-12-01" in str(error.value)


@pytest.mark.parametrize("value", ["2016-03-01", "2026-12-01", None])
def test_served_versions(value: str | None) -> None:
    assert parse_version(value) in (OLD, NEW)


def test_versions_are_ordered() -> None:
    assert NEW.has(OLD) and NEW.has(NEW) and not OLD.has(NEW)
