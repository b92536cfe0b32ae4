"""Reliability guarantees: no lost update, no duplicate create, no lost write, outages."""
