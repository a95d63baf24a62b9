# Loaded into every BUILD file by pants.toml's `[GLOBAL] build_file_prelude_globs`.

# The one version of all three distributions: they are released together.
ROUTER_VERSION = "0.1.0"
