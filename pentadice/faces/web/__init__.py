"""The web front end: ``pentadice serve``'s JSON API and page (:func:`pentadice.faces.web.api.create_app`).

A thin layer over the engine and the advisor: requests are parsed into engine types, the engine plays, views
are rendered as JSON. Nothing here imports FastAPI at package import, so the other commands start fast.
"""
