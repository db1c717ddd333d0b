"""Independent NumPy checks of transforms-04's numbers: no JAX here."""

from __future__ import annotations

import re

import numpy as np
import pytest

# transforms-04's data, as its Step 1 and Step 2 define it.
X = np.arange(12, dtype=np.float64).reshape(4, 3) / 10.0
W = np.array([1.0, 2.0, -1.0])
Y = np.ones(4)


def loss(w):
    return np.mean((X @ w - Y) ** 2)


def recorded(course_site, pattern):
    page = course_site.html("lessons/transforms-04.html")
    return re.search(pattern, page.select_one(".recorded-transcript pre").get_text(), re.M).group(1)


def test_recorded_loss_matches_numpy(course_site):
    value = float(recorded(course_site, r"^Loss: (\S+)$"))
    assert value == pytest.approx(loss(W), rel=1e-6)  # float32 in the lesson
    assert value == pytest.approx(0.46, rel=1e-6)  # the value the lesson's prose states


def test_recorded_gradient_matches_numpy(course_site):
    gradient = np.array([float(v) for v in recorded(course_site, r"^Gradient: \[(.*)\]$").split(",")])
    np.testing.assert_allclose(gradient, 2.0 / len(Y) * X.T @ (X @ W - Y), rtol=1e-5, atol=1e-6)


def test_recorded_gradient_matches_central_differences(course_site):
    """The published gradient against the slope of the NumPy loss itself: no formula, no JAX."""
    gradient = np.array([float(v) for v in recorded(course_site, r"^Gradient: \[(.*)\]$").split(",")])
    step = 1e-6
    numeric = np.array([(loss(W + step * e) - loss(W - step * e)) / (2 * step) for e in np.eye(3)])
    np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-6)
