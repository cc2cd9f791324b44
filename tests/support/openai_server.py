"""A real HTTP server speaking the OpenAI chat-completions protocol, scripted by tests.

It streams (SSE `chat.completion.chunk` events ending in `data: [DONE]`) or answers
plain JSON, emits tool calls with argument fragments, and can fail or hang on
purpose. The reply for a request comes from `policy(messages)`, so concurrent
conversations are told apart by their own history, not by server state.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    text: str | None = None
    tool: str | None = None
    arguments: Any = None
    raw_arguments: str | None = None  # malformed JSON on purpose


Policy = Callable[[list[dict[str, Any]]], Reply]


@dataclass
class ServerScript:
    policy: Policy
    fail_first: int = 0  # answer this many chat requests with `fail_status` first
    fail_status: int = 500
    fail_message: str = "scripted"
    hang_seconds: float = 0.0  # sleep before answering (deadline tests)
    requests: list[dict[str, Any]] = field(default_factory=list)
    failures_left: int = -1
    #: What a constraining server answers when a request names a tool (tool_choice
    #: {"type": "function", ...}): a call of that tool, whatever the policy would say.
    named_tool: Callable[[str], Reply] | None = None

    def __post_init__(self) -> None:
        self.failures_left = self.fail_first


def assistant_turns(messages: list[dict[str, Any]]) -> int:
    return sum(1 for m in messages if m.get("role") == "assistant")


def tool_outputs(messages: list[dict[str, Any]]) -> list[str]:
    out = []
    for m in messages:
        if m.get("role") == "tool":
            content = m.get("content")
            if isinstance(content, list):
                content = " ".join(part.get("text", "") for part in content)
            out.append(content or "")
    return out


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    script: ServerScript
    lock: threading.Lock

    def log_message(self, *args: Any) -> None:  # quiet
        return

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        else:
            self._json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        with self.lock:
            self.script.requests.append(
                {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
            )
            fail = self.script.failures_left > 0
            if fail:
                self.script.failures_left -= 1
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": "not found"}})
            return
        if fail:
            kind = "rate_limit_exceeded" if self.script.fail_status == 429 else "server_error"
            error = {"message": self.script.fail_message, "type": kind}
            self._json(self.script.fail_status, {"error": error})
            return
        if self.script.hang_seconds:
            time.sleep(self.script.hang_seconds)
        choice = body.get("tool_choice")
        if isinstance(choice, dict) and self.script.named_tool is not None:
            reply = self.script.named_tool(choice["function"]["name"])
        else:
            reply = self.script.policy(body.get("messages", []))
        if body.get("stream"):
            self._stream(body, reply)
        else:
            self._json(200, _completion(body, reply))

    def _stream(self, body: dict[str, Any], reply: Reply) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        cid, model = f"chatcmpl-{uuid.uuid4().hex[:10]}", body.get("model", "scripted")

        def send(choices: list[dict[str, Any]], **extra: Any) -> None:
            chunk = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": choices,
                **extra,
            }
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()

        if reply.tool:
            args = _arguments(reply)
            head = {
                "index": 0,
                "id": f"call_{uuid.uuid4().hex[:8]}",
                "type": "function",
                "function": {"name": reply.tool, "arguments": ""},
            }
            send(
                [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": None, "tool_calls": [head]},
                        "finish_reason": None,
                    }
                ]
            )
            for i in range(0, len(args), 16):
                part = {"index": 0, "function": {"arguments": args[i : i + 16]}}
                send([{"index": 0, "delta": {"tool_calls": [part]}, "finish_reason": None}])
            send([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}])
        else:
            send(
                [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]
            )
            send([{"index": 0, "delta": {"content": reply.text or ""}, "finish_reason": None}])
            send([{"index": 0, "delta": {}, "finish_reason": "stop"}])
        if (body.get("stream_options") or {}).get("include_usage"):
            send([], usage={"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


def _arguments(reply: Reply) -> str:
    return reply.raw_arguments if reply.raw_arguments is not None else json.dumps(reply.arguments)


def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool:
        message["tool_calls"] = [
            {
                "id": f"call_{uuid.uuid4().hex[:8]}",
                "type": "function",
                "function": {"name": reply.tool, "arguments": _arguments(reply)},
            }
        ]
    choice: dict[str, Any] = {
        "index": 0,
        "message": message,
        "finish_reason": "tool_calls" if reply.tool else "stop",
    }
    if body.get("logprobs"):  # as vLLM answers: per-token logprobs and, on request, ids
        choice["logprobs"] = {"content": scripted_logprobs(len(message.get("content") or "x"))}
        choice["token_ids"] = list(range(7, 7 + 5))
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:10]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "scripted"),
        "choices": [choice],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


def scripted_logprobs(count: int) -> list[dict[str, Any]]:
    """Deterministic per-token logprobs, so a test can check they arrive unchanged."""
    return [
        {
            "token": f"t{i}",
            "logprob": -0.125 * (i + 1),
            "bytes": [116, 48 + i % 10],
            "top_logprobs": [],
        }
        for i in range(min(count, 5))
    ]


class _QuietServer(ThreadingHTTPServer):
    """A client that gives up (deadline tests do, on purpose) is not an error here."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        return


class ScriptedOpenAIServer:
    """Context manager: `with ScriptedOpenAIServer(script) as server: server.base_url`."""

    def __init__(self, script: ServerScript) -> None:
        handler = type("Handler", (_Handler,), {"script": script, "lock": threading.Lock()})
        self.script = script
        self.httpd = _QuietServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ScriptedOpenAIServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.script.requests if r["path"].endswith("/chat/completions")]
