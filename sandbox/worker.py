"""The sandbox worker: a persistent restricted namespace served over framed pipes.

A worker is a process forked from a fork server (`sandbox.fork_server`) that has already
imported every module and loaded the host's preload (`sandbox.preload`); the worker confines itself (`confine`), then answers
requests one at a time (see `protocol`).
"""

import builtins
import contextlib
import keyword
import sys
from collections.abc import Callable
from typing import Any

from sandbox import confine, protocol
from sandbox.output import Output, bounded
from sandbox.policy import compile_cell, make_builtins
from sandbox.tracebacks import format_exception, format_syntax_error
from sandbox.values import capped, check_nesting, describe, to_jsonable


class HostError(Exception):
    """Base of exceptions re-raised from host functions under the host exception's name."""


class BudgetExceeded(HostError):
    """A host function refused the call because a budget limit was reached."""


_BUILTIN_EXCEPTIONS = {
    name: value
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, Exception)
}


class Channel:
    """The worker's end of the pipes; host functions become RPCs over it."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.reader = protocol.FrameReader(read_fd)
        self.write_fd = write_fd
        self.exceptions: dict[str, type[BaseException]] = {"BudgetExceeded": BudgetExceeded}
        self.on_new_exception: Callable[[str, type], None] = lambda name, cls: None
        self.request_id: Any = None

    def send(self, message: dict[str, Any], limit: int = protocol.MAX_FRAME_BYTES) -> None:
        """Send a frame tagged with the id of the request being served; OverflowError naming
        the size if it is over `limit` bytes."""
        frame = protocol.encode({**message, "id": self.request_id})
        if len(frame) > limit:
            raise OverflowError(f"{len(frame):,} bytes, over the limit of {limit:,}")
        protocol.send_bytes(self.write_fd, frame)

    def receive(self) -> dict[str, Any]:
        message = self.reader.read()
        assert message is not None  # no deadline: blocks until a frame or EOF
        return message

    def exception(self, name: str) -> type[BaseException]:
        """The class to raise for a host exception called `name` (created once if new)."""
        if name in self.exceptions:
            return self.exceptions[name]
        if name in _BUILTIN_EXCEPTIONS:
            return _BUILTIN_EXCEPTIONS[name]
        if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
            return HostError
        cls = type(name, (HostError,), {"__module__": "sandbox"})
        self.exceptions[name] = cls
        self.on_new_exception(name, cls)
        return cls

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call host function `name`; its exception is re-raised here under the same class name."""
        message = {"op": "call", "name": name, "args": list(args), "kwargs": kwargs}
        try:
            check_nesting([args, kwargs])
            self.send(message, protocol.MAX_CALL_BYTES)
        except OverflowError as exc:  # checked here, so the host never has to hold it
            raise ValueError(f"{name}() arguments are too large: {exc}; send less") from None
        except (TypeError, ValueError, RecursionError) as exc:
            raise TypeError(
                f"{name}() arguments must be JSON-able (str, int, float, bool, None, list, dict "
                f"with str keys): {exc}"
            ) from None
        reply = self.receive()
        if reply["op"] == "return":
            return reply.get("value")
        if reply["op"] == "raise":
            raise self.exception(str(reply.get("type")))(str(reply.get("message", "")))
        raise protocol.ProtocolError(f"unexpected reply {reply['op']!r} to a call")


def _stub(channel: Channel, name: str) -> Callable[..., Any]:
    """A plain function that forwards to the host; it holds nothing of the host object."""

    def host_function(*args: Any, **kwargs: Any) -> Any:
        return channel.call(name, args, kwargs)

    host_function.__name__ = host_function.__qualname__ = name
    return host_function


def _plain(method: Callable[[], Any], name: str) -> Callable[[], Any]:
    """A plain function calling `method`, so sandbox code never holds a bound worker method."""

    def function() -> Any:
        return method()

    function.__name__ = function.__qualname__ = name
    return function


