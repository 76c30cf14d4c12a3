"""Grading: families of the bundled backend tasks."""

from __future__ import annotations

from sweetrl_gym.tasks.family import Family

FAMILIES: tuple[Family, ...] = ()
