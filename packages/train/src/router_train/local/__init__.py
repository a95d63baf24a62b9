"""The local trainer: GRPO of a small linear router on the CPU, over the env's split and reward.

What routing reads (`checkpoint`, `config`, `policy`, `features`) imports nothing that trains; the
training (`trainer`, `grpo`, `kernels`, `lockstep`, `fitter`, `heldout`) is imported from its own module
where it is used. This package's `__init__` re-exports nothing: every module importing any part of the
package runs it, `route` and `serve` included.
"""
