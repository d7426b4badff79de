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
from rlm_docs.governor import axes
from rlm_docs.governor.axes import Axis
from rlm_docs.governor.budget import Budget
from rlm_docs.governor.exceeded import BudgetExceeded
from rlm_docs.governor.ledger import ROLES, Ledger, LedgerEntry
from rlm_docs.governor.prompt_cap import check_prompt_size
from rlm_docs.models.base import Client, Completion, Usage
from rlm_docs.models.deadline import call_deadline
from rlm_docs.models.errors import ModelUnavailableError
from rlm_docs.models.prices import Price, price_of, to_nano
from rlm_docs.tokens import count_message_tokens


def _zero() -> dict[str, int]:
    """Whole units (`Axis.ticks`: dollars as integer nano-dollars) on every `call` axis: what
    a governor has used, has reserved for calls in flight, or books for one call."""
    return {a.name: 0 for a in axes.call_axes()}


class Governor:
    """Budget enforcement and accounting for one question (see module docstring)."""

    def __init__(
        self,
        budget: Budget | None = None,
        *,
        ledger: Ledger | None = None,
        question_id: str = "",
        parent: "Governor | None" = None,
    ) -> None:
        """A question's governor; with `parent`, a child one level deeper (`child`), which
        shares its parent's ledger, question, and lock (one lock per governor tree)."""
        self.budget = budget or Budget()
        self._parent = parent
        if parent is None:
            self.ledger = ledger if ledger is not None else Ledger()
            self.question_id = question_id
            self.depth = 0
            self._parent_call: str | None = None
            self._lock = threading.RLock()
        else:
            self.ledger = parent.ledger
            self.question_id = parent.question_id
            self.depth = parent.depth + 1
            self._parent_call = parent._last_root_call
            self._lock = parent._lock
        self._semaphore = threading.BoundedSemaphore(self.budget.max_concurrency)
        self._started = time.monotonic()
        self._used = _zero()
        self._reserved = _zero()
        self._steps_total = 0
        self._calls = 0
        self._root_calls = 0
        self._cache_hits = 0
        self._max_depth = self.depth
        self._last_root_call: str | None = None

    def __repr__(self) -> str:
        return f"Governor(question_id={self.question_id!r}, depth={self.depth}, {self.budget})"

    # -- limits -------------------------------------------------------------------------------

    def _chain(self) -> list["Governor"]:
        chain: list[Governor] = []
        node: Governor | None = self
        while node is not None:
            chain.append(node)
            node = node._parent
        return chain

    def _limit(self, axis: str) -> int | None:
        """The limit on `call` axis `axis` in whole units, or None (unlimited)."""
        a = _axis(axis)
        value = None if a.limit is None else getattr(self.budget, a.limit)
        return None if value is None else a.ticks(value)

    def _limited(self) -> list[Axis]:
        """The `call` axes this governor's budget limits."""
        return [
            a for a in axes.call_axes() if a.limit and getattr(self.budget, a.limit) is not None
        ]

    def _usage(self, a: Axis) -> float:
        """What this governor (children included) has used on axis `a`, in its unit."""
        if a.source == "steps":
            return self._steps_total
        if a.source == "clock":
            return self._elapsed()
        if a.source == "depth":
            return self._max_depth
        return a.amount(self._used[a.name])

    def _left(self, axis: str) -> int | None:
        limit = self._limit(axis)
        return None if limit is None else limit - self._used[axis] - self._reserved[axis]

    def _elapsed(self) -> float:
        return time.monotonic() - self._started

    def _refuse(
        self, axis: str, needed: float | None = None, what: str = "this call"
    ) -> BudgetExceeded:
        a = _axis(axis)
        limit = self._limit(axis) or 0
        spent = self._used[axis] + self._reserved[axis]
        extra = None if needed is None else a.amount(needed)
        return BudgetExceeded(a.key, a.amount(limit), a.amount(spent), extra, what)

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
            for a in g._limited():
                left = g._left(a.name)
                if left is None:
                    continue
                if a.name != "sub_calls":  # an amount: refused once nothing is left
                    if left <= 0:
                        raise g._refuse(a.name)
                elif role == "sub" and calls > left:  # a count of calls: `calls` more must fit
                    if calls == 1:
                        raise g._refuse(a.name)
                    raise g._refuse(a.name, calls, f"a batch of {calls:,} prompts")

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
        sampling: dict[str, Any],
        book: bool = True,
    ) -> dict[str, int]:
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
            cost_left = g._left("cost_usd")
            if cost_left is not None and price is not None:
                input_nano = to_nano(price.cost(_input_only(booking["input_tokens"])))
                if input_nano > cost_left:
                    raise g._refuse("cost_usd", input_nano)
                per_token = price.output * 1000  # nano-dollars per output token
                if per_token > 0:
                    affordable = math.floor((cost_left - input_nano) / per_token)
                    if affordable <= 0:
                        raise g._refuse("cost_usd", input_nano + per_token)
                    max_tokens = affordable if max_tokens is None else min(max_tokens, affordable)
        booking["output_tokens"] = max_tokens or 0
        if price is not None:
            booking["cost_usd"] = to_nano(
                price.cost(_input_only(booking["input_tokens"]))
            ) + math.ceil((max_tokens or 0) * price.output * 1000)
        if book:
            for g in chain:
                for axis, amount in booking.items():
                    g._reserved[axis] += amount
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
        messages: list[dict[str, Any]],
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
                self._settle(booking, None, depth, role)
                self._record(client, role, depth, call_id, parent_id, started_at, None, exc, t0)
                if isinstance(exc, ModelUnavailableError) and self._past(deadline):
                    raise self._wall_refusal() from exc
                raise
            self._settle(booking, result, depth, role)
            self._record(client, role, depth, call_id, parent_id, started_at, result, None, t0)
            return replace(result, call_id=call_id)

    def affordable(self, client: Client, messages: list[dict[str, Any]], *, role: str) -> None:
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

    def _settle(
        self, booking: dict[str, int], result: Completion | None, depth: int, role: str
    ) -> None:
        """Release the booking and add what the call really used on every `call` axis (a
        failed call: nothing) to this governor and every ancestor."""
        actual = _zero()
        if result is not None:
            for a in axes.call_axes():
                if a.read is not None:
                    actual[a.name] = a.ticks(a.read(result, role))
        with self._lock:
            for g in self._chain():
                for axis in actual:
                    g._reserved[axis] -= booking.get(axis, 0)
                    g._used[axis] += actual[axis]
                g._calls += 1
                g._max_depth = max(g._max_depth, depth)
                if result is not None:
                    g._cache_hits += int(result.cached)

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
                cache_write_tokens=usage.cache_write_tokens if usage else 0,
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
                for a in g._limited():
                    left = g._left(a.name)
                    if left is not None and left <= 0:
                        return a.key
            return None

    def _fractions(self) -> list[tuple[str, float, float, float]]:
        """(axis, fraction, used, limit) for every limited axis of this governor (depth is a
        setting, not a share that runs out)."""
        rows = [
            (a.key, self._usage(a), getattr(self.budget, a.limit))
            for a in axes.limits()
            if a.limit is not None and a.source != "depth"
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
            out: dict[str, dict[str, Any]] = {}
            for a in axes.limits():
                axis, limit = a.key, getattr(self.budget, a.limit or "")
                # steps: never the hidden `stop_at_step`; depth: the level of this governor
                used = self.depth if a.source == "depth" else self._usage(a)
                if a.source == "clock":
                    used = round(used, 3)
                left = None if limit is None else max(limit - used, 0)
                if a.source == "steps" and limit is not None:
                    ends = [
                        g.budget.max_steps - g._steps_total
                        for g in self._chain()
                        if g.budget.max_steps is not None
                    ]
                    left = max(min(ends), 0)
                elif a.source == "call":
                    left = self._tightest_left(axis, left)
                elif a.source == "clock":
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
        lefts = [g._left(axis) for g in self._chain()]
        known = [max(v, 0) for v in lefts if v is not None]
        if not known:
            return None
        return _axis(axis).amount(min(known))

    def notice(self) -> str | None:
        """A short 'what is left' line once any axis passes `soft_fraction`, else None."""
        with self._lock:
            over = [row for row in self._fractions() if row[1] >= self.budget.soft_fraction]
            if not over:
                return None
            parts = [
                f"{min(frac, 1.0):.0%} of {axes.noun(axis)} used "
                f"({axes.format_amount(axis, used)}/{axes.format_amount(axis, limit)})"
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
            limits: dict[str, Any] = {}
            for a in axes.limits():
                limit = getattr(b, a.limit or "")
                if a.source == "depth" or limit is None:
                    continue  # the depth limit is the tree's; unlimited stays unlimited
                if a.source == "call":
                    left = self._left(a.name) or 0
                else:  # steps and seconds: what this governor has left of its own limit
                    left = a.ticks(limit) - a.ticks(self._usage(a))
                if a.source == "clock":
                    value: float = max(limit - self._elapsed(), 0) * share
                else:  # whole units (a step, a token, a nano-dollar), rounded down
                    value = a.amount(math.floor(max(left, 0) * share))
                # a child may get no sub-calls (its own root calls are not sub-calls)
                if value <= 0 and a.name != "sub_calls":
                    raise self._birth_refusal(a.name)
                limits[a.limit or ""] = value
            child_budget = Budget(
                **limits,
                max_depth=b.max_depth,
                max_concurrency=b.max_concurrency,
                soft_fraction=b.soft_fraction,
            )
            return Governor(child_budget, parent=self)

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
        """Roll-up of this governor and every child (children are already folded in): every
        axis the governor reads (`steps` is `step()` calls; `root_calls` root-model calls,
        the steps a prediction records) and the count of calls and cache hits."""
        with self._lock:
            out: dict[str, Any] = {"root_calls": self._root_calls}
            for a in axes.axes():
                if a.source in ("steps", "call", "clock", "depth"):
                    out[a.name] = self._usage(a)
            return out | {"calls": self._calls, "cache_hits": self._cache_hits}


def _axis(name: str) -> Axis:
    """The declared axis `name` (a governor-internal key, so always declared)."""
    found = axes.axis(name)
    if found is None:
        raise KeyError(name)
    return found


def _input_only(tokens: int) -> Usage:
    return Usage(tokens, 0, 0)
