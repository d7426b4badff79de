"""The offline root's policy for the generated workloads (`rlm-docs bench make`).

A question in one of the workloads' published forms is parsed into a task (data), and turn 1
writes a cell running the code of `repl.oolong` or `repl.needle` on it:

- **aggregation** (OOLONG label counts, most/least common, comparisons, restricted to a user,
  a month or a date range; the user with the most instances of a label) and **pairs**
  (OOLONG-Pairs): parse the `Date: … || User: … || Instance: …` lines of `context`, classify
  them in chunks of CHUNK_LINES lines with one sub-call each (`llm_query_batched`), whose
  prompt lists the numbered entries and the labels, then count, filter and pair in Python.
  The number of sub-calls is ceil(lines / CHUNK_LINES): it grows with the context. When the
  sub-call budget runs out first, it answers from the entries classified so far.
- **most represented user**: the same parsing and a count of user ids, with no sub-call.
- **needle**: `grep` for each key the question names and read the number on the matching line
  (no sub-call: a lookup needs none).

The offline sub-model answers the classification prompt with the rule set of
`rlm_docs.offline.trec.classify` (see `classification_reply`); the labels are never in the
context.
"""

import re
from datetime import datetime

from rlm_docs.offline.repl import needle, oolong, readings
from rlm_docs.offline.ship import cell
from rlm_docs.offline.trec import classify
from rlm_docs.trec_labels import LABELS

CHUNK_LINES = 500
CLASSIFY_HEAD = (
    "Classify each numbered question below into exactly one of these categories: "
    + ", ".join(LABELS)
    + ".\nReply with one line per question, in the form `N: category`, and nothing else."
)
_LABEL = "(" + "|".join(sorted(LABELS, key=len, reverse=True)) + ")"
_DAY = r"(\w{3} \d{2}, \d{4})"
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_NO_SUB_CALLS = ("needle", "top_user")


def _day(text: str, form: str) -> str:
    return datetime.strptime(text, form).date().isoformat()


def _scope(q: str) -> dict:
    user = re.search(r"associated with user IDs (\d+)\.", q)
    if user:
        return {"user": int(user.group(1))}
    month = re.search(r"occur in (\w+) of any year", q)
    if month:
        return {"month": datetime.strptime(month.group(1), "%B").month}
    span = re.search(rf"occur between {_DAY} and {_DAY}, inclusive", q)
    if span:
        return {"range": [_day(s, "%b %d, %Y") for s in span.groups()]}
    return {}


def _roles(text: str) -> list[list]:
    """`at least two instances with X, exactly one instance with Y and one with Z` as
    [[label, op, n], ...] ("one with Z" keeps the previous qualifier, as the wording means)."""
    out, op = [], ">="
    pattern = rf"(at least |exactly )?(one|two|three|four|five|\d+) (?:instances? )?with {_LABEL}"
    for qualifier, count, label in re.findall(pattern, text):
        op = {"at least ": ">=", "exactly ": "==", "": op}[qualifier]
        out.append([label, op, _NUMBERS.get(count) or int(count)])
    return out


def _pairs_rule(q: str) -> dict | None:
    both = re.search(
        rf"where both users have at least one instance with (?:an? )?{_LABEL} or "
        rf"(?:an? )?{_LABEL}(?:, and all instances that are (?:an? )?{_LABEL} for "
        r"both users must be (after|before) (\w+ \d{1,2}, \d{4}))?\.",
        q,
    )
    if both:
        rule: dict = {"both": [both.group(1), both.group(2)]}
        if both.group(3):
            rule["dated"] = [both.group(3), both.group(4), _day(both.group(5), "%B %d, %Y")]
        return rule
    split = re.search(r"such that one user has (.+?), and the other user has (.+?)\. Each", q)
    if split:
        a, b = _roles(split.group(1)), _roles(split.group(2))
        return {"a": a, "b": b} if a and b else None
    return None


def parse_task(question: str) -> dict | None:
    """The workload task a question asks for, as data for the REPL code; None otherwise."""
    q = " ".join(question.split())
    if "list all pairs of user IDs" in q:
        rule = _pairs_rule(q)
        return {"kind": "pairs", "rule": rule} if rule else None
    keys = re.findall(r"special magic numbers? for (.+?) mentioned in the documents", q)
    if keys:
        return {"kind": "needle", "keys": re.split(r", | and ", keys[0])}
    found = re.search(r"how many data points should be classified as label '([^']+)'", q)
    if found:
        return {"kind": "count", "label": found.group(1), "scope": _scope(q)}
    found = re.search(
        r"is label '([^']+)' more common, less common, or the same frequency as "
        r"label '([^']+)'\?",
        q,
    )
    if found:
        return {"kind": "compare", "a": found.group(1), "b": found.group(2), "scope": _scope(q)}
    if "which user is represented most often?" in q:
        return {"kind": "top_user"}
    found = re.search(rf"which user has the most instances with the label {_LABEL}\?", q)
    if found:
        return {"kind": "top_user_for_label", "label": found.group(1), "scope": {}}
    found = re.search(r"which of the labels is the (most|least) common\?", q)
    if found:
        return {"kind": found.group(1), "scope": _scope(q)}
    return None


def classification_reply(prompt: str) -> str | None:
    """The sub-model's reply to a classification prompt (`N: label` per line), else None."""
    if not prompt.lstrip().startswith(CLASSIFY_HEAD[:60]):
        return None
    items = re.findall(r"^(\d+): (.+)$", prompt.split(CLASSIFY_HEAD, 1)[-1], re.M)
    return "\n".join(f"{n}: {classify(text)}" for n, text in items)


def needs_sub_calls(task: dict) -> bool:
    """Whether the task's code classifies entries with sub-calls (not a lookup or a user count)."""
    return task["kind"] not in _NO_SUB_CALLS


def cell_for(task: dict) -> str:
    """Turn-1 REPL cell for a parsed workload task."""
    if task["kind"] == "needle":
        return cell(
            [readings, needle], f"task = {task!r}\nfinal_answer = needle_answer(task, grep, cite)"
        )
    parse = f"task = {task!r}\nrows = parse_rows(context)\n"
    if task["kind"] == "top_user":
        return cell([readings, oolong], parse + "final_answer = top_user_answer(rows)")
    classify_call = (
        f"LABELS = {list(LABELS)!r}\n"
        f"classify_rows(rows, {CHUNK_LINES}, {CLASSIFY_HEAD!r}, LABELS, llm_query_batched, "
        "BudgetExceeded)\n"
    )
    if task["kind"] == "pairs":
        return cell(
            [readings, oolong], parse + classify_call + "final_answer = pairs_answer(task, rows)"
        )
    return cell(
        [readings, oolong],
        parse + classify_call + "final_answer = aggregate_answer(task, rows, LABELS)",
    )
