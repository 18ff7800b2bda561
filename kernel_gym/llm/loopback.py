"""A tiny OpenAI-compatible chat server on 127.0.0.1, for tests and benchmarks of the LLM path.

It serves ``POST /v1/chat/completions`` (and ``/chat/completions``) from a thread of the calling
process, so the real litellm and OpenAI-client code runs end to end with no network and no
mocks. What each request gets is scripted::

    with LoopbackServer(reply="```python\\nclass ModelNew: ...\\n```", latency_s=0.2) as srv:
        litellm.completion(model="openai/test", api_base=srv.api_base, api_key="x", messages=...)

``script`` items (consumed in order; afterwards every request gets the default reply) are
:class:`Reply` objects: status code, content, reasoning text, usage, extra headers, delay.
Every request is recorded (``srv.requests``: parsed body, headers (names lower-cased: HTTP header
names are case-insensitive and clients differ), arrival time).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["LoopbackServer", "Reply"]


@dataclass
class Reply:
    """One scripted answer.

    Attributes:
        content: the assistant message text (ignored for an error status).
        status: HTTP status; 200 answers a completion, anything else an OpenAI-style error body.
        delay_s: seconds to wait before answering (on top of the server's ``latency_s``).
        reasoning: ``reasoning_content`` of the message (thinking models), or None.
        usage: the ``usage`` object; None = counted from the text (4 characters a token).
        headers: extra response headers (e.g. ``{"Retry-After": "1"}`` with status 429).
    """

    content: str = ""
    status: int = 200
    delay_s: float = 0.0
    reasoning: str | None = None
    usage: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)


class LoopbackServer:
    """An OpenAI-compatible server on an ephemeral loopback port (use as a context manager).

    Args:
        reply: the default reply text, or a function ``(request body) -> Reply``.
        script: replies for the first requests, in order.
        latency_s: artificial latency of every request.
    """

    def __init__(
        self,
        reply: str | Callable[[dict[str, Any]], Reply] = "",
        script: list[Reply] | None = None,
        latency_s: float = 0.0,
    ) -> None:
        self.default = reply
        self.script = list(script or [])
        self.latency_s = float(latency_s)
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0  # chat requests being answered now
        self.max_in_flight = 0  # the most at once so far (a concurrency limit's test reads it)
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def api_base(self) -> str:
        assert self._httpd is not None, "start the server first"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self.script:
                return self.script.pop(0)
        if callable(self.default):
            return self.default(body)
        return Reply(content=self.default)

    def start(self) -> LoopbackServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = {}
                with server._lock:
                    server.requests.append(
                        {
                            "path": self.path,
                            "body": body,
                            "headers": {k.lower(): v for k, v in self.headers.items()},
                            "time": time.monotonic(),
                        }
                    )
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                reply = server._next(body)
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                time.sleep(server.latency_s + reply.delay_s)
                with server._lock:
                    server.in_flight -= 1
                if reply.status != 200:
                    return self._send(
                        reply.status,
                        {
                            "error": {
                                "message": f"scripted HTTP {reply.status}",
                                "type": "server_error",
                                "code": reply.status,
                            }
                        },
                        reply.headers,
                    )
                message: dict[str, Any] = {"role": "assistant", "content": reply.content}
                if reply.reasoning is not None:
                    message["reasoning_content"] = reply.reasoning
                prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
                usage = reply.usage or {
                    "prompt_tokens": max(1, prompt_chars // 4),
                    "completion_tokens": max(1, len(reply.content) // 4),
                    "total_tokens": max(1, prompt_chars // 4) + max(1, len(reply.content) // 4),
                }
                doc = {
                    "id": f"chatcmpl-loopback-{len(server.requests)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", "loopback"),
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": usage,
                }
                self._send(200, doc, reply.headers)

            def _send(self, status: int, doc: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(doc).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (its deadline)
                    pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="loopback-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
