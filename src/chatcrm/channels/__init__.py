"""WhatsApp channels (contract K.2): their records, Meta's webhook, the Graph API sender."""
