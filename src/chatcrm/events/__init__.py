"""Events (contract D): the outbox written with every change, the feed, record history."""
