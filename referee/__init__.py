"""The referee: rules engines (``referee.games``), the log store, the HTTP API and the verifier.

The app is made by ``referee.app.create_app``; ``import referee.games`` stays free of Flask (the engine library
is used without the service).
"""
