"""Agentic routing (`repo_access`) without a model: arguments, images, sandbox contents, setup, scoring."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import verifiers.v1 as vf
from fixture_repos import BASE_SUBJECT, BASE_TAG, LATER_TAG, git, make_repo
from pydantic import ValidationError
from system_tools import needs_bwrap
from verifiers.v1.clients import ModelContext
from verifiers.v1.configs.client import EvalClientConfig
from verifiers.v1.harnesses.null import NullHarnessConfig
from verifiers.v1.runtimes import DockerConfig, PrimeConfig, ProgramResult, SubprocessConfig, make_runtime
from verifiers.v1.utils.compile import resolve_runtime_config

from router_frontier_rl import RouteData, RouterConfig, RouterHarness, RouterTaskset, RouteTask, format_route
from router_frontier_rl.bundled import bundled_table_path
from router_frontier_rl.capabilities import summarize
from router_frontier_rl.offline import reply_trace
from router_frontier_rl.prompt import agentic_system_prompt, system_prompt
from router_frontier_rl.repo_access import RepoAccess, RepoAccessError
from router_frontier_rl.repo_checkout import RepoCheckoutError, clone_dir_name
from router_frontier_rl.rewards import REWARD_NAMES, score_completion
from router_frontier_rl.split import select_tasks
from router_frontier_rl.swebench_image import WORKDIR, swebench_image
from router_oracle.table_check import load_table


def make_two_commits(path: Path) -> tuple[str, str]:
    """The base commit has a.txt, the later one adds b.txt."""
    return make_repo(path, {"a.txt": "base\n"}, {"b.txt": "later\n"})


# --- the image naming rule --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("instance_id", "image"),
    [
        ("django__django-11099", "swebench/sweb.eval.x86_64.django_1776_django-11099:latest"),
        ("astropy__astropy-12907", "swebench/sweb.eval.x86_64.astropy_1776_astropy-12907:latest"),
        (
            "scikit-learn__scikit-learn-14710",
            "swebench/sweb.eval.x86_64.scikit-learn_1776_scikit-learn-14710:latest",
        ),
        ("sphinx-doc__sphinx-9602", "swebench/sweb.eval.x86_64.sphinx-doc_1776_sphinx-9602:latest"),
        # SWE-bench's own test of its naming rule (tests/test_task_publish.py), and its lowercasing.
        ("google__gson-2479", "swebench/sweb.eval.x86_64.google_1776_gson-2479:latest"),
        ("Owner__Repo-7", "swebench/sweb.eval.x86_64.owner_1776_repo-7:latest"),
    ],
)
def test_swebench_image_name(instance_id: str, image: str) -> None:
    assert swebench_image(instance_id) == image


@pytest.mark.parametrize("bad", ["", "a b", "x/y", "django__django-1:latest"])
def test_swebench_image_rejects_non_ids(bad: str) -> None:
    with pytest.raises(ValueError, match="not a SWE-bench instance id"):
        swebench_image(bad)


def test_every_bundled_task_has_a_distinct_image() -> None:
    ids = [t.instance_id for t in load_table(bundled_table_path()).tasks]
    assert len({swebench_image(i) for i in ids}) == len(ids) == 500


# --- arguments ----------------------------------------------------------------------------------------


def test_off_by_default_and_single_turn_tasks_unchanged() -> None:
    config = RouterConfig(max_tasks=3)
    assert not config.repo_access and set(config.task.rewards) == set(REWARD_NAMES)
    table = load_table(bundled_table_path())
    system = system_prompt(summarize(select_tasks(table, "train", 0.2, 0), table.pool))
    for task in RouterTaskset(config):
        dumped = task.data.model_dump(mode="json", exclude_none=True)  # how verifiers writes traces
        assert "repo_access" not in dumped and "image" not in dumped and "workdir" not in dumped
        assert task.data.network_allow == ["*"] and task.data.system_prompt == system


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"turn_budget": 3}, "turn_budget: only with repo_access"),
        ({"exploration_cost": 0.1}, "exploration_cost: only with repo_access"),
        ({"allow_unsandboxed": True}, "allow_unsandboxed: only with repo_access"),
        ({"repo_access": True, "allow_unsandboxed": True}, "only apply with repos_dir"),
        ({"repo_access": True, "turn_budget": 0}, "greater than or equal to 1"),
        ({"repo_access": True, "exploration_cost": -1}, "greater than or equal to 0"),
    ],
)
def test_bad_arguments(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        RouterConfig(**kwargs)


def test_local_repositories_refused_without_explicit_consent(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="allow_unsandboxed = true") as err:
        RouterConfig(repo_access=True, repos_dir=tmp_path)
    assert "oracle table" in str(err.value)
    with pytest.raises(ValidationError, match="not a directory"):
        RouterConfig(repo_access=True, repos_dir=tmp_path / "missing", allow_unsandboxed=True)


# --- container tasks: image, workdir, network, and what reaches the sandbox -------------------------------


def container_tasks(**kwargs: Any) -> list[RouteTask]:
    return list(RouterTaskset(RouterConfig(repo_access=True, split="eval", max_tasks=3, **kwargs)))


def test_container_tasks_name_their_image_workdir_and_no_network() -> None:
    table = load_table(bundled_table_path())
    summary = summarize(select_tasks(table, "train", 0.2, 0), table.pool)
    for task in container_tasks(turn_budget=7):
        d = task.data
        assert d.image == swebench_image(d.record.instance_id) and d.workdir == WORKDIR == "/testbed"
        assert d.repo_access == RepoAccess(turn_budget=7)
        assert d.system_prompt == agentic_system_prompt(summary, 7)
        assert d.system_prompt.startswith(system_prompt(summary))
        assert "at most 7 turns" in d.system_prompt and "Do not modify the repository" in d.system_prompt
        # What verifiers makes of it for each container runtime: the image, /testbed, framework-only egress.
        for base in (PrimeConfig(), DockerConfig()):
            resolved = resolve_runtime_config(base, task)
            assert (resolved.image, resolved.workdir) == (d.image, "/testbed")
            assert resolved.allow == [] and resolved.block == ["*"] and resolved.network_restricted
        # ...and the subprocess runtime refuses it: an agentic run there needs repos_dir.
        with pytest.raises(ValueError, match="subprocess runtime has no container"):
            resolve_runtime_config(SubprocessConfig(), task)


class RecordingRuntime(vf.Runtime):
    """A container runtime that runs nothing and records every command and file sent into it."""

    def __init__(self, config: Any) -> None:
        super().__init__("recording")
        self.config = config
        self.commands: list[list[str]] = []
        self.files: dict[str, bytes] = {}

    async def start(self) -> None:
        pass

    async def run(self, argv: list[str], env: dict[str, str]) -> ProgramResult:
        self.commands.append([*argv, *(f"{k}={v}" for k, v in env.items())])
        return ProgramResult(exit_code=0, stdout="/usr/bin/python3\n", stderr="")

    async def _read(self, path: str, max_bytes: int | None = None) -> bytes:
        return self.files[path]

    async def write(self, path: str, data: bytes) -> None:
        self.files[path] = data

    def shipped(self) -> str:
        return "\n".join(["\0".join(c) for c in self.commands] + [b.decode() for b in self.files.values()])


def agent_trace(task: RouteTask, harness: dict[str, Any]) -> vf.Trace:
    trace = reply_trace(task, "")
    trace.nodes = trace.nodes[:-1]
    trace.agent = vf.AgentInfo(config=vf.AgentConfig(harness=harness))
    return trace


@pytest.mark.parametrize("few_shot", [0, 2])
def test_nothing_from_the_table_is_shipped_into_the_sandbox(few_shot: int) -> None:
    """Task setup and the default harness's launch, on a recording container runtime: the image holds
    the repository, and what goes in is verifiers' chat program, the prompts and the model endpoint."""
    table_text = bundled_table_path().read_text()
    for task in container_tasks(few_shot=few_shot):
        runtime = RecordingRuntime(DockerConfig(image=task.data.image))
        trace = agent_trace(task, {"id": "router-frontier-rl"})
        asyncio.run(task.setup(trace, runtime))
        assert runtime.commands == [] and runtime.files == {}  # setup ships nothing: the image has the repo
        harness = RouterHarness(NullHarnessConfig(id="router-frontier-rl"))
        ctx = ModelContext(model="m", client=EvalClientConfig())
        asyncio.run(harness.launch(ctx, trace, runtime, "http://endpoint/v1", "secret", {}, task.data))
        shipped = runtime.shipped()
        program = next(c for c in runtime.commands if "--bash" in c)  # verifiers' bash agent...
        assert "--edit" not in program  # ...without its edit tool
        record = task.data.record
        if few_shot:  # the prompt did go in (as a messages file)...
            assert json.dumps(record.problem_statement)[1:-1] in shipped
        else:
            assert f"--prompt={task.data.prompt}" in program
        for leak in (
            record.model_dump_json(),
            json.dumps(record.model_dump(mode="json")["per_model"]),
            '"per_model"',
            '"resolve_rate"',
            '"oracle":',
            "oracle_table",
            str(bundled_table_path().parent),
            # Full-precision costs (short ones like 0.5 could occur in any text).
            *(r for o in record.per_model.values() if len(r := repr(o.cost)) >= 8),
            *(run.run for o in record.per_model.values() for run in o.runs),
        ):
            assert leak not in shipped, leak  # ...but no table, no outcome, no table path
        assert table_text[:2000] not in shipped


