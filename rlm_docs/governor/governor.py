"""The cost governor: every model call of a question goes through `Governor.call`.

Each call is checked against every budget axis *before* it is made, reserving its projected
input tokens, output allowance, dollars and sub-call slot atomically (one lock per governor
tree), so concurrent sub-calls can never overshoot; after the call the reservation is settled
with the actual usage. A child governor (for a recursive `rlm_query`) gets a share of what is
left; its usage (steps included) is added to every ancestor exactly once, and all write into
one `Ledger`. A child whose share cannot pay for one call is refused at birth.

Order of checks, cheapest first, so a refused call costs O(1) whatever its prompt: wall time and
exhausted axes, then the prompt-size cap, and only then tokenizing the prompt. There is no
exemption: a forced last turn is checked like any call.

The one overshoot left: input tokens are projected with tiktoken and settled with the
provider's count, and output is bounded by the `max_tokens` cap the governor sets whenever an
output-token or dollar limit applies. So spend can pass a limit only by the difference between
the provider's and tiktoken's count of the prompts in flight (at most `max_concurrency` calls),
or by output a provider returns past `max_tokens`; every call after that is refused.
"""

import math
import threading
import time
from dataclasses import replace
from typing import Any

from rlm_docs.call_purpose import Purpose, calling
from rlm_docs.errors import ConfigError
from rlm_docs.governor.budget import Budget
from rlm_docs.governor.exceeded import BudgetExceeded, format_amount
from rlm_docs.governor.ledger import ROLES, Ledger, LedgerEntry
from rlm_docs.governor.prompt_cap import check_prompt_size
from rlm_docs.models.base import Client, Completion, Usage
from rlm_docs.models.deadline import call_deadline
from rlm_docs.models.errors import ModelUnavailableError
from rlm_docs.models.prices import Price, price_of, to_nano
from rlm_docs.tokens import count_message_tokens

# Consumable axes shared with ancestors; costs are held in integer nano-dollars.
_AXES = ("sub_calls", "input_tokens", "output_tokens", "cost_nano")


def _zero() -> dict[str, int]:
    return dict.fromkeys(_AXES, 0)


