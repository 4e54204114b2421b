"""Test configuration: hypothesis profiles (``HYPOTHESIS_PROFILE=thorough`` for long hunts)."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", max_examples=60, deadline=None)
settings.register_profile("thorough", max_examples=1500, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
