"""Tests that need a real browser: Debian's `chromium`, driven through its `chromedriver` by selenium.

The one definition of when such a test skips and when it fails (as `packages/env/tests/system_tools.py`
does for bubblewrap). A newcomer's `./pants test ::` passes without chromium: each of these tests skips,
its reason naming the install line. CI (`.ci/run`) sets $ROUTER_REQUIRE_SERVICES: there a missing browser
fails these tests instead of skipping them.

The driver is started with an explicit chromedriver path (selenium never downloads one), headless, and
with Chromium's background networking off: the test machine reaches nothing but 127.0.0.1.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from required_service import skip_or_fail

CHROMIUM_INSTALL = "sudo apt-get install -y chromium chromium-driver"
"""The install line a skipped browser test names (Debian)."""

CHROMIUM = ("/usr/bin/chromium", "chromium")
"""Where the browser is looked for: Debian's path, then PATH."""
CHROMEDRIVER = ("/usr/bin/chromedriver", "chromedriver")
"""Where its driver is looked for, likewise."""


def _find(candidates: tuple[str, ...]) -> str | None:
    for c in candidates:
        found = c if os.path.isabs(c) and os.access(c, os.X_OK) else shutil.which(c)
        if found:
            return found
    return None


def browser_problem() -> str | None:
    """Why no headless Chromium can be driven here (naming the install line), or None."""
    try:
        import selenium  # noqa: F401  (only asked whether it is installed)
    except ImportError:
        return "selenium is not installed (3rdparty/python/requirements.txt lists it)"
    missing = [
        name for name, where in (("chromium", CHROMIUM), ("chromedriver", CHROMEDRIVER)) if not _find(where)
    ]
    if missing:
        return f"{' and '.join(missing)} not installed: {CHROMIUM_INSTALL}"
    return None


def require_browser() -> None:
    """Skip the calling test where no headless Chromium can be driven, saying why; fail instead where
    $ROUTER_REQUIRE_SERVICES is set."""
    skip_or_fail("the browser tests", browser_problem())


@contextmanager
def chromium(profile: Path, width: int = 1100, height: int = 900) -> Iterator[Any]:
    """A headless Chromium under selenium (its console log readable with `get_log("browser")`), quit on
    exit with its chromedriver."""
    require_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(_find(CHROMIUM))
    for flag in (
        "--headless=new",
        "--no-sandbox",  # the tests may run as root, where Chromium's sandbox refuses to start
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--no-first-run",
        "--hide-scrollbars",
        f"--window-size={width},{height}",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(_find(CHROMEDRIVER))))
    try:
        yield driver
    finally:
        driver.quit()