class Governor:
    """Budget enforcement and accounting for one question (see module docstring)."""

    def __init__(
        self,
        budget: Budget | None = None,
        *,
        ledger: Ledger | None = None,
        question_id: str = "",
    ) -> None:
        self.budget = budget or Budget()
        self.ledger = ledger if ledger is not None else Ledger()
        self.question_id = question_id
        self.depth = 0
        self._parent: Governor | None = None
        self._parent_call: str | None = None
        self._lock = threading.RLock()
        self._init_state()

    def _init_state(self) -> None:
        self._semaphore = threading.BoundedSemaphore(self.budget.max_concurrency)
        self._started = time.monotonic()
        self._used = _zero()
        self._reserved = _zero()
        self._steps_total = 0
        self._calls = 0
        self._root_calls = 0
        self._cache_hits = 0
        self._cached_tokens = 0
        self._max_depth = self.depth
        self._last_root_call: str | None = None

    def __repr__(self) -> str:
        return f"Governor(question_id={self.question_id!r}, depth={self.depth}, {self.budget})"

    # -- limits -------------------------------------------------------------------------------

    def _chain(self) -> list["Governor"]:
        chain, node = [], self
        while node is not None:
            chain.append(node)
            node = node._parent
        return chain

    def _limit(self, axis: str) -> int | None:
        b = self.budget
        if axis == "cost_nano":
            return None if b.max_cost_usd is None else to_nano(b.max_cost_usd)
        return {
            "sub_calls": b.max_sub_calls,
            "input_tokens": b.max_input_tokens,
            "output_tokens": b.max_output_tokens,
        }[axis]

    def _left(self, axis: str) -> int | None:
        limit = self._limit(axis)
        return None if limit is None else limit - self._used[axis] - self._reserved[axis]

    def _elapsed(self) -> float:
        return time.monotonic() - self._started

    def _refuse(
        self, axis: str, needed: float | None = None, what: str = "this call"
    ) -> BudgetExceeded:
        limit = self._limit(axis) or 0
        spent = self._used[axis] + self._reserved[axis]
        if axis == "cost_nano":
            extra = None if needed is None else needed / 1e9
            return BudgetExceeded("cost_usd", limit / 1e9, spent / 1e9, extra, what)
        return BudgetExceeded(axis, limit, spent, needed, what)

    def _check_wall(self) -> None:
        for g in self._chain():
            if g.budget.max_wall_s is not None and g._elapsed() >= g.budget.max_wall_s:
                raise BudgetExceeded("wall_s", g.budget.max_wall_s, g._elapsed())

    def deadline(self) -> float | None:
        """The `time.monotonic()` at which the wall budget (here or in an ancestor) ends."""
        ends = [
            g._started + g.budget.max_wall_s
            for g in self._chain()
            if g.budget.max_wall_s is not None
        ]
        return min(ends) if ends else None

    def _precheck(self, role: str, calls: int = 1) -> None:
        """O(1) refusal of calls that cannot be made whatever their prompt: no wall time, no
        sub-call slots for `calls` more, or an axis already used up."""
        self._check_wall()
        for g in self._chain():
            if role == "sub":
                left = g._left("sub_calls")
                if left is not None and calls > left:
                    if calls == 1:
                        raise g._refuse("sub_calls")
                    raise g._refuse("sub_calls", calls, f"a batch of {calls:,} prompts")
            for axis in ("input_tokens", "output_tokens", "cost_nano"):
                left = g._left(axis)
                if left is not None and left <= 0:
                    raise g._refuse(axis)

    def check_calls(self, role: str, calls: int) -> None:
        """Raise BudgetExceeded now, in O(1), if `calls` more calls of `role` cannot all be
        made (a batch larger than the sub-calls left, or nothing left to spend)."""
        with self._lock:
            self._precheck(role, calls)

    def _reserve(
        self,
        role: str,
        input_tokens: int,
        price: Price | None,
        sampling: dict,
        book: bool = True,
    ) -> dict:
        """Check every axis along the chain and book this call's share; returns the booking.
        With `book=False` only checks (a dry run: would this call be allowed now?)."""
        chain = self._chain()
        self._check_wall()
        booking = _zero()
        booking["sub_calls"] = int(role == "sub")
        booking["input_tokens"] = input_tokens
        max_tokens = sampling.get("max_tokens")
        for g in chain:
            for axis in ("sub_calls", "input_tokens"):
                left = g._left(axis)
                if left is not None and booking[axis] > left:
                    raise g._refuse(axis, booking[axis] if axis == "input_tokens" else None)
            out_left = g._left("output_tokens")
            if out_left is not None:
                if out_left <= 0:
                    raise g._refuse("output_tokens")
                max_tokens = out_left if max_tokens is None else min(max_tokens, out_left)
            cost_left = g._left("cost_nano")
            if cost_left is not None and price is not None:
                input_nano = to_nano(price.cost(_input_only(booking["input_tokens"])))
                if input_nano > cost_left:
                    raise g._refuse("cost_nano", input_nano)
                per_token = price.output * 1000  # nano-dollars per output token
                if per_token > 0:
                    affordable = math.floor((cost_left - input_nano) / per_token)
                    if affordable <= 0:
                        raise g._refuse("cost_nano", input_nano + per_token)
                    max_tokens = affordable if max_tokens is None else min(max_tokens, affordable)
        booking["output_tokens"] = max_tokens or 0
        if price is not None:
            booking["cost_nano"] = to_nano(
                price.cost(_input_only(booking["input_tokens"]))
            ) + math.ceil((max_tokens or 0) * price.output * 1000)
        if book:
            for g in chain:
                for axis in _AXES:
                    g._reserved[axis] += booking[axis]
        sampling["max_tokens"] = max_tokens
        return booking

    def check_client(self, client: Client) -> Price | None:
        """The client's price; ConfigError if a dollar budget applies and the price is unknown.

        Called before every call; callers may call it up front to fail before a run starts.
        """
        price = price_of(client)
        if price is None and any(g.budget.max_cost_usd is not None for g in self._chain()):
            raise ConfigError(
                f"model {client.spec}: no price known for {client.model!r}, so a dollar budget "
                "cannot be enforced; add it to a price table (RLM_DOCS_PRICES) or drop the "
                "dollar limit"
            )
        return price

    # -- public API -----------------------------------------------------------------------------

    def call(
        self,
        client: Client,
        messages: list[dict],
        *,
        role: str,
        depth: int | None = None,
        purpose: Purpose | None = None,
        **sampling: Any,
    ) -> Completion:
        """Make one model call within budget and record it; raises BudgetExceeded when refused,
        PromptTooLarge for a prompt over the per-call cap. The call must end by the wall-time
        deadline: the client gets the time left as its request timeout and stops retrying past
        it, and a call that ran out of time raises BudgetExceeded("wall_s"). The client sees
        the call's `purpose` (`rlm_docs.call_purpose`; by default just its `role`) as data."""
        if role not in ROLES:
            raise ConfigError(f"governor call role {role!r}: expected one of {', '.join(ROLES)}")
        if purpose is not None and purpose.role != role:
            raise ConfigError(
                f"governor call role {role!r} differs from its purpose's {purpose.role!r}"
            )
        depth = self.depth if depth is None else depth
        if depth > self.budget.max_depth:
            raise BudgetExceeded("depth", self.budget.max_depth, depth)
        price = self.check_client(client)
        sampling.setdefault("temperature", 0.0)
        with self._lock:
            self._precheck(role)
        check_prompt_size(messages)
        projected = count_message_tokens(messages)  # outside the tree lock
        with self._semaphore:
            with self._lock:
                booking = self._reserve(role, projected, price, sampling)
                call_id = self.ledger.new_call_id()
                parent_id = self._parent_call if role == "root" else self._last_root_call
                if role == "root":
                    self._last_root_call = call_id
            started_at = time.time()
            t0 = time.perf_counter()
            deadline = self.deadline()
            try:
                with call_deadline(deadline), calling(purpose or Purpose(role)):
                    result = client.complete(messages, **sampling)
            except Exception as exc:
                self._settle(booking, None, depth)
                self._record(client, role, depth, call_id, parent_id, started_at, None, exc, t0)
                if isinstance(exc, ModelUnavailableError) and self._past(deadline):
                    raise self._wall_refusal() from exc
                raise
            self._settle(booking, result, depth)
            self._record(client, role, depth, call_id, parent_id, started_at, result, None, t0)
            return replace(result, call_id=call_id)

    def affordable(self, client: Client, messages: list[dict], *, role: str) -> None:
        """Raise (BudgetExceeded, PromptTooLarge) if this call would be refused now; books
        nothing. Lets a caller skip expensive set-up (a child's sandbox) for a refused call."""
        price = self.check_client(client)
        with self._lock:
            self._precheck(role)
        check_prompt_size(messages)
        projected = count_message_tokens(messages)
        with self._lock:
            self._reserve(role, projected, price, {}, book=False)

    @staticmethod
    def _past(deadline: float | None) -> bool:
        return deadline is not None and time.monotonic() >= deadline

    def _wall_refusal(self) -> BudgetExceeded:
        for g in self._chain():
            if g.budget.max_wall_s is not None and g._elapsed() >= g.budget.max_wall_s:
                return BudgetExceeded("wall_s", g.budget.max_wall_s, g._elapsed())
        return BudgetExceeded("wall_s", self.budget.max_wall_s or 0.0, self._elapsed())

    def _settle(self, booking: dict, result: Completion | None, depth: int) -> None:
        actual = _zero()
        if result is not None:
            actual["sub_calls"] = booking["sub_calls"]
            actual["input_tokens"] = result.usage.input_tokens
            actual["output_tokens"] = result.usage.output_tokens
            actual["cost_nano"] = to_nano(result.cost_usd)
        with self._lock:
            for g in self._chain():
                for axis in _AXES:
                    g._reserved[axis] -= booking[axis]
                    g._used[axis] += actual[axis]
                g._calls += 1
                g._max_depth = max(g._max_depth, depth)
                if result is not None:
                    g._cache_hits += int(result.cached)
                    g._cached_tokens += result.usage.cached_tokens

    def _record(
        self,
        client: Client,
        role: str,
        depth: int,
        call_id: str,
        parent_id: str | None,
        started_at: float,
        result: Completion | None,
        error: Exception | None,
        t0: float,
    ) -> None:
        usage = result.usage if result else None
        self.ledger.append(
            LedgerEntry(
                question_id=self.question_id,
                depth=depth,
                role=role,
                model=result.model if result else client.model,
                backend=client.backend,
                input_tokens=usage.input_tokens if usage else 0,
                output_tokens=usage.output_tokens if usage else 0,
                cached_tokens=usage.cached_tokens if usage else 0,
                cost_usd=result.cost_usd if result else 0.0,
                latency_s=result.latency_s if result else time.perf_counter() - t0,
                cached=result.cached if result else False,
                usage_source=result.usage_source if result else "none",
                error=None if error is None else f"{type(error).__name__}: {error}",
                started_at=started_at,
                call_id=call_id,
                parent_id=parent_id,
                price_known=result.price_known if result else True,
                attempts=result.attempts if result else 0,
            )
        )
        if role == "root":  # the step count of `Prediction.steps` (see its docstring)
            with self._lock:
                for g in self._chain():
                    g._root_calls += 1

    def step(self) -> None:
        """Count one root step here and in every ancestor; raises BudgetExceeded when this
        governor or an ancestor has taken `max_steps` steps (its children's included)."""
        with self._lock:
            for g in self._chain():
                limit = g._step_limit()
                if limit is not None and g._steps_total >= limit:
                    raise BudgetExceeded("steps", limit, g._steps_total)
            for g in self._chain():
                g._steps_total += 1

    def _step_limit(self) -> int | None:
        """The root steps this governor enforces: `max_steps`, or the earlier `stop_at_step`
        cut (which prompts and notices never show; see `Budget`)."""
        limits = [v for v in (self.budget.max_steps, self.budget.stop_at_step) if v is not None]
        return min(limits) if limits else None

    def steps_left(self) -> int | None:
        """Root steps this governor may still take (the tightest ancestor counts), or None."""
        with self._lock:
            limits = [(g, g._step_limit()) for g in self._chain()]
            left = [limit - g._steps_total for g, limit in limits if limit is not None]
            return max(min(left), 0) if left else None

    def exhausted(self) -> str | None:
        """The first hard-limit axis that is used up (here or in an ancestor), else None."""
        with self._lock:
            for g in self._chain():
                limit = g._step_limit()
                if limit is not None and g._steps_total >= limit:
                    return "steps"
                if g.budget.max_wall_s is not None and g._elapsed() >= g.budget.max_wall_s:
                    return "wall_s"
                for axis in _AXES:
                    left = g._left(axis)
                    if left is not None and left <= 0:
                        return "cost_usd" if axis == "cost_nano" else axis
            return None

    def _fractions(self) -> list[tuple[str, float, float, float]]:
        """(axis, fraction, used, limit) for every limited axis of this governor."""
        b = self.budget
        rows = [
            ("steps", self._steps_total, b.max_steps),
            ("sub_calls", self._used["sub_calls"], b.max_sub_calls),
            ("input_tokens", self._used["input_tokens"], b.max_input_tokens),
            ("output_tokens", self._used["output_tokens"], b.max_output_tokens),
            ("cost_usd", self._used["cost_nano"] / 1e9, b.max_cost_usd),
            ("wall_s", self._elapsed(), b.max_wall_s),
        ]
        return [
            (axis, (used / limit) if limit else 1.0, used, limit)
            for axis, used, limit in rows
            if limit is not None
        ]

    def remaining(self) -> dict[str, dict[str, Any]]:
        """What is left on every axis, as data the model can plan with (`budget()` in the REPL)
        and a question's record keeps: `{axis: {"limit", "used", "left", "share_used"}}` for
        steps, sub-calls, tokens, dollars, seconds and depth. An unlimited axis has `limit`,
        `left` and `share_used` None; `left` is the tightest over this governor and its
        ancestors (a child sees what it may still spend, not just its own share)."""
        with self._lock:
            b = self.budget
            rows: dict[str, tuple[float, float | None]] = {
                "steps": (self._steps_total, b.max_steps),  # never the hidden `stop_at_step`
                "sub_calls": (self._used["sub_calls"], b.max_sub_calls),
                "input_tokens": (self._used["input_tokens"], b.max_input_tokens),
                "output_tokens": (self._used["output_tokens"], b.max_output_tokens),
                "cost_usd": (self._used["cost_nano"] / 1e9, b.max_cost_usd),
                "wall_s": (round(self._elapsed(), 3), b.max_wall_s),
                "depth": (self.depth, b.max_depth),
            }
            out: dict[str, dict[str, Any]] = {}
            for axis, (used, limit) in rows.items():
                left = None if limit is None else max(limit - used, 0)
                if axis == "steps" and limit is not None:
                    ends = [
                        g.budget.max_steps - g._steps_total
                        for g in self._chain()
                        if g.budget.max_steps is not None
                    ]
                    left = max(min(ends), 0)
                elif axis in ("sub_calls", "input_tokens", "output_tokens", "cost_usd"):
                    left = self._tightest_left(axis, left)
                elif axis == "wall_s":
                    deadline = self.deadline()
                    left = (
                        None if deadline is None else round(max(deadline - time.monotonic(), 0), 3)
                    )
                share = None if not limit else round(min(used / limit, 1.0), 4)
                out[axis] = {"limit": limit, "used": used, "left": left, "share_used": share}
            return out

    def _tightest_left(self, axis: str, left: float | None) -> float | None:
        """`left` on consumable `axis`, capped by what every ancestor has left (reservations
        of calls in flight count as spent)."""
        key = "cost_nano" if axis == "cost_usd" else axis
        lefts = [g._left(key) for g in self._chain()]
        known = [max(v, 0) for v in lefts if v is not None]
        if not known:
            return None
        tightest = min(known)
        return tightest / 1e9 if axis == "cost_usd" else tightest

    def notice(self) -> str | None:
        """A short 'what is left' line once any axis passes `soft_fraction`, else None."""
        with self._lock:
            over = [row for row in self._fractions() if row[1] >= self.budget.soft_fraction]
            if not over:
                return None
            parts = [
                f"{min(frac, 1.0):.0%} of {_NOUNS[axis]} used "
                f"({format_amount(axis, used)}/{format_amount(axis, limit)})"
                for axis, frac, used, limit in over
            ]
            if self.budget.max_steps is not None:
                left = max(self.budget.max_steps - self._steps_total, 0)
                parts.append(f"{left} root step{'s' if left != 1 else ''} left")
            return "Budget notice: " + "; ".join(parts) + "."

    def child(self, share: float = 0.5) -> "Governor":
        """A governor one level deeper with `share` of what is left on every axis.

        Its calls and steps count against this governor and all ancestors, in the same ledger.
        Raises BudgetExceeded when the share of some limited axis is nothing (no step, no
        token, no nano-dollar, no time): such a child could not make a single call.
        """
        if not 0 < share <= 1:
            raise ConfigError(f"child budget share must be in (0, 1], got {share}")
        if self.depth + 1 > self.budget.max_depth:
            raise BudgetExceeded("depth", self.budget.max_depth, self.depth + 1)
        with self._lock:
            self._check_wall()
            b = self.budget

            def part(left: float | None, whole: bool = True) -> Any:
                if left is None:
                    return None
                value = max(left, 0) * share
                return math.floor(value) if whole else value

            steps_left = None if b.max_steps is None else b.max_steps - self._steps_total
            shares = {
                "steps": part(steps_left),
                "input_tokens": part(self._left("input_tokens")),
                "output_tokens": part(self._left("output_tokens")),
                "cost_nano": part(self._left("cost_nano")),
                "wall_s": part(
                    None if b.max_wall_s is None else b.max_wall_s - self._elapsed(), False
                ),
            }
            for axis, value in shares.items():
                if value is not None and value <= 0:
                    raise self._birth_refusal(axis)
            child_budget = Budget(
                max_steps=shares["steps"],
                max_sub_calls=part(self._left("sub_calls")),
                max_input_tokens=shares["input_tokens"],
                max_output_tokens=shares["output_tokens"],
                max_cost_usd=None if shares["cost_nano"] is None else shares["cost_nano"] / 1e9,
                max_wall_s=shares["wall_s"],
                max_depth=b.max_depth,
                max_concurrency=b.max_concurrency,
                soft_fraction=b.soft_fraction,
            )
            kid = Governor(child_budget, ledger=self.ledger, question_id=self.question_id)
            kid.depth = self.depth + 1
            kid._parent = self
            kid._parent_call = self._last_root_call
            kid._lock = self._lock
            kid._init_state()
            return kid

    def _birth_refusal(self, axis: str) -> BudgetExceeded:
        """Why a child gets nothing on `axis`: what is left here is too little to share."""
        what = "a child run"
        if axis == "steps":
            limit = self.budget.max_steps or 0
            return BudgetExceeded("steps", limit, self._steps_total, 1, what)
        if axis == "wall_s":
            return BudgetExceeded("wall_s", self.budget.max_wall_s or 0.0, self._elapsed())
        return self._refuse(axis, 1, what)

    def totals(self) -> dict[str, Any]:
        """Roll-up of this governor and every child (children are already folded in)."""
        with self._lock:
            return {
                "steps": self._steps_total,
                "root_calls": self._root_calls,
                "sub_calls": self._used["sub_calls"],
                "input_tokens": self._used["input_tokens"],
                "output_tokens": self._used["output_tokens"],
                "cached_tokens": self._cached_tokens,
                "cost_usd": self._used["cost_nano"] / 1e9,
                "calls": self._calls,
                "cache_hits": self._cache_hits,
                "max_depth": self._max_depth,
                "wall_s": self._elapsed(),
            }


_NOUNS = {
    "steps": "root steps",
    "sub_calls": "sub-calls",
    "input_tokens": "input tokens",
    "output_tokens": "output tokens",
    "cost_usd": "dollars",
    "wall_s": "wall time",
}


def _input_only(tokens: int) -> Usage:
    return Usage(tokens, 0, 0)