class _Printer:
    """RestrictedPython's `_print_`: `print()` in sandbox code writes to the cell output."""

    def __init__(self, _getattr: Any = None) -> None:
        self.collected: list[str] = []

    def _call_print(
        self, *objects: Any, sep: str | None = " ", end: str | None = "\n", **_: Any
    ) -> None:
        text = (" " if sep is None else str(sep)).join(map(str, objects)) + (
            "\n" if end is None else str(end)
        )
        self.collected.append(text)
        sys.stdout.write(text)

    def __call__(self) -> str:
        return "".join(self.collected)


class Worker:
    """The namespace and the request loop."""

    def __init__(
        self, channel: Channel, request: dict[str, Any], preloaded: dict[str, Any]
    ) -> None:
        self.channel = channel
        self.output_limit = int(request["limits"]["max_output_chars"])
        self.cpu_s = int(request["limits"]["cpu_s"])
        self.modules = preloaded["modules"]
        self.builtins = make_builtins(self._import, _Printer, self._display)
        self.sources: dict[str, list[str]] = {}
        self.cells = 0
        self.output = Output(self.output_limit)
        names = request.get("names")
        preload: dict[str, Any] = preloaded.get("namespace") or {}
        for name, value in preload.items():  # the host's own errors, always bound
            if isinstance(value, type) and issubclass(value, Exception):
                channel.exceptions[name] = value
        preload_names = {
            name: value for name, value in preload.items() if names is None or name in names
        }
        self.logs: dict[str, list[Any]] = preloaded.get("logs") or {}
        self.scaffold: dict[str, Any] = {
            **channel.exceptions,
            **preload_names,
            "SHOW_VARS": _plain(self.user_variables, "SHOW_VARS"),
        }
        for name in request.get("functions", []):  # host functions win over same-named helpers
            self.scaffold[name] = _stub(channel, name)
        self.namespace: dict[str, Any] = {"__builtins__": self.builtins, "__name__": "sandbox"}
        self.namespace.update(self.scaffold)
        channel.on_new_exception = self._bind

    def _import(
        self, name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
    ) -> Any:
        if level == 0 and name in self.modules:
            return self.modules[name]
        allowed = ", ".join(sorted(n for n in self.modules if not n.startswith("_")))
        raise ImportError(f"module {name!r} is not available in the sandbox (allowed: {allowed})")

    def _display(self, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, str) and len(value) > 2 * self.output_limit:
            text = f"{value[: self.output_limit]!r} ... [{len(value):,} chars in total]"
        else:
            text = repr(value)
        self.output.write(text + "\n")

    def run(self, code: str) -> dict[str, Any]:
        self.cells += 1
        filename = f"<cell {self.cells}>"
        self.sources[filename] = code.splitlines()
        self.output = Output(self.output_limit)
        try:
            compiled = compile_cell(code, filename)
        except SyntaxError as exc:
            return {"op": "done", "stdout": "", "error": format_syntax_error(exc, code)}
        except (RecursionError, MemoryError, ValueError) as exc:  # e.g. absurdly nested code
            return {"op": "done", "stdout": "", "error": f"{type(exc).__name__}: {exc}"}
        error = None
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = self.output
        self.namespace["__builtins__"] = self.builtins  # whatever an earlier cell did to it
        try:
            exec(compiled, self.namespace)
        except BaseException as exc:  # the cell's failure is reported, the worker goes on
            error = format_exception(exc, self.sources, filename)
        finally:
            sys.stdout, sys.stderr = saved
            self._restore_scaffold()
        if error is not None:
            error = bounded(error, self.output_limit)
        return {"op": "done", "stdout": self.output.getvalue(), "error": error}

    def _bind(self, name: str, value: Any) -> None:
        """Add a sandbox-provided name (e.g. a new host exception class) for this and later cells."""
        self.scaffold[name] = value
        self.namespace[name] = value

    def _restore_scaffold(self) -> None:
        """A sandbox name the cell deleted comes back; one it rebound is the model's variable
        from now on (never overwritten behind its back, and listed by `SHOW_VARS`)."""
        for name, value in list(self.scaffold.items()):
            if name not in self.namespace:
                self.namespace[name] = value
            elif self.namespace[name] is not value:
                del self.scaffold[name]

    def user_variables(self) -> dict[str, str]:
        """`{name: short description}` of the variables the code defined (`SHOW_VARS()` in a
        cell, `Sandbox.variables()` on the host): the live namespace, not a snapshot."""
        return {
            key: describe(value)
            for key, value in self.namespace.items()
            if not key.startswith("_") and key not in self.scaffold
        }

    def log(self, name: str) -> list[Any]:
        """A copy of the preload's log `name` (`Sandbox.log(name)` on the host; [] when there
        is none): the logs themselves are never in the namespace."""
        return [
            list(item) if isinstance(item, tuple | list) else item
            for item in self.logs.get(name) or []
        ]

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request["op"]
        if op == "run":
            return self.run(str(request.get("code", "")))
        name = str(request.get("name", ""))
        if op == "get":
            if name not in self.namespace or name.startswith("_"):
                return {"op": "error", "type": "KeyError", "message": name}
            value = to_jsonable(self.namespace[name])
            limit = request.get("max_chars")
            if type(limit) is int:
                value = capped(value, limit)
            return {"op": "value", "value": value}
        if op == "set":
            if not name.isidentifier() or name.startswith("_") or keyword.iskeyword(name):
                return {
                    "op": "error",
                    "type": "ValueError",
                    "message": f"invalid variable name {name!r}",
                }
            self.namespace[name] = request.get("value")
            if name in self.scaffold:
                self.scaffold[name] = self.namespace[name]
            return {"op": "value", "value": None}
        if op == "vars":
            return {"op": "value", "value": self.user_variables()}
        if op == "log":
            return {"op": "value", "value": self.log(name)}
        return {"op": "error", "type": "ValueError", "message": f"unknown request {op!r}"}

    def serve(self) -> None:
        while True:
            request = self.channel.receive()
            confine.set_cell_cpu_limit(self.cpu_s)
            if type(request.get("memory_mb")) is int:
                confine.lower_memory(request["memory_mb"])
            self.channel.request_id = request.get("id")
            try:
                reply = {**self.handle(request), "id": self.channel.request_id}
                encoded = protocol.encode(reply)
            except Exception as exc:  # e.g. a value get() cannot copy
                encoded = protocol.encode(
                    {
                        "op": "error",
                        "type": type(exc).__name__,
                        "message": str(exc),
                        "id": self.channel.request_id,
                    }
                )
            protocol.send_bytes(self.channel.write_fd, encoded)


def run_worker(
    read_fd: int, write_fd: int, request: dict[str, Any], preloaded: dict[str, Any]
) -> None:
    """Body of a freshly forked worker: confine this process, say ready, serve until EOF."""
    channel = Channel(read_fd, write_fd)
    try:
        worker = Worker(channel, request, preloaded)
        limits = request["limits"]
        security = confine.confine(
            request["workdir"],
            memory_mb=int(limits["memory_mb"]),
            open_files=int(limits["max_open_files"]),
            file_mb=int(limits["max_file_mb"]),
            processes=int(limits["max_processes"]),
            disk_mb=int(limits["max_disk_mb"]),
            share_mb=int(limits["memory_share_mb"]) if "memory_share_mb" in limits else None,
        )
    except Exception as exc:  # reported to the host, which raises SandboxError
        channel.send({"op": "fatal", "message": f"{type(exc).__name__}: {exc}"})
        return
    channel.send({"op": "ready", "security": security})
    with contextlib.suppress(protocol.ProtocolError, OSError):  # the host went away
        worker.serve()
