"""Hosted training on Prime (prime-rl): typed configs, the shipped presets, staging and launch.

`router-train config PRESET [--nodes N]` renders a preset (`smoke`, `full`, their agentic and any-pool
versions); `router-train launch PRESET` runs it on Prime Hosted Training, `--prime-rl DIR` with prime-rl's
own `rl` in a checkout (one node, or `--nodes N` with SLURM). Failures raise `errors.LaunchError`
subclasses carrying their exit status. Manual: docs/training.md.
The recipe mapping and its deviations are documented in `router_train.hosted.presets`.
"""

from router_train.hosted.config_files import (
    ConfigFileError,
    dumps_config,
    is_stale,
    load_config,
    render_preset,
    shipped_path,
    stale_shipped,
    write_shipped,
)
from router_train.hosted.errors import LaunchError
from router_train.hosted.launch import EXIT_CODES_HELP, launch, sources_from_imports
from router_train.hosted.presets import ENV_ID, PRESET_NAMES, PRESETS, RECIPE, PresetName, preset_config
from router_train.hosted.prime_tool import prime_ready
from router_train.hosted.rl_config import RLConfig
from router_train.hosted.staging import PackageSource, StagingError, find_built_sources, stage_env

__all__ = [
    "ENV_ID",
    "EXIT_CODES_HELP",
    "PRESETS",
    "PRESET_NAMES",
    "RECIPE",
    "ConfigFileError",
    "LaunchError",
    "PackageSource",
    "PresetName",
    "RLConfig",
    "StagingError",
    "dumps_config",
    "find_built_sources",
    "is_stale",
    "launch",
    "load_config",
    "preset_config",
    "prime_ready",
    "render_preset",
    "shipped_path",
    "sources_from_imports",
    "stage_env",
    "stale_shipped",
    "write_shipped",
]
