"""chatcrm: contacts and opportunities of chat-driven sales teams, over a JSON HTTP API."""

__version__ = "0.1.0"
