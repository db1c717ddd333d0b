"""The published pages and files: each executed page's header, figures, transcript and
downloads; the site's report, compatibility and change pages; search.
"""