# --- which harness may run an agentic task ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("harness", "error"),
    [
        ({"id": "router-frontier-rl"}, None),
        ({"id": "bash", "edit": False}, None),
        ({"id": "bash"}, "edit tool off"),
        ({"id": "null"}, "`null` has no tools"),
        ({"id": "mini_swe_agent"}, "not 'mini_swe_agent'"),
    ],
)
def test_harness_policy(harness: dict[str, Any], error: str | None) -> None:
    task = container_tasks()[0]
    runtime = RecordingRuntime(DockerConfig(image=task.data.image))
    trace = agent_trace(task, harness)
    if error is None:
        asyncio.run(task.setup(trace, runtime))
    else:
        with pytest.raises(RepoAccessError, match=error):
            asyncio.run(task.setup(trace, runtime))


def test_default_harness_delegates_to_bash_without_edit() -> None:
    harness = RouterHarness(NullHarnessConfig(id="router-frontier-rl", env={"A": "1"}))
    bash = harness.bash()
    assert (bash.config.id, bash.config.edit, bash.config.env) == ("bash", False, {"A": "1"})


# --- local repositories on the subprocess runtime ---------------------------------------------------------


def local_task(tmp_path: Path, *, commit: str | None, unsandboxed: bool = True) -> RouteTask:
    (task,) = list(RouterTaskset(RouterConfig(split="eval", max_tasks=1)))
    repos = str(tmp_path / "repos")
    access = RepoAccess(turn_budget=5, repos_dir=repos, base_commit=commit, unsandboxed=unsandboxed)
    return RouteTask(RouteData.model_validate(task.data.model_dump() | {"repo_access": access}), task.config)


