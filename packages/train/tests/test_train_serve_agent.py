"""A real agent through `router-train serve`: mini-SWE-agent (PyPI) runs one SWE-bench-style task.

mini-SWE-agent is not in the project's lock (it and litellm bring ~20 heavy packages a cold Pants
run would install for every test): uv installs the pinned versions from PyPI into a throw-away
environment at test time, its first run into `UV_CACHE_DIR` (set that variable to reuse a warm cache).

The agent runs in its own process with its SWE-bench config (`swebench.yaml`: tool calls, submit
command), litellm's OpenAI-compatible provider (`openai/router`, `api_base` = the proxy) and a local
environment in a temporary directory. The stub upstreams answer with a bash action, then the harness's
submit command; no real model is called and nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from serve_stubs import (
    StubUpstream,
    bundled_issues,
    log_lines,
    native_router,
    proxy_app,
    serving,
    trained_checkpoint,
    write_config,
)

from router_train.route import TaskInput
from router_train.serve import issue_text, task_key
from router_train.serve.routing import decision_record

uv = pytest.importorskip("uv")

# The versions the agent's flags and templates below were checked against; litellm as last locked.
AGENT_REQUIREMENTS = ["mini-swe-agent==2.4.6", "litellm==1.110.2"]


def agent_python(uv_cache: Path, config_dir: Path) -> tuple[list[str], dict[str, str]]:
    """The command (up to `python`) and environment of a Python that has mini-SWE-agent, from uv.

    `--isolated` keeps the environment from being layered over this interpreter's site-packages, and
    PYTHONPATH is dropped: its entries would come before the uv environment's packages (a litellm
    of the test environment would shadow the pinned one). The scripts import nothing of the
    project, so nothing of it needs to be importable there."""
    with_args = [arg for req in AGENT_REQUIREMENTS for arg in ("--with", req)]
    command = [uv.find_uv_bin(), "run", "--isolated", "--no-project", "--python", sys.executable]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env |= {
        "UV_CACHE_DIR": str(uv_cache),
        "MSWEA_SILENT_STARTUP": "1",
        "MSWEA_GLOBAL_CONFIG_DIR": str(config_dir),
        "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "1",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # litellm must not fetch its price list
        "NO_PROXY": "127.0.0.1",
    }
    return [*command, *with_args, "python"], env


@pytest.fixture(scope="module")
def uv_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """uv's cache for the agent's environment: $UV_CACHE_DIR if set, else one for this module. (Not in a
    conftest.py: the env package's tests have one, and mypy checks both packages' tests in one run.)"""
    given = os.environ.get("UV_CACHE_DIR")
    return Path(given) if given else tmp_path_factory.mktemp("uv-cache")


@pytest.fixture(scope="module")
def agent_env(uv_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], dict[str, str]]:
    """`agent_python`, installed here once (a cold cache downloads ~250 MB from PyPI), so the tests'
    own time limits cover only their runs."""
    command, env = agent_python(uv_cache, tmp_path_factory.mktemp("mswea-config"))
    run = subprocess.run(
        [*command, "-c", "pass"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return command, env


AGENT = r"""
import json, sys
from importlib.metadata import version
from pathlib import Path
import yaml
from minisweagent.agents.default import DefaultAgent
from minisweagent.config import get_config_path
from minisweagent.environments.local import LocalEnvironment
from minisweagent.models.litellm_model import LitellmModel

