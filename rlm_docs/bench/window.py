"""One OOLONG-style context window: dated, user-tagged TREC questions without their labels.

Line format and the intro/closing text follow OOLONG-synth exactly (see the data set's
README, section 3.2). Free choices, documented because they shape the questions:

- label proportions: softmax(t * z) over the six labels, z standard normal, t uniform in
  [0.5, 1.5], then an i.i.d. draw per line: skewed and unpredictable, never a uniform prior;
- instances: drawn without replacement from each label's pool, reshuffled and reused when a
  pool runs out (so long windows repeat questions, as OOLONG's do);
- users: `clamp(isqrt(target) // 2, 8, 150)` five-digit ids with Zipf(1.2) weights (a few
  users own most lines, about OOLONG's 80/20 skew);
- dates: uniform over the 40 months from Sep 1, 2022 (the OOLONG-Pairs cut-offs fall inside);
- size: as many lines as fit in the cl100k token target with the intro and closing text.
"""

import math
import random
from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta

from rlm_docs.bench.trec import LABELS, Instance
from rlm_docs.tokens import count_tokens, count_tokens_batch

MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
FIRST_DAY = date(2022, 9, 1)
DAYS = (date(2025, 12, 31) - FIRST_DAY).days + 1  # 40 months
LINES_PER_PAGE = 100
DOCUMENT = "oolong_window"
_INTRO = (
    "The following lines contain {n} general-knowledge questions, one per line. Each question "
    "has an answer that can be described as one of {k} categories: {labels}.\n\nYou will be "
    "asked to answer questions about the aggregate label statistics across all {n} examples in "
    "this dataset. Do not try to guess, estimate, or approximate the result. Calculate the exact "
    "answer given these datapoints.\n\n"
)


def show_date(day: date) -> str:
    """OOLONG's display form: `Feb 02, 2023`."""
    return f"{MONTHS[day.month - 1][:3]} {day.day:02d}, {day.year}"


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of a window; `label` is gold and never written into the context."""

    day: date
    user: int
    text: str
    label: str

    def line(self) -> str:
        return f"Date: {show_date(self.day)} || User: {self.user} || Instance: {self.text}\n"


@dataclass(frozen=True)
class Window:
    """The entries of one window in context order, and its framing text."""

    entries: tuple[Entry, ...]

    def label_table(self) -> list[tuple[str, int]]:
        """(label, count) of the labels present, most frequent first (ties: canonical order);
        this order lists the labels in the intro and in the questions."""
        counts = Counter(e.label for e in self.entries)
        return sorted(((lb, counts[lb]) for lb in LABELS if counts[lb]), key=lambda x: -x[1])

    def intro(self, recall: bool = False) -> str:
        labels = ", ".join(f"'{lb}'" for lb, _ in self.label_table())
        text = _INTRO.format(n=len(self.entries), k=len(LABELS), labels=labels)
        return text.replace("The following", "Recall: the preceding") if recall else text

    def text(self) -> str:
        """The whole window as OOLONG renders it (intro, one line per entry, closing)."""
        return self.intro() + "".join(e.line() for e in self.entries) + self.intro(recall=True)

    def pages(self) -> list[str]:
        """The window cut at line boundaries into pages of LINES_PER_PAGE entries; the pages
        concatenate back to `text()` exactly."""
        lines = [e.line() for e in self.entries]
        chunks = [lines[i : i + LINES_PER_PAGE] for i in range(0, len(lines), LINES_PER_PAGE)]
        pages = ["".join(c) for c in chunks] or [""]
        pages[0] = self.intro() + pages[0]
        pages[-1] += self.intro(recall=True)
        return pages


def _label_weights(rng: random.Random, labels: list[str]) -> list[float]:
    t = rng.uniform(0.5, 1.5)
    z = [math.exp(t * rng.gauss(0.0, 1.0)) for _ in labels]
    total = sum(z)
    return [x / total for x in z]


def _users(rng: random.Random, target_tokens: int) -> tuple[list[int], list[float]]:
    n = min(150, max(8, math.isqrt(target_tokens) // 2))
    ids = rng.sample(range(10000, 100000), n)
    weights = [1.0 / (rank + 1) ** 1.2 for rank in range(n)]
    return ids, weights


class _Draw:
    """Instances of each label without replacement, reshuffling a pool once it is used up."""

    def __init__(self, rng: random.Random, pool: list[Instance]) -> None:
        self.rng = rng
        self.pools = {lb: [i for i in pool if i.label == lb] for lb in LABELS}
        self.left: dict[str, list[Instance]] = {lb: [] for lb in LABELS}

    def take(self, label: str) -> Instance:
        if not self.left[label]:
            self.left[label] = self.pools[label][:]
            self.rng.shuffle(self.left[label])
        return self.left[label].pop()


def sample_window(pool: list[Instance], target_tokens: int, rng: random.Random) -> Window:
    """A window whose text is at most `target_tokens` cl100k tokens (as many lines as fit)."""
    labels = [lb for lb in LABELS if any(i.label == lb for i in pool)]
    weights = _label_weights(rng, labels)
    ids, user_weights = _users(rng, target_tokens)
    draw = _Draw(rng, pool)
    entries: list[Entry] = []
    spent = count_tokens(_INTRO) * 2  # the framing text, about
    while spent < target_tokens:
        block = []
        for _ in range(max(16, (target_tokens - spent) // 20)):
            label = rng.choices(labels, weights)[0]
            user = rng.choices(ids, user_weights)[0]
            day = FIRST_DAY + timedelta(days=rng.randrange(DAYS))
            block.append(Entry(day, user, draw.take(label).text, label))
        for entry, tokens in zip(block, count_tokens_batch([e.line() for e in block]), strict=True):
            if spent + tokens > target_tokens:
                spent = target_tokens
                break
            entries.append(entry)
            spent += tokens
    window = Window(tuple(entries))
    while len(window.entries) > 1 and count_tokens(window.text()) > target_tokens:
        over = count_tokens(window.text()) - target_tokens
        window = Window(window.entries[: -max(1, over // 20)])
    return window
