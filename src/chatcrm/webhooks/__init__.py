"""Webhooks (contract D.4): endpoints of a workspace, their secrets, and the signed
deliveries of events to them."""
