"""The web console (contract H): static ES modules served by `chatcrm serve` at `/console`."""
