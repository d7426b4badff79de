"""Short error reports that point at the model's own lines, never at sandbox internals."""

import traceback
from typing import Any

from sandbox.policy import RestrictedSyntaxError

_MAX_FRAMES = 6


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # a sandbox-defined __str__ may fail; still report the type
        return "<unprintable message>"


def format_syntax_error(exc: SyntaxError, current: str) -> str:
    """`SyntaxError: msg (cell line N)` plus the offending line and a caret."""
    if isinstance(exc, RestrictedSyntaxError):
        return f"SyntaxError: refused by the sandbox: {exc.msg}"
    where = f" (cell line {exc.lineno})" if exc.lineno else ""
    text = f"SyntaxError: {exc.msg}{where}"
    lines = current.splitlines()
    if exc.lineno and 0 < exc.lineno <= len(lines):
        line = lines[exc.lineno - 1]
        stripped = line.lstrip()
        text += f"\n    {stripped}"
        if exc.offset:
            caret = max(0, exc.offset - 1 - (len(line) - len(stripped)))
            text += "\n    " + " " * caret + "^"
    return text


def format_exception(exc: BaseException, sources: dict[str, list[str]], current: str) -> str:
    """`Traceback (cell line N):` + the model's frames (cells only) + `Type: message`."""
    frames: list[tuple[str, int, str]] = [
        (frame.f_code.co_filename, lineno, frame.f_code.co_name)
        for frame, lineno in traceback.walk_tb(exc.__traceback__)
        if frame.f_code.co_filename in sources
    ]
    message = f"{type(exc).__name__}: {_safe_str(exc)}"
    if not frames:
        return message
    first = next((f for f in frames if f[0] == current), frames[0])
    lines = [f"Traceback (cell line {first[1]}):"]
    shown: list[Any] = frames
    if len(frames) > _MAX_FRAMES:
        skipped = len(frames) - _MAX_FRAMES + 1
        shown = [frames[0], f"  ... {skipped} more frames ...", *frames[-(_MAX_FRAMES - 2) :]]
    for item in shown:
        if isinstance(item, str):
            lines.append(item)
            continue
        filename, lineno, name = item
        source = sources[filename]
        code = source[lineno - 1].strip() if 0 < lineno <= len(source) else ""
        place = f"line {lineno}" if filename == current else f"line {lineno} of {filename[1:-1]}"
        if name != "<module>":
            place += f", in {name}"
        lines.append(f"  {place}: {code}")
    lines.append(message)
    return "\n".join(lines)
