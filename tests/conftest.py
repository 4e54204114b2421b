"""Test configuration: hypothesis profiles.

The default ``ci`` profile is derandomized: every run tries the same examples, so a landing never depends on
luck; ``HYPOTHESIS_PROFILE=thorough`` hunts with fresh random examples (and many more of them).
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True)
settings.register_profile("thorough", max_examples=1500, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
