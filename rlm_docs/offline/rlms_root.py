"""The offline policy in the reference RLM's root seat (`--system rlms --model offline`).

rlms' own system prompt (recognised by its first words, `RLMS_PROMPT_START`) gets the policy
the madqa prompt gets, since both hold only `context` (the rendered corpus) and sub-calls: turn
1 runs `repl.context.answer_from_context` (score the paragraphs of `context` by question terms,
read the best with `llm_query_batched`, cite the page markers before the chosen one) and submits
the result through rlms' `answer` dict, as JSON. rlms' question is the root prompt in its first
user message (`Answer the following: ...`). A later turn (the cell failed) submits that nothing
was found.
"""

import re

from rlm_docs.offline.root import root_code

RLMS_PROMPT_START = "You are a Recursive Language Model (RLM)"
_SUBMIT = 'import json\nanswer["content"] = json.dumps(final_answer)\nanswer["ready"] = True\n'
_GIVE_UP = 'answer["content"] = "No answer found in the documents."\nanswer["ready"] = True\n'


def is_rlms(messages: list[dict]) -> bool:
    """True when the request comes from rlms' root loop."""
    return bool(messages) and str(messages[0].get("content", "")).startswith(RLMS_PROMPT_START)


def rlms_reply(messages: list[dict]) -> str:
    """Code that answers and submits on turn 1; a submission of no answer after that."""
    if any(m.get("role") == "assistant" for m in messages):
        return f"The cell did not produce an answer.\n```repl\n{_GIVE_UP}```"
    found = re.search(r"^Answer the following: (.+)$", str(messages[1].get("content", "")), re.M)
    code = root_code(found.group(1).strip() if found else "", has_corpus=False)
    return (
        "I will score the pages of `context` by the question's terms, read the best ones with "
        f"sub-calls, and submit the best-supported answer.\n```repl\n{code.rstrip()}\n{_SUBMIT}```"
    )
