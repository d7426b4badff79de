"""OOLONG-Pairs: the 20 quadratic pair tasks of the Recursive Language Models paper (Zhang,
Kraska, Khattab, arXiv:2512.24601, appendix "OOLONG-Pairs", CC BY 4.0; conditions quoted
verbatim), with gold computed from the window's labels as the data set README (section 4.3)
reads them: per-user label counts, unordered pairs of distinct users, "at least"/"exactly"
literal, date clauses strict and vacuously true for a user without lines of that label.
"""

from datetime import date

from rlm_docs.bench.window import Entry

PREFIX = "In the above data, list all pairs of user IDs (no duplicate pairs, list lower ID first) "
SUFFIX = (
    " Each of the questions can be labelled as one of the labels (the data does not provide the "
    "labels, you need to figure out the label from the semantics of the question): description "
    "and abstract concept, entity, human being, numeric value, location, abbreviation. In your "
    "answer, list all pairs in the format (user_id_1, user_id_2), separated by newlines."
)
_D, _E, _H = "description and abstract concept", "entity", "human being"
_N, _L, _A = "numeric value", "location", "abbreviation"

# (condition text, predicate): "both" = (labels of which one suffices, optional date clause
# (label, "after"|"before", day)); "pair" = (role A, role B), each a list of (label, op, n).
TASKS: list[tuple[str, dict]] = [
    (
        "where both users have at least one instance with a numeric value or location.",
        {"both": [_N, _L]},
    ),
    (
        "where both users have at least one instance with an entity or human being.",
        {"both": [_E, _H]},
    ),
    (
        "where both users have at least one instance with a description and abstract concept "
        "or abbreviation.",
        {"both": [_D, _A]},
    ),
    (
        "where both users have at least one instance with a human being or location, and all "
        "instances that are a human being for both users must be after January 6, 2023.",
        {"both": [_H, _L], "dated": (_H, "after", date(2023, 1, 6))},
    ),
    (
        "where both users have at least one instance with an entity or numeric value, and all "
        "instances that are an entity for both users must be before March 15, 2023.",
        {"both": [_E, _N], "dated": (_E, "before", date(2023, 3, 15))},
    ),
    (
        "where both users have at least one instance with a location or abbreviation.",
        {"both": [_L, _A]},
    ),
    (
        "where both users have at least one instance with a description and abstract concept "
        "or numeric value, and all instances that are a numeric value for both users must be "
        "after February 1, 2023.",
        {"both": [_D, _N], "dated": (_N, "after", date(2023, 2, 1))},
    ),
    (
        "where both users have at least one instance with a human being or description and "
        "abstract concept.",
        {"both": [_H, _D]},
    ),
    (
        "where both users have at least one instance with an entity or location, and all "
        "instances that are a location for both users must be after April 10, 2023.",
        {"both": [_E, _L], "dated": (_L, "after", date(2023, 4, 10))},
    ),
    (
        "where both users have at least one instance with a numeric value or abbreviation, and "
        "all instances that are an abbreviation for both users must be before May 20, 2023.",
        {"both": [_N, _A], "dated": (_A, "before", date(2023, 5, 20))},
    ),
    (
        "such that one user has at least one instance with entity and one with abbreviation, "
        "and the other user has exactly one instance with entity.",
        {"a": [(_E, ">=", 1), (_A, ">=", 1)], "b": [(_E, "==", 1)]},
    ),
    (
        "such that one user has at least two instances with numeric value, and the other user "
        "has at least one instance with location and at least one instance with human being.",
        {"a": [(_N, ">=", 2)], "b": [(_L, ">=", 1), (_H, ">=", 1)]},
    ),
    (
        "such that one user has exactly one instance with description and abstract concept, and "
        "the other user has at least one instance with abbreviation and at least one instance "
        "with entity.",
        {"a": [(_D, "==", 1)], "b": [(_A, ">=", 1), (_E, ">=", 1)]},
    ),
    (
        "such that one user has at least one instance with human being and at least one "
        "instance with numeric value, and the other user has exactly two instances with "
        "location.",
        {"a": [(_H, ">=", 1), (_N, ">=", 1)], "b": [(_L, "==", 2)]},
    ),
    (
        "such that one user has at least one instance with entity, at least one instance with "
        "location, and at least one instance with abbreviation, and the other user has exactly "
        "one instance with numeric value.",
        {"a": [(_E, ">=", 1), (_L, ">=", 1), (_A, ">=", 1)], "b": [(_N, "==", 1)]},
    ),
    (
        "such that one user has at least one instance with description and abstract concept "
        "and at least one instance with human being, and the other user has at least two "
        "instances with entity and exactly one instance with abbreviation.",
        {"a": [(_D, ">=", 1), (_H, ">=", 1)], "b": [(_E, ">=", 2), (_A, "==", 1)]},
    ),
    (
        "such that one user has exactly one instance with numeric value, and the other user has "
        "at least one instance with location and at least one instance with description and "
        "abstract concept.",
        {"a": [(_N, "==", 1)], "b": [(_L, ">=", 1), (_D, ">=", 1)]},
    ),
    (
        "such that one user has at least one instance with abbreviation and exactly one "
        "instance with human being, and the other user has at least one instance with entity "
        "and at least one instance with numeric value.",
        {"a": [(_A, ">=", 1), (_H, "==", 1)], "b": [(_E, ">=", 1), (_N, ">=", 1)]},
    ),
    (
        "such that one user has at least two instances with location and at least one instance "
        "with entity, and the other user has exactly one instance with description and "
        "abstract concept and exactly one instance with abbreviation.",
        {"a": [(_L, ">=", 2), (_E, ">=", 1)], "b": [(_D, "==", 1), (_A, "==", 1)]},
    ),
    (
        "such that one user has at least one instance with numeric value and at least one "
        "instance with human being, and the other user has at least one instance with "
        "location, at least one instance with entity, and exactly one instance with "
        "abbreviation.",
        {"a": [(_N, ">=", 1), (_H, ">=", 1)], "b": [(_L, ">=", 1), (_E, ">=", 1), (_A, "==", 1)]},
    ),
]


