"""CSV import and export of contacts and opportunities (contract G), over the HTTP API.

The column set is derived from the field tables (columns.py); reading is streamed
(csv_source.py); names of stages, agents, tags and segmentations are resolved against the
workspace (names.py); contacts go through upsert-batch (contact_import.py), opportunities
through their create and update operations (opportunity_import.py); export writes the same
columns (export.py)."""