def run_setup(task: RouteTask, harness: dict[str, Any] | None = None) -> Path:
    """Task setup on a real subprocess runtime; the rollout's working directory afterwards."""
    runtime = make_runtime(SubprocessConfig())

    async def go() -> Path:
        await runtime.start()
        await task.setup(agent_trace(task, harness or {"id": "router-frontier-rl"}), runtime)
        workdir = Path(runtime.workdir)  # type: ignore[attr-defined]
        copy = workdir.parent / f"{workdir.name}-copy"
        subprocess.run(["cp", "-a", str(workdir), str(copy)], check=True)
        await runtime.stop()
        return copy

    return asyncio.run(go())


@needs_bwrap
def test_clone_checked_out_at_base_commit_without_later_history(tmp_path: Path) -> None:
    task = local_task(tmp_path, commit=None)
    base, later = make_two_commits(tmp_path / "repos" / clone_dir_name(task.data.record.repo))
    task = local_task(tmp_path, commit=base)
    copy = run_setup(task)
    assert sorted(p.name for p in copy.iterdir()) == [".git", "a.txt"]
    assert git(copy, "rev-parse", "HEAD") == base
    assert git(copy, "log", "--all", "--format=%s") == BASE_SUBJECT
    assert git(copy, "for-each-ref", "--format=%(refname)") == f"refs/tags/{BASE_TAG}"
    assert git(copy, "reflog") == "" and git(copy, "remote") == ""
    source = tmp_path / "repos" / clone_dir_name(task.data.record.repo)
    assert git(source, "rev-parse", "HEAD", LATER_TAG) == f"{later}\n{later}"  # the source is untouched


@needs_bwrap
def test_instance_checkout_is_copied_and_its_head_checked(tmp_path: Path) -> None:
    task = local_task(tmp_path, commit=None)
    base, later = make_two_commits(tmp_path / "repos" / task.data.record.instance_id)
    copy = run_setup(local_task(tmp_path, commit=later))
    assert sorted(p.name for p in copy.iterdir()) == [".git", "a.txt", "b.txt"]
    with pytest.raises(RepoCheckoutError, match=f"is at commit {later}, the task's base_commit is {base}"):
        run_setup(local_task(tmp_path, commit=base))


