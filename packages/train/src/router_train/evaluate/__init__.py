"""Judge routers against the oracle, built-in baselines and the cost-quality frontier of single models."""

from router_train.evaluate.report import EvalReport, dumps_report, render_markdown, render_terminal
from router_train.evaluate.run import Source, evaluate, read_table, write_report
from router_train.evaluate.traces import read_traces
from router_train.scoring.decisions import UNPARSEABLE, Decisions, EvaluateError, from_labels
from router_train.scoring.metrics import RouterMetrics, compute_metrics

__all__ = [
    "UNPARSEABLE",
    "Decisions",
    "EvalReport",
    "EvaluateError",
    "RouterMetrics",
    "Source",
    "compute_metrics",
    "dumps_report",
    "evaluate",
    "from_labels",
    "read_table",
    "read_traces",
    "render_markdown",
    "render_terminal",
    "write_report",
]
