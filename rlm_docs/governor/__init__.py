"""Cost governor: per-question budgets checked before every model call, and the call ledger."""

from rlm_docs.governor.budget import Budget
from rlm_docs.governor.exceeded import BudgetExceeded
from rlm_docs.governor.governor import Governor
from rlm_docs.governor.ledger import ROLES, Ledger, LedgerEntry

__all__ = ["ROLES", "Budget", "BudgetExceeded", "Governor", "Ledger", "LedgerEntry"]
