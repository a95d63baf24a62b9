"""router_oracle: real per-task SWE-bench results -> oracle tables (which model a router should pick).

Import from the submodules (this file imports nothing, so `router_oracle.table` stays light):
- `build.build_table(...)`, `build.build_default_table()`  -> `table.OracleTable`
- `task_input.TaskInput`: what a router may read of a task (id, repo, issue, difficulty);
  `table.TaskRecord` extends it with the outcomes and the oracle pick
- `table`: the schema, `write_table / dumps_table`; `table_check`: `check_table`, `load_table / loads_table`
- `tie_rule.pick_oracle / pick_for_task`: the one definition of the oracle rule
- `candidates`: the candidates table (every usable leaderboard run per task, grouped into models by
  `leaderboard_models`), `candidates_build.build_candidates(...)`; `derive.CandidateIndex` /
  `derive.derive_table(candidates, model_ids)`: the oracle table of any subset pool
- `data_files.tasks_path() / leaderboard_path() / pool_path(name)`: bundled data
- `analysis.stats.compute_stats / format_stats`; CLI `router_oracle.cli:main` (`router-oracle`)
- `frontier`: the best random mix of single models (the yardstick of every router and of the oracle)
- `analysis.run_agreement.measure_models`: run-to-run disagreement of models with two or more runs
- `analysis.harness_agreement.measure_cross_harness`: the same model under two harnesses in the
  bundled data
- `analysis.noise.estimate_noise(table, task_ids)`: the oracle's headroom and the part rollout noise
  alone gives
- `infra`: the shared plumbing (atomic files, the frozen model base, CLI runner, messages);
  `infra.errors.OracleInputError`: every bad-input error (a ValueError)
"""