@needs_bwrap
def test_missing_repository_or_commit_is_named(tmp_path: Path) -> None:
    task = local_task(tmp_path, commit="0" * 40)
    (tmp_path / "repos").mkdir()
    record = task.data.record
    with pytest.raises(RepoCheckoutError, match=f"no repository for {record.instance_id}") as err:
        run_setup(task)
    assert str(tmp_path / "repos" / clone_dir_name(record.repo)) in str(err.value)
    assert "router_frontier_rl.prepare_repos" in str(err.value)
    make_two_commits(tmp_path / "repos" / clone_dir_name(record.repo))
    with pytest.raises(RepoCheckoutError, match=f"has no commit {'0' * 40}"):
        run_setup(task)
    with pytest.raises(RepoCheckoutError, match="gives no base_commit"):
        run_setup(local_task(tmp_path, commit=None))


def test_runtime_mismatches_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RepoAccessError, match="allow_unsandboxed"):
        run_setup(local_task(tmp_path, commit=None, unsandboxed=False))
    task = local_task(tmp_path, commit=None)
    with pytest.raises(RepoAccessError, match="repos_dir is for the subprocess runtime"):
        trace = agent_trace(task, {"id": "bash", "edit": False})
        asyncio.run(task.setup(trace, RecordingRuntime(DockerConfig())))


@needs_bwrap
def test_local_tasks_carry_base_commits_from_the_tasks_file(tmp_path: Path) -> None:
    (tmp_path / "repos").mkdir()
    base = {"repo_access": True, "repos_dir": tmp_path / "repos", "allow_unsandboxed": True, "max_tasks": 3}
    tasks = list(RouterTaskset(RouterConfig(**base)))
    for t in tasks:  # bundled Verified file by default; no image, no network policy (subprocess refuses them)
        assert t.data.image is None and t.data.network_allow == ["*"]
        assert t.data.repo_access is not None and len(t.data.repo_access.base_commit or "") == 40
    rows = tmp_path / "tasks.jsonl"
    first = tasks[0].data.record
    row = {
        "instance_id": first.instance_id,
        "repo": first.repo,
        "problem_statement": "-",
        "base_commit": "abc",
    }
    rows.write_text(json.dumps(row) + "\n")
    mine = list(RouterTaskset(RouterConfig(**base, tasks_path=rows)))
    assert [t.data.repo_access.base_commit for t in mine if t.data.repo_access] == ["abc", None, None]


# --- scoring an agentic trace -----------------------------------------------------------------------------


def explored_trace(task: RouteTask, final: vf.AssistantMessage, calls: int) -> vf.Trace:
    trace = reply_trace(task, "")
    nodes = trace.nodes[:-1]
    for i in range(calls):
        call = vf.ToolCall(id=f"c{i}", name="bash", arguments=json.dumps({"command": "ls"}))
        asked = vf.AssistantMessage(tool_calls=[call])
        nodes.append(vf.MessageNode(parent=len(nodes) - 1, message=asked, sampled=True))
        result = vf.ToolMessage(tool_call_id=f"c{i}", content="a.txt")
        nodes.append(vf.MessageNode(parent=len(nodes) - 1, message=result))
    nodes.append(vf.MessageNode(parent=len(nodes) - 1, message=final, sampled=True))
    trace.nodes = nodes
    return trace


def test_agentic_trace_scored_on_its_final_reply_with_exploration_metrics() -> None:
    (task,) = container_tasks(exploration_cost=0.02)[:1]
    record = task.data.record
    reply = f"Read the code.\n{format_route(record.oracle)}"
    trace = explored_trace(task, vf.AssistantMessage(content=reply), calls=3)
    asyncio.run(task.score(trace))
    want = score_completion(record, reply, task.data.valid_ids)
    assert {k: r.score for k, r in trace.rewards.items()} == want.model_dump() | {"exploration_cost": -3.0}
    assert trace.metrics == {"tool_calls": 3.0, "turns": 4.0}
    assert trace.reward == pytest.approx(want.routed_reward - 0.02 * 3)


def test_out_of_turns_without_a_route_is_minus_one() -> None:
    (task,) = container_tasks(turn_budget=3)[:1]
    # The budget's last turn was one more tool call (content may even mention a model): no valid route.
    call = vf.ToolCall(id="last", name="bash", arguments="{}")
    trace = explored_trace(task, vf.AssistantMessage(content="maybe kimi", tool_calls=[call]), calls=2)
    assert asyncio.run(task.turn_budget(trace)) and not asyncio.run(task.single_turn(trace))
    asyncio.run(task.score(trace))
    assert trace.rewards["routed_reward"].score == -1.0 and trace.metrics["turns"] == 3.0
