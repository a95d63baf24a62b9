"""The route parser's one strict rule, case by case and as properties (Hypothesis)."""

from __future__ import annotations

import time

import pytest
from env_tables import IDS, record
from hypothesis import given, settings
from hypothesis import strategies as st

from router_frontier_rl.rewards import REWARD_NAMES, score_completion, score_route
from router_frontier_rl.route_parser import MAX_REPLY_CHARS, format_route, parse_route

A, B, C = IDS  # claude-opus-4.6, gpt-5.2-high, kimi-k2.5-high


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<route>gpt-5.2-high</route>", B),
        ("<route>  gpt-5.2-high \n</route>", B),
        ("Opus is overkill here; Kimi resolves most django issues.\n<route>kimi-k2.5-high</route>", C),
        ("<think>kimi is cheap but weak on sympy</think>\n<route>claude-opus-4.6</route>", A),
        # one route inside reasoning and nothing after it: still the one route of the reply
        ("<think>I pick <route>gpt-5.2-high</route></think>", B),
        # look-alike tags are not tags: only the ASCII element is read, the rest is prose
        ("<route>gpt-5.2-high</route> ＜route＞kimi-k2.5-high＜/route＞", B),
    ],
)
def test_valid_routes(text: str, expected: str) -> None:
    assert parse_route(text, IDS) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "gpt-5.2-high",
        "<route></route>",
        "<route>   </route>",
        "<route>GPT-5.2 (high)</route>",  # display name
        "<route>Claude Opus 4.6</route>",
        "<route>GPT-5.2-HIGH</route>",  # wrong case
        "<route>Gpt-5.2-high</route>",
        "<ROUTE>gpt-5.2-high</ROUTE>",  # wrong tag case
        "<Route>gpt-5.2-high</route>",
        "<route id='gpt-5.2-high'>gpt-5.2-high</route>",
        "<route >gpt-5.2-high</route>",
        "<route>gpt-5.2-high",  # unclosed
        "gpt-5.2-high</route>",
        "</route>gpt-5.2-high<route>",
        "<route>gpt-5.2-high</route><route>gpt-5.2-high</route>",  # two agreeing tags
        "<route>gpt-5.2-high</route>\n<route>kimi-k2.5-high</route>",  # two different
        "<route><route>gpt-5.2-high</route></route>",
        "<route>claude-opus-4.6, gpt-5.2-high, kimi-k2.5-high</route>",  # every model
        "<route>claude-opus-4.6|gpt-5.2-high|kimi-k2.5-high</route>",
        "<route>gpt-5.2-high kimi-k2.5-high</route>",
        "<think>maybe <route>kimi-k2.5-high</route></think><route>gpt-5.2-high</route>",
        "```xml\n<route>kimi-k2.5-high</route>\n```\nFinal: <route>gpt-5.2-high</route>",
        "<route>gpt-5.2-high</route> (or <ROUTE>kimi-k2.5-high</ROUTE>)",
        "<route>claude-opus-4.7</route>",  # not a pool id
        "<route>'gpt-5.2-high'</route>",
        "<route>`gpt-5.2-high`</route>",
        "<route>gpt-5.2-high.</route>",
        # unicode look-alikes, including ones NFKC folds to the real id
        "<route>clаude-opus-4.6</route>",  # Cyrillic а
        "<route>ｇｐｔ-5.2-high</route>",  # fullwidth
        "<route>gpt‑5.2‑high</route>",  # non-breaking hyphens
        "<route>gpt\u200b-5.2-high</route>",  # zero-width space
        "<route>kimi-k2.5-hıgh</route>",  # dotless i
        "＜route＞gpt-5.2-high＜/route＞",  # fullwidth brackets only
    ],
)
def test_invalid_routes(text: str) -> None:
    assert parse_route(text, IDS) is None


def test_huge_replies_are_invalid_and_fast() -> None:
    assert parse_route("x" * MAX_REPLY_CHARS + format_route(B), IDS) is None
    near_cap = "x" * (MAX_REPLY_CHARS - 40) + format_route(B)
    assert parse_route(near_cap, IDS) == B
    pathological = [
        "<route" * (MAX_REPLY_CHARS // 6),
        "<route>" + " " * (MAX_REPLY_CHARS - 20) + "</route>",
        "<" * MAX_REPLY_CHARS,
        "<route>" + "<" * (MAX_REPLY_CHARS - 20),
        "x" * 10_000_000,
    ]
    for text in pathological:
        start = time.perf_counter()
        assert parse_route(text, IDS) is None
        assert time.perf_counter() - start < 0.5


@given(st.text())
def test_parse_never_raises(text: str) -> None:
    assert parse_route(text, IDS) in (None, *IDS)


model_ids = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,30}", fullmatch=True)
filler = st.text(st.characters(blacklist_characters="<>"), max_size=80)


@given(model_ids, filler, filler)
def test_format_route_round_trips(model_id: str, before: str, after: str) -> None:
    assert parse_route(format_route(model_id), [model_id]) == model_id
    assert parse_route(before + format_route(model_id) + after, [model_id, *IDS]) == model_id


fragment = st.one_of(
    filler,
    st.sampled_from(IDS).map(format_route),
    st.sampled_from(IDS).map(lambda i: f"<ROUTE>{i}</ROUTE>"),
    st.sampled_from(["<route>", "</route>", "<think>", "</think>", "```", "<Route>", "</ROUTE >"]),
    st.lists(st.sampled_from(IDS), min_size=2, max_size=3).map(lambda ids: format_route(", ".join(ids))),
)
outcomes = st.fixed_dictionaries(
    {m: st.tuples(st.sampled_from([0.0, 0.5, 1.0]), st.floats(0.0, 3.0)) for m in IDS}
)


@given(st.lists(fragment, max_size=8), outcomes)
def test_any_reply_scores_as_one_commitment_or_worse(parts: list[str], outcome) -> None:
    """Every reply is scored exactly like committing to one id, or like no route at all (the floor)."""
    task = record("o__r-1", outcome)
    got = score_completion(task, "".join(parts), IDS)
    committed = [score_route(task, i) for i in IDS]
    assert got in [*committed, score_route(task, None)]
    assert got.routed_reward <= max(s.routed_reward for s in committed)


@given(
    st.lists(st.sampled_from(IDS), min_size=2, max_size=4),
    st.lists(filler, min_size=5, max_size=5),
    outcomes,
    st.tuples(*(st.floats(0, 2) for _ in range(4)), st.floats(-0.5, 2)),
)
@settings(max_examples=200)
def test_hedging_never_beats_committing(hedge: list[str], gaps: list[str], outcome, weights) -> None:
    """A reply naming two or more routes earns at most what the best single route earns, under any
    weights whose cost penalty stays below twice the routed_reward weight (see README)."""
    task = record("o__r-1", outcome)
    w = list(weights)
    w[0] = max(w[0], 1.0)
    text = "".join(g + format_route(i) for g, i in zip(gaps, hedge, strict=False))
    hedged = score_completion(task, text, IDS)
    assert hedged == score_route(task, None)
    assert hedged.weighted(w) <= max(score_route(task, i).weighted(w) for i in IDS)
    assert len(w) == len(REWARD_NAMES)
