"""The `offline` root's policy for the generated workloads (`rlm-docs bench make`).

A question in one of the workloads' published forms is parsed into a task (data), and turn 1
writes REPL code for it:

- **aggregation** (OOLONG label counts, most/least common, comparisons, restricted to a user,
  a month or a date range; the user with the most instances of a label) and **pairs** (OOLONG-Pairs): the code parses the
  `Date: … || User: … || Instance: …` lines of `context`, cuts them into chunks of
  CHUNK_LINES lines, and classifies every chunk with one sub-call (`llm_query_batched`) whose
  prompt lists the numbered questions and the labels; it then counts, filters and pairs in
  Python. The number of sub-calls is ceil(lines / CHUNK_LINES): it grows with the context.
  When the sub-call budget runs out first, it answers from the entries classified so far.
- **most represented user**: the same parsing and a count of user ids, with no sub-call (the
  labels are not needed).
- **needle**: `grep` for each key the question names and read the number on the matching line
  (no sub-call: a lookup needs none).

The offline sub-model answers the classification prompt with the rule set of
`offline_trec.classify` (see `classification_reply`); the labels are never in the context.
"""

import re
from datetime import datetime

from rlm_docs.bench.trec import LABELS
from rlm_docs.models.offline_trec import classify

CHUNK_LINES = 500
CLASSIFY_HEAD = (
    "Classify each numbered question below into exactly one of these categories: "
    + ", ".join(LABELS)
    + ".\nReply with one line per question, in the form `N: category`, and nothing else."
)
_LABEL = "(" + "|".join(sorted(LABELS, key=len, reverse=True)) + ")"
_DAY = r"(\w{3} \d{2}, \d{4})"
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}


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


_PARSE_CODE = """
import re
from collections import Counter
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
LINE = r"^Date: (\\w{3}) (\\d{2}), (\\d{4}) \\|\\| User: (\\d+) \\|\\| Instance: (.*)$"
rows = []
for m in re.finditer(LINE, context, re.M):
    day = "%s-%02d-%s" % (m.group(3), MONTHS.index(m.group(1)) + 1, m.group(2))
    rows.append({"day": day, "user": int(m.group(4)), "text": m.group(5).strip(), "label": None})
print(len(rows), "entries")
"""

_MAP_CODE = """
# Map: classify the entries chunk by chunk, one sub-call per chunk, all in one batch.
chunks = [rows[i : i + CHUNK_LINES] for i in range(0, len(rows), CHUNK_LINES)]
prompts = []
for chunk in chunks:
    lines = [str(i + 1) + ": " + r["text"] for i, r in enumerate(chunk)]
    prompts.append(CLASSIFY_HEAD + "\\n\\n" + "\\n".join(lines))
# Batches of 8; when the budget refuses a batch, go on one chunk at a time until it refuses
# one, and answer from the entries classified so far.
replies, step = [], 8
while len(replies) < len(prompts):
    try:
        replies.extend(llm_query_batched(prompts[len(replies) : len(replies) + step]))
    except BudgetExceeded as exc:
        if step == 1:
            print("sub-call budget reached:", exc)
            break
        step = 1
for chunk, reply in zip(chunks, replies):
    got = {}
    for m in re.finditer(r"^\\s*(\\d+)\\s*[:.)-]\\s*(.+?)\\s*$", reply, re.M):
        label = m.group(2).strip(" .'`*").lower()
        got[int(m.group(1))] = label if label in LABELS else None
    for i, r in enumerate(chunk):
        r["label"] = got.get(i + 1)
print(len(chunks), "sub-calls;", sum(1 for r in rows if r["label"]), "entries labelled")
"""

