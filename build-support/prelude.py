# Loaded into every BUILD file by pants.toml's `[GLOBAL] build_file_prelude_globs`.

# The one version of all three distributions: they are released together.
ROUTER_VERSION = "0.1.0"

# What the wheels declare. Pants would otherwise copy the interpreter constraint (==3.11.*) used to
# build and test them, and prime-rl's trainers run Python 3.12.
ROUTER_PYTHON_REQUIRES = ">=3.11"
