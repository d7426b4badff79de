"""Bearer-token checks for the network servers (`serve`, `mcp --transport http`).

One comparison (constant time, so response timing does not leak how much of a guess was
right) and an ASGI middleware for apps whose routes are not ours (the MCP SDK's).
"""

import hmac
import json
from typing import Any

REFUSAL = "invalid or missing bearer token"


def bearer_ok(header: str | None, key: str) -> bool:
    """Whether an `Authorization` header value is `Bearer <key>`."""
    scheme, _, token = (header or "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), key.encode())


class BearerAuth:
    """ASGI middleware: HTTP requests without `Authorization: Bearer <key>` get a 401."""

    def __init__(self, app: Any, key: str) -> None:
        self.app = app
        self.key = key

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            header = headers.get(b"authorization", b"").decode("latin-1")
            if not bearer_ok(header, self.key):
                body = json.dumps({"error": {"message": REFUSAL, "code": "invalid_api_key"}})
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body.encode()})
                return
        await self.app(scope, receive, send)
