"""Webhooks: signatures, the retry schedule, the address rules, the dispatcher."""