_AGGREGATE_CODE = """
# Reduce: filter to the question's scope, count labels, answer in the form the question asks.
scope = task["scope"]
def in_scope(r):
    if "user" in scope:
        return r["user"] == scope["user"]
    if "month" in scope:
        return int(r["day"][5:7]) == scope["month"]
    if "range" in scope:
        return scope["range"][0] <= r["day"] <= scope["range"][1]
    return True
counts = Counter(r["label"] for r in rows if r["label"] and in_scope(r))
print("label counts in scope:", dict(counts))
kind = task["kind"]
if kind == "top_user_for_label":
    users = Counter(r["user"] for r in rows if r["label"] == task["label"])
    reply = "User: " + str(users.most_common(1)[0][0] if users else "")
elif kind == "count":
    reply = "Answer: " + str(counts.get(task["label"], 0))
elif kind == "compare":
    a, b = counts.get(task["a"], 0), counts.get(task["b"], 0)
    word = "more common than" if a > b else "less common than" if a < b else "same frequency as"
    reply = "Answer: " + task["a"] + " is " + word + " " + task["b"]
else:
    ranked = [lb for lb in LABELS if counts.get(lb)]
    ranked.sort(key=lambda lb: counts[lb], reverse=(kind == "most"))
    reply = "Label: " + (ranked[0] if ranked else LABELS[0])
final_answer = {"answer": [reply], "citations": []}
print("ANSWER:", reply)
print("OFFLINE_ANSWER" + "_READY")  # split so the echoed code does not match
"""

_PAIRS_CODE = """
# Reduce: per-user label counts and dates, then every pair of users meeting the condition.
rule = task["rule"]
profile = {}
for r in rows:
    if r["label"]:
        p = profile.setdefault(r["user"], {"n": Counter(), "days": {}})
        p["n"].update([r["label"]])
        p["days"].setdefault(r["label"], []).append(r["day"])
def holds(p, role):
    for label, op, n in role:
        have = p["n"].get(label, 0)
        if (op == "==" and have != n) or (op == ">=" and have < n):
            return False
    return True
def single(p):
    if sum(p["n"].get(lb, 0) for lb in rule["both"]) < 1:
        return False
    if "dated" not in rule:
        return True
    label, side, cut = rule["dated"]
    days = p["days"].get(label, [])
    return all(d > cut for d in days) if side == "after" else all(d < cut for d in days)
users = sorted(profile)
if "both" in rule:
    ok = [u for u in users if single(profile[u])]
    pairs = [(a, b) for i, a in enumerate(ok) for b in ok[i + 1 :]]
else:
    a_ok = {u for u in users if holds(profile[u], rule["a"])}
    b_ok = {u for u in users if holds(profile[u], rule["b"])}
    pairs = [(u, v) for i, u in enumerate(users) for v in users[i + 1 :]
             if (u in a_ok and v in b_ok) or (v in a_ok and u in b_ok)]
print(len(users), "users,", len(pairs), "pairs")
final_answer = {"answer": ["(%d, %d)" % p for p in pairs] or ["none"], "citations": []}
print("OFFLINE_ANSWER" + "_READY")  # split so the echoed code does not match
"""

_NEEDLE_CODE = """
import re
# Lookup: each key the question names, by exact match; the number on its line is the value.
values, citations = [], []
for key in task["keys"]:
    hits = grep(re.escape(key))
    print(key, "->", [(h["file"], h["page"], h["text"][:120]) for h in hits[:3]])
    for h in hits[:1]:
        found = re.findall(r"\\d[\\d,]{3,}\\d", h["text"].split(key, 1)[-1])
        if found:
            values.append(found[0].replace(",", ""))
            cite(h["file"], h["page"])
            citations.append({"file": h["file"], "page": h["page"]})
final_answer = {"answer": values, "citations": citations}
print("ANSWER:", values)
print("OFFLINE_ANSWER" + "_READY")  # split so the echoed code does not match
"""


_TOP_USER_CODE = """
# Who is represented most often needs no labels: count user ids.
users = Counter(r["user"] for r in rows)
reply = "User: " + str(users.most_common(1)[0][0] if users else "")
final_answer = {"answer": [reply], "citations": []}
print("ANSWER:", reply)
print("OFFLINE_ANSWER" + "_READY")  # split so the echoed code does not match
"""


def task_code(task: dict) -> str:
    """Turn-1 REPL code for a parsed workload task."""
    header = f"task = {task!r}\n"
    if task["kind"] == "needle":
        return header + _NEEDLE_CODE
    if task["kind"] == "top_user":
        return header + _PARSE_CODE + _TOP_USER_CODE
    header += (
        f"LABELS = {list(LABELS)!r}\nCLASSIFY_HEAD = {CLASSIFY_HEAD!r}\n"
        f"CHUNK_LINES = {CHUNK_LINES}\n"
    )
    tail = _PAIRS_CODE if task["kind"] == "pairs" else _AGGREGATE_CODE
    return header + _PARSE_CODE + _MAP_CODE + tail
