"""OOLONG aggregation questions over one window, with exact gold from the entries' labels.

Templates are OOLONG-synth's, character for character (data set README, section 3.4.1), in
four scopes: the whole window, the instances of one user (OOLONG's user subset, one id), one
calendar month of any year, and an inclusive date range. Each scope emits the counting block
(most common / least common label, label comparisons, per-label counts) under OOLONG's
conditions (0.02 share margins, strict maxima); the whole window also gets OOLONG's user
questions U1 (most represented user) and U6 (user with the most instances of a label). One deviation, to keep the gold exact: a least-
common question is only asked when the minimum is not tied (OOLONG scores only the first of
tied labels, an order the model cannot see).
"""

import random
from collections import Counter
from dataclasses import dataclass

from rlm_docs.bench.trec import LABELS
from rlm_docs.bench.window import MONTHS, Entry, Window, show_date

OPENING = "In the above data,"
MOST = (
    " which of the labels is the most common? Give your final answer in the form "
    "'Label: answer' where answer is one of the labels: {labels}."
)
LEAST = MOST.replace("the most common?", "the least common?")
COMPARE = (
    " is label '{a}' more common, less common, or the same frequency as label '{b}'? Give your "
    "final answer in the form 'Answer: {a} is [X] {b}', where [X] is 'more common than', "
    "'less common than', or 'same frequency as'."
)
COUNT = (
    " how many data points should be classified as label '{label}'? Give your final answer in "
    "the form 'Answer: number'."
)
TOP_USER = (
    "In the above data, which user is represented most often? Give your final answer in the "
    "form 'User: [X]', where [X] is the user ID."
)
TOP_USER_FOR_LABEL = (
    "In the above data, which user has the most instances with the label {label}? Give your "
    "final answer in the form 'User: [X]', where [X] is the user ID."
)
USER_PREFIX = (
    "For the following question, only consider the subset of instances that are associated "
    "with user IDs {ids}. Among instances associated with these users,"
)
MONTH_PREFIX = (
    "For the following question, only consider the subset of instances that occur in {month} "
    "of any year. Among instances occuring in {month},"
)
RANGE_PREFIX = (
    "For the following question, only consider the subset of instances that occur between "
    "{start} and {end}, inclusive. Among instances occuring in this date range,"
)


@dataclass(frozen=True)
class Item:
    """One generated question: text, gold, how to score it, and what family it belongs to."""

    question: str
    answer: str
    answer_type: str  # label | comparison | numeric | user
    task: str  # most_common | least_common | comparison | count | top_user[_for_label]
    scope: str  # all | user | month | range

    @property
    def question_type(self) -> str:
        return self.task if self.scope == "all" else f"{self.task}_by_{self.scope}"


def label_counts(entries: list[Entry] | tuple[Entry, ...]) -> list[tuple[str, int]]:
    """(label, count) of the labels present, most frequent first, ties in canonical order."""
    counts = Counter(e.label for e in entries)
    return sorted(((lb, counts[lb]) for lb in LABELS if counts[lb]), key=lambda x: -x[1])


def counting_block(entries: list[Entry], opening: str, scope: str) -> list[Item]:
    """OOLONG's block C(M, prefix) over `entries` (empty when there are none)."""
    table = label_counts(entries)
    if not table:
        return []
    total = sum(c for _, c in table)
    share = {lb: c / total for lb, c in table}
    count = dict(table)
    names = ", ".join(lb for lb, _ in table)
    items = []
    top = table[0]
    if all(lb == top[0] or share[top[0]] - share[lb] > 0.02 for lb, _ in table):
        items.append(
            Item(opening + MOST.format(labels=names), top[0], "label", "most_common", scope)
        )
    low = min(c for _, c in table)
    tied = [lb for lb, c in table if c == low]
    if len(tied) == 1 and len(table) > 1:
        q = opening + LEAST.format(labels=names)
        items.append(Item(q, tied[0], "label", "least_common", scope))
    for i, (a, _) in enumerate(table):
        for b, _ in table[i + 1 :]:
            if abs(share[a] - share[b]) > 0.02 or count[a] == count[b]:
                if count[a] > count[b]:
                    gold = "more common than"
                elif count[a] < count[b]:
                    gold = "less common than"
                else:
                    gold = "same frequency as"
                q = opening + COMPARE.format(a=a, b=b)
                items.append(Item(q, gold, "comparison", "comparison", scope))
    for lb, c in table:
        items.append(Item(opening + COUNT.format(label=lb), str(c), "numeric", "count", scope))
    return items


def _top_users(entries: tuple[Entry, ...], limit: int = 50) -> list[int]:
    counts = Counter(e.user for e in entries)  # insertion order = first seen
    return [u for u, _ in sorted(counts.items(), key=lambda x: -x[1])][:limit]


def _date_range(entries: tuple[Entry, ...], rng: random.Random) -> tuple[int, int] | None:
    """OOLONG's T6 start/end indices on the date-sorted entries (None when too few)."""
    n = len(entries)
    days = sorted(e.day for e in entries)
    if n < 11:
        return None
    s = rng.randint(n // 10, n // 2)
    while s > 0 and days[s - 1] == days[s]:
        s -= 1
    e = min(n - 1, rng.randint(s + 10, max(s + 12, (9 * n) // 10)))
    while e + 1 < n and days[e + 1] == days[e]:
        e += 1
    return s, e


def user_questions(entries: tuple[Entry, ...]) -> list[Item]:
    """OOLONG's U1 (most represented user: no labels needed) and U6 (user with the most
    instances of each label, among that label's top ten users), when the top is strict."""
    items = []
    ranked = Counter(e.user for e in entries).most_common(2)
    if len(ranked) == 2 and ranked[0][1] > ranked[1][1]:
        items.append(Item(TOP_USER, str(ranked[0][0]), "user", "top_user", "all"))
    for label, _ in label_counts(entries):
        top = Counter(e.user for e in entries if e.label == label).most_common(10)
        if len(top) >= 2 and top[0][1] > top[1][1]:
            q = TOP_USER_FOR_LABEL.format(label=label)
            items.append(Item(q, str(top[0][0]), "user", "top_user_for_label", "all"))
    return items


def candidates(window: Window, rng: random.Random) -> list[Item]:
    """Every question of the four scopes (the caller samples from them)."""
    entries = window.entries
    items = counting_block(list(entries), OPENING, "all") + user_questions(entries)
    users = _top_users(entries)
    if users:
        user = rng.choice(users)
        subset = [e for e in entries if e.user == user]
        items += counting_block(subset, USER_PREFIX.format(ids=user), "user")
    months = sorted({e.day.month for e in entries})
    if months:
        month = rng.choice(months)
        subset = [e for e in entries if e.day.month == month]
        items += counting_block(subset, MONTH_PREFIX.format(month=MONTHS[month - 1]), "month")
    span = _date_range(entries, rng)
    if span:
        days = sorted(e.day for e in entries)
        start, end = days[span[0]], days[span[1]]
        subset = [e for e in entries if start <= e.day <= end]
        prefix = RANGE_PREFIX.format(start=show_date(start), end=show_date(end))
        items += counting_block(subset, prefix, "range")
    return items


def select(items: list[Item], count: int, rng: random.Random) -> list[Item]:
    """Up to `count` items, round-robin over question types so every family is represented."""
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(item.question_type, []).append(item)
    for group in groups.values():
        rng.shuffle(group)
    chosen: list[Item] = []
    while len(chosen) < count and any(groups.values()):
        for key in list(groups):
            if groups[key] and len(chosen) < count:
                chosen.append(groups[key].pop())
    return chosen
