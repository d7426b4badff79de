"""The generated OOLONG workloads: parse the entries, classify them by chunks, count (sandbox code).

`context` holds `Date: … || User: … || Instance: …` lines. Aggregation and pairs questions need
every entry's label: the entries are cut into chunks of `chunk_lines`, each chunk classified by
one sub-call whose prompt numbers the entries (`classify_rows`), and the counting, filtering
and pairing is done here in Python. "Which user is represented most often" needs no labels.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from rlm_docs.offline.repl.readings import READY

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
LINE = r"^Date: (\w{3}) (\d{2}), (\d{4}) \|\| User: (\d+) \|\| Instance: (.*)$"


def parse_rows(context: str) -> list[dict]:
    """`[{day: YYYY-MM-DD, user, text, label: None}]`, one per entry line of `context`."""
    rows = []
    for m in re.finditer(LINE, context, re.M):
        day = f"{m.group(3)}-{MONTHS.index(m.group(1)) + 1:02d}-{m.group(2)}"
        rows.append(
            {"day": day, "user": int(m.group(4)), "text": m.group(5).strip(), "label": None}
        )
    print(len(rows), "entries")
    return rows


def classify_rows(
    rows: list[dict],
    chunk_lines: int,
    head: str,
    labels: list[str],
    read: Callable,
    refused: type[BaseException],
) -> None:
    """Label `rows` in place: one sub-call per chunk, sent in batches of 8. When the budget
    refuses a batch (`refused`, the sandbox's BudgetExceeded), go on one chunk at a time until
    it refuses one; the entries classified so far keep their labels."""
    chunks = [rows[i : i + chunk_lines] for i in range(0, len(rows), chunk_lines)]
    prompts = []
    for chunk in chunks:
        lines = [str(i + 1) + ": " + r["text"] for i, r in enumerate(chunk)]
        prompts.append(head + "\n\n" + "\n".join(lines))
    replies: list[str] = []
    step = 8
    while len(replies) < len(prompts):
        try:
            replies.extend(read(prompts[len(replies) : len(replies) + step]))
        except refused as exc:
            if step == 1:
                print("sub-call budget reached:", exc)
                break
            step = 1
    for chunk, reply in zip(chunks, replies, strict=False):
        got = {}
        for m in re.finditer(r"^\s*(\d+)\s*[:.)-]\s*(.+?)\s*$", reply, re.M):
            label = m.group(2).strip(" .'`*").lower()
            got[int(m.group(1))] = label if label in labels else None
        for i, r in enumerate(chunk):
            r["label"] = got.get(i + 1)
    print(len(chunks), "sub-calls;", sum(1 for r in rows if r["label"]), "entries labelled")


def in_scope(row: dict, scope: dict) -> bool:
    """Whether an entry is of the user, month or date range the question restricts to."""
    if "user" in scope:
        return row["user"] == scope["user"]
    if "month" in scope:
        return int(row["day"][5:7]) == scope["month"]
    if "range" in scope:
        return scope["range"][0] <= row["day"] <= scope["range"][1]
    return True


def finished(reply: str | list[str]) -> dict:
    """The final answer of a workload task (printed with the marker the root waits for)."""
    answers = reply if isinstance(reply, list) else [reply]
    print("ANSWER:", answers)
    print(READY)
    return {"values": answers, "citations": []}


def aggregate_answer(task: dict, rows: list[dict], labels: list[str]) -> dict:
    """Count labels in the question's scope and answer in the form the question asks for."""
    counts = Counter(r["label"] for r in rows if r["label"] and in_scope(r, task["scope"]))
    print("label counts in scope:", dict(counts))
    kind = task["kind"]
    if kind == "top_user_for_label":
        users = Counter(r["user"] for r in rows if r["label"] == task["label"])
        return finished("User: " + str(users.most_common(1)[0][0] if users else ""))
    if kind == "count":
        return finished("Answer: " + str(counts.get(task["label"], 0)))
    if kind == "compare":
        a, b = counts.get(task["a"], 0), counts.get(task["b"], 0)
        word = "more common than" if a > b else "less common than" if a < b else "same frequency as"
        return finished("Answer: " + task["a"] + " is " + word + " " + task["b"])
    ranked = [lb for lb in labels if counts.get(lb)]
    ranked.sort(key=lambda lb: counts[lb], reverse=(kind == "most"))
    return finished("Label: " + (ranked[0] if ranked else labels[0]))


def holds(profile: dict, role: list) -> bool:
    """Whether a user's label counts meet every `[label, op, n]` of a role."""
    for label, op, n in role:
        have = profile["n"].get(label, 0)
        if (op == "==" and have != n) or (op == ">=" and have < n):
            return False
    return True


def qualifies(profile: dict, rule: dict) -> bool:
    """A user for a "both users" rule: an instance of either label, and (if the rule dates
    one label) all of its instances after / before the cut-off day."""
    if sum(profile["n"].get(lb, 0) for lb in rule["both"]) < 1:
        return False
    if "dated" not in rule:
        return True
    label, side, cut = rule["dated"]
    days = profile["days"].get(label, [])
    return all(d > cut for d in days) if side == "after" else all(d < cut for d in days)


def pairs_answer(task: dict, rows: list[dict]) -> dict:
    """Every pair of users meeting the task's rule, from per-user label counts and dates."""
    rule = task["rule"]
    profiles: dict = {}
    for r in rows:
        if r["label"]:
            p = profiles.setdefault(r["user"], {"n": Counter(), "days": {}})
            p["n"].update([r["label"]])
            p["days"].setdefault(r["label"], []).append(r["day"])
    users = sorted(profiles)
    if "both" in rule:
        ok = [u for u in users if qualifies(profiles[u], rule)]
        pairs = [(a, b) for i, a in enumerate(ok) for b in ok[i + 1 :]]
    else:
        a_ok = {u for u in users if holds(profiles[u], rule["a"])}
        b_ok = {u for u in users if holds(profiles[u], rule["b"])}
        pairs = [
            (u, v)
            for i, u in enumerate(users)
            for v in users[i + 1 :]
            if (u in a_ok and v in b_ok) or (v in a_ok and u in b_ok)
        ]
    print(len(users), "users,", len(pairs), "pairs")
    return finished([f"({a}, {b})" for a, b in pairs] or ["none"])


def top_user_answer(rows: list[dict]) -> dict:
    """The user with the most entries (no labels needed)."""
    users = Counter(r["user"] for r in rows)
    return finished("User: " + str(users.most_common(1)[0][0] if users else ""))
