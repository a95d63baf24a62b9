"""Where a SWE-bench task's repository lives in a container: the instance's public evaluation image.

SWE-bench publishes one Docker image per task instance on Docker Hub, holding the repository at the
task's `base_commit` in `/testbed` (with its test environment installed). The name is derived from
the instance id, as SWE-bench's own harness derives it (SWE-bench/SWE-bench:
`swebench/task/checks.py::expected_image` and `swebench/image_builder/image_spec.py::ImageSpec.name`,
earlier `swebench/harness/test_spec/test_spec.py::TestSpec.instance_image_key`; the workdir is
`swebench/image_builder/constants/__init__.py::CONTAINER_WORKDIR`):

    swebench/sweb.eval.x86_64.<instance id, lowercased, "__" replaced by "_1776_">:latest

Docker Hub does not allow a double underscore in a repository name, hence `_1776_`.
"""

from __future__ import annotations

IMAGE_NAMESPACE = "swebench"
"""The Docker Hub namespace of SWE-bench's published evaluation images."""

IMAGE_ARCH = "x86_64"
"""Architecture the published images are built for (and Prime sandboxes run)."""

IMAGE_TAG = "latest"
"""Tag of the published images."""

WORKDIR = "/testbed"
"""Where the repository is checked out (at `base_commit`) inside every evaluation image."""


def swebench_image(instance_id: str) -> str:
    """The public SWE-bench evaluation image of `instance_id` (see the module docstring for the rule)."""
    if not instance_id or any(c.isspace() or c in "/:" for c in instance_id):
        raise ValueError(f"not a SWE-bench instance id: {instance_id!r}")
    key = f"sweb.eval.{IMAGE_ARCH}.{instance_id}:{IMAGE_TAG}".lower()
    return f"{IMAGE_NAMESPACE}/{key}".replace("__", "_1776_")
