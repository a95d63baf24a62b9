"""A real agent through `router-train serve`: mini-SWE-agent (PyPI) runs one SWE-bench-style task.

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

import pytest
from serve_stubs import (
    StubUpstream,
    bundled_issues,
    log_lines,
    proxy_app,
    serving,
    trained_checkpoint,
    write_config,
)

from router_train.route import RouterSpec, RouteTask, load_router
from router_train.serve import issue_text, task_key

pytest.importorskip("minisweagent", reason="mini-swe-agent (a test requirement) is not installed")

AGENT = r"""
import json, sys
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
print(json.dumps({"result": result, "n_calls": agent.n_calls, "first_user": first_user}))
"""


@pytest.mark.e2e
def test_mini_swe_agent_runs_one_task_on_the_routed_model(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    checkpoint = trained_checkpoint(tmp_path_factory.getbasetemp())  # shared with test_train_serve.py
    router = load_router(RouterSpec(checkpoint=checkpoint))
    _, repo, issue = bundled_issues()[1]
    chosen = router.route(RouteTask(instance_id="x", repo=repo, problem_statement=issue)).model
    assert chosen is not None
    stubs = {m: StubUpstream(f"up-{m}") for m in router.pool}
    workdir = tmp_path / "testbed"
    workdir.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(sys.path),  # this test's modules, also under pex
        "MSWEA_SILENT_STARTUP": "1",
        "MSWEA_GLOBAL_CONFIG_DIR": str(tmp_path / "mswea-config"),
        "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "1",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # litellm must not fetch its price list
        "NO_PROXY": "127.0.0.1",
    }
    with ExitStack() as stack:
        running = {m: (stub, stack.enter_context(serving(stub.app()))) for m, stub in stubs.items()}
        cfg = write_config(tmp_path / "serve.toml", checkpoint, running)
        proxy = stack.enter_context(serving(proxy_app(cfg)))
        run = subprocess.run(
            [sys.executable, "-c", AGENT, f"{proxy.url}/v1", repo, str(workdir), issue],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
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
    again = router.route(RouteTask(instance_id=line["instance_id"], repo=repo, problem_statement=issue))
    assert line["scores"] == again.scores


@pytest.mark.parametrize(
    "config_name",
    ["swebench.yaml", "swebench_backticks.yaml", "swebench_xml.yaml", "default.yaml", "mini.yaml"],
)
def test_the_router_reads_the_issue_inside_each_installed_template(config_name: str) -> None:
    # The templates of the installed mini-SWE-agent, rendered as its agent renders them (jinja2, with the
    # local environment's platform variables).
    import platform

    import jinja2  # pants: no-infer-dep (installed with mini-swe-agent)
    import yaml  # pants: no-infer-dep (installed with mini-swe-agent)
    from minisweagent.config import get_config_path

    template = yaml.safe_load(get_config_path(config_name).read_text())["agent"]["instance_template"]
    issue = bundled_issues()[3][2]
    rendered = jinja2.Template(template, undefined=jinja2.StrictUndefined).render(
        task=issue, **platform.uname()._asdict()
    )
    assert rendered != issue
    assert issue_text(rendered) == issue.strip()
