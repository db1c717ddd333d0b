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


def test_loss_is_0_46():
    assert loss(W) == pytest.approx(0.46, abs=1e-12)


def test_gradient_formula_matches_central_differences():
    analytic = 2.0 / len(Y) * X.T @ (X @ W - Y)
    step = 1e-6
    numeric = np.array([(loss(W + step * e) - loss(W - step * e)) / (2 * step) for e in np.eye(3)])
    np.testing.assert_allclose(analytic, numeric, rtol=1e-7, atol=1e-9)


def test_recorded_loss_matches_numpy(course_site):
    page = course_site.html("lessons/transforms-04.html")
    recorded = page.select_one(".recorded-transcript pre").get_text()
    value = float(re.search(r"^Loss: (\S+)$", recorded, re.M).group(1))
    assert value == pytest.approx(loss(W), rel=1e-6)  # float32 in the lesson


def test_recorded_gradient_matches_numpy(course_site):
    page = course_site.html("lessons/transforms-04.html")
    recorded = page.select_one(".recorded-transcript pre").get_text()
    values = re.search(r"^Gradient: \[(.*)\]$", recorded, re.M).group(1)
    gradient = np.array([float(v) for v in values.split(",")])
    np.testing.assert_allclose(gradient, 2.0 / len(Y) * X.T @ (X @ W - Y), rtol=1e-5, atol=1e-6)
