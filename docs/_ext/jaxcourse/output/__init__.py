"""What a page shows, made safe: myst-nb's render plugin, the output and SVG sanitizers, math,
and the checks on prose and on every published file.
"""