api_base, repo, workdir, task = sys.argv[1:5]
config = yaml.safe_load(get_config_path("swebench.yaml").read_text())
model_cfg = {k: v for k, v in config["model"].items() if k != "model_name"}
model_cfg["model_kwargs"] = {
    **model_cfg.get("model_kwargs", {}),
    "api_base": api_base,
    "api_key": "unused",
    "extra_headers": {"x-router-repo": repo},
}
model = LitellmModel(model_name="openai/router", cost_tracking="ignore_errors", **model_cfg)
env = LocalEnvironment(cwd=workdir, timeout=30)
agent = DefaultAgent(model, env, **{**config["agent"], "step_limit": 6})
result = agent.run(task=task)
first_user = next(m["content"] for m in agent.messages if m["role"] == "user")
versions = [f"{d}=={version(d)}" for d in ("mini-swe-agent", "litellm")]
out = {"result": result, "n_calls": agent.n_calls, "first_user": first_user, "versions": versions}
print(json.dumps(out))
"""


@pytest.mark.e2e
def test_mini_swe_agent_runs_one_task_on_the_routed_model(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    agent_env: tuple[list[str], dict[str, str]],
) -> None:
    checkpoint = trained_checkpoint(tmp_path_factory.getbasetemp())  # shared with test_train_serve.py
    router = native_router(checkpoint)
    _, repo, issue = bundled_issues()[1]
    chosen = router.route(TaskInput(instance_id="x", repo=repo, problem_statement=issue)).model
    assert chosen is not None
    stubs = {m: StubUpstream(f"up-{m}") for m in router.pool}
    workdir = tmp_path / "testbed"
    workdir.mkdir()
    python, env = agent_env
    with ExitStack() as stack:
        running = {m: (stub, stack.enter_context(serving(stub.app()))) for m, stub in stubs.items()}
        cfg = write_config(tmp_path / "serve.toml", checkpoint, running)
        proxy = stack.enter_context(serving(proxy_app(cfg)))
        run = subprocess.run(
            [*python, "-c", AGENT, f"{proxy.url}/v1", repo, str(workdir), issue],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["versions"] == AGENT_REQUIREMENTS  # the pinned ones, not whatever else is importable
    assert out["result"]["exit_status"] == "Submitted"
    assert out["result"]["submission"] == f"answered-by-up-{chosen}\n"  # written by its first action
    assert (workdir / "proof.txt").read_text() == f"answered-by-up-{chosen}\n"
    assert out["n_calls"] == 2
    # Every request of the agent reached the one upstream the router chose, under its upstream name.
    assert [len(s.seen) for m, s in stubs.items() if m != chosen] == [0] * (len(stubs) - 1)
    assert [(s.model, s.n_messages) for s in stubs[chosen].seen] == [
        (f"served-{chosen}", 2),
        (f"served-{chosen}", 4),
    ]
    (line,) = log_lines(cfg)
    assert line["model"] == chosen and line["task"] == task_key(out["first_user"], None)
    # The router read the issue inside mini-SWE-agent's template, and the repo from the header.
    assert issue in out["first_user"] and out["first_user"] != issue
    again = router.route(TaskInput(instance_id=line["instance_id"], repo=repo, problem_statement=issue))
    # ... and logged what `route` decides for it (its scores, or the safe default point's fallback).
    assert {k: line[k] for k in decision_record(again)} == decision_record(again)


# The templates of the installed mini-SWE-agent, rendered as its agent renders them (jinja2, with the
# local environment's platform variables), by the uv environment's own jinja2.
RENDER = r"""
import json, platform, sys
import jinja2, yaml
from minisweagent.config import get_config_path

task, names = sys.argv[1], sys.argv[2:]
rendered = {}
for name in names:
    template = yaml.safe_load(get_config_path(name).read_text())["agent"]["instance_template"]
    rendered[name] = jinja2.Template(template, undefined=jinja2.StrictUndefined).render(
        task=task, **platform.uname()._asdict()
    )
print(json.dumps(rendered))
"""
TEMPLATES = ["swebench.yaml", "swebench_backticks.yaml", "swebench_xml.yaml", "default.yaml", "mini.yaml"]


@pytest.fixture(scope="module")
def rendered_templates(agent_env: tuple[list[str], dict[str, str]]) -> dict[str, Any]:
    """Config name -> its instance template rendered with the fourth bundled issue as the task."""
    python, env = agent_env
    issue = bundled_issues()[3][2]
    run = subprocess.run(
        [*python, "-c", RENDER, issue, *TEMPLATES],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    rendered: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return rendered


@pytest.mark.e2e
@pytest.mark.parametrize("config_name", TEMPLATES)
def test_the_router_reads_the_issue_inside_each_installed_template(
    config_name: str, rendered_templates: dict[str, Any]
) -> None:
    issue = bundled_issues()[3][2]
    rendered = rendered_templates[config_name]
    assert rendered != issue
    assert issue_text(rendered) == issue.strip()
