"""WCAG colour contrast, shared by the kernel's figures and the build's output sanitizer."""

from __future__ import annotations


def relative_luminance(colour: str) -> float:
    """WCAG 2 relative luminance of a '#rrggbb' colour."""
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_ratio(foreground: str, background: str) -> float:
    """WCAG 2 contrast ratio of two '#rrggbb' colours."""
    lighter, darker = sorted((relative_luminance(foreground), relative_luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def text_colour_on(background: str) -> str:
    """Black or white, whichever reads better on ``background``."""
    return max(("#000000", "#ffffff"), key=lambda ink: contrast_ratio(ink, background))
