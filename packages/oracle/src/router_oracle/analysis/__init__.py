"""Analyses of a table's measurements: `stats` (the pool report), `noise` (how much of the oracle's gain
rollout noise explains), and the agreement of runs (`run_agreement`) and of harnesses
(`harness_agreement`)."""
