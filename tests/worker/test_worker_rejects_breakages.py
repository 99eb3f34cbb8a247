"""Changes developers make every day that import fine, index fine with `azure.functions`
alone (what tests/test_function_app.py sees), and break the app on the real host: each is
applied to a copy of `function_app.py`, which the worker (or the host, for what only the host
checks) must then refuse, as Azure would at start-up."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

import pytest

from devtools.azurite import ROOT, Azurite
from scheduler_lib.config import Settings
from tests.worker.host import HostError, running_host
from tests.worker.test_real_worker import app_settings


def _in_function(source: str, name: str, change: Callable[[str], str]) -> str:
    """`source` with `change` applied to function `name`'s block (its decorator and body;
    the app separates functions with two blank lines)."""
    blocks = source.split("\n\n\n")
    [index] = [i for i, block in enumerate(blocks) if f"\ndef {name}(" in f"\n{block}"]
    blocks[index] = change(blocks[index])
    return "\n\n\n".join(blocks)


def rename_the_trigger_parameter(source: str) -> str:
    """The executor's parameter renamed, its decorator's arg_name left as it was."""

    def change(block: str) -> str:
        decorator, _, body = block.partition("def executor(")
        return decorator + "def executor(" + body.replace("msg", "message")

    return _in_function(source, "executor", change)


def annotate_the_wrong_type(source: str) -> str:
    """The dispatch function's queue message annotated as a Service Bus message."""
    return _in_function(
        source,
        "dispatch_pair",
        lambda block: block.replace("msg: func.QueueMessage", "msg: func.ServiceBusMessage"),
    )


def name_a_binding_with_an_underscore(source: str) -> str:
    """The poison-queue function's binding (and parameter) named `queue_msg`."""
    return _in_function(source, "poisoned", lambda block: block.replace("msg", "queue_msg"))


def _azure_functions_alone_accepts(path: Path) -> set[str]:
    """What this project's other checks do: import the app and list `get_functions()`."""
    spec = importlib.util.spec_from_file_location("mutated_function_app", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {f.get_function_name() for f in module.app.get_functions()}


@pytest.mark.parametrize(
    ("mutate", "refusal"),
    [
        (rename_the_trigger_parameter,
         ("cannot load the executor function: the following parameters are declared in Python "
          "but not in the function definition", "{'message'}")),
        (annotate_the_wrong_type,
         ("cannot load the dispatch_pair function",
          "do not match the corresponding function parameter's Python type annotation "
          "ServiceBusMessage")),
        (name_a_binding_with_an_underscore,
         ("poisoned: The binding name queue_msg is invalid. Please assign a valid name to the "
          "binding.",)),
    ],
    ids=["renamed-trigger-parameter", "wrong-annotation", "underscore-in-binding-name"],
)  # fmt: skip
def test_a_broken_copy_of_the_app_is_refused_at_start_up(
    mutate: Callable[[str], str],
    refusal: tuple[str, ...],
    tmp_path: Path,
    settings: Settings,
    azurite: Azurite,
) -> None:
    source = (ROOT / "function_app.py").read_text()
    broken = mutate(source)
    assert broken != source
    (tmp_path / "function_app.py").write_text(broken)
    env = app_settings(settings, azurite)
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        assert len(_azure_functions_alone_accepts(tmp_path / "function_app.py")) == 7
    with pytest.raises(HostError) as refused, running_host(tmp_path, env):
        pass
    assert all(part in str(refused.value) for part in refusal), refused.value


def test_the_unbroken_copy_starts(tmp_path: Path, settings: Settings, azurite: Azurite) -> None:
    """The same copying, without a change, starts: the refusals above are the changes'."""
    (tmp_path / "function_app.py").write_text((ROOT / "function_app.py").read_text())
    with running_host(tmp_path, app_settings(settings, azurite)) as host:
        assert len(host.functions) == 7


def test_a_missing_queue_setting_stops_the_start_up_naming_it(
    tmp_path: Path, settings: Settings, azurite: Azurite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`%SCHEDULER_DISPATCH_QUEUE%` that resolves to nothing is an error on the host."""
    monkeypatch.delenv("SCHEDULER_DISPATCH_QUEUE", raising=False)
    env = app_settings(settings, azurite)
    del env["SCHEDULER_DISPATCH_QUEUE"]
    with pytest.raises(HostError) as refused, running_host(ROOT, env):
        pass
    assert "SCHEDULER_DISPATCH_QUEUE" in str(refused.value)
