"""The conversation of each contact (contract K.1): messages, their events and effects."""