def question(task: int) -> str:
    """The full query of task `task` (1-based)."""
    return PREFIX + TASKS[task - 1][0] + SUFFIX


def _holds(counts: dict[str, int], role: list[tuple[str, str, int]]) -> bool:
    return all(
        counts.get(lb, 0) == n if op == "==" else counts.get(lb, 0) >= n for lb, op, n in role
    )


def gold_pairs(entries: list[tuple[int, date, str]] | tuple[Entry, ...], rule: dict) -> list:
    """Sorted (low, high) user pairs meeting `rule`, from (user, day, label) rows or entries."""
    rows = [(e.user, e.day, e.label) if isinstance(e, Entry) else e for e in entries]
    counts: dict[int, dict[str, int]] = {}
    days: dict[int, dict[str, list[date]]] = {}
    for user, day, label in rows:
        counts.setdefault(user, {}).setdefault(label, 0)
        counts[user][label] += 1
        days.setdefault(user, {}).setdefault(label, []).append(day)
    users = sorted(counts)

    def single(u: int) -> bool:
        if sum(counts[u].get(lb, 0) for lb in rule["both"]) < 1:
            return False
        if "dated" not in rule:
            return True
        label, side, cut = rule["dated"]
        seen = days[u].get(label, [])
        return all(d > cut for d in seen) if side == "after" else all(d < cut for d in seen)

    if "both" in rule:
        ok = [u for u in users if single(u)]
        return [(a, b) for i, a in enumerate(ok) for b in ok[i + 1 :]]
    a_ok = {u for u in users if _holds(counts[u], rule["a"])}
    b_ok = {u for u in users if _holds(counts[u], rule["b"])}
    return [
        (u, v)
        for i, u in enumerate(users)
        for v in users[i + 1 :]
        if (u in a_ok and v in b_ok) or (v in a_ok and u in b_ok)
    ]


def format_pairs(pairs: list[tuple[int, int]]) -> list[str]:
    """Gold as answer strings `(a, b)`; an empty set is written `none` (no pair)."""
    return [f"({a}, {b})" for a, b in pairs] or ["none"]
