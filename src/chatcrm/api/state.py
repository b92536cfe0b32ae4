"""Where a request's state (scope["state"]) keeps what the layers hand each other."""

STATE_CONNECTION = "connection"  # the request's one database connection
STATE_PRINCIPAL = "principal"  # the authenticated caller (api/gate.py)
STATE_AUTH_ERROR = "auth_error"  # why the key was refused, for routes that need one
STATE_REQUEST_ID = "request_id"
STATE_SESSION = "session"  # the console session of a cookie-authenticated request (J.3)
STATE_ANSWER_HEADERS = "answer_headers"  # headers every answer carries (the rate limit's)
