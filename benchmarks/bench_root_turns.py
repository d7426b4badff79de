"""Root-turn cost with the `offline` model: the rendered system prompt per corpus, input tokens
per root turn and per question, and what the finishing confirmation turn costs.

`correct` counts the answers the scorer accepts without a judge (open questions count as
wrong), so a prompt change is compared at equal accuracy. The rendered prompt is measured for every store given (`--store`, repeatable; default the
bundled demo corpus): its tokens (cl100k) and those of its corpus summary, the part that grows
with the corpus. The runs then ask the first store's questions.

The offline root finishes in code (`answer["ready"] = True`) after printing its search
candidates, output the model has not seen, so with the confirmation turn (the default) every
question takes one more root turn than with `confirm_final=False`; the difference is the
protocol's price in steps and tokens. A third row is a scripted root that reads the top search
hit and finishes in one cell printing only the answer it sets (the common "print the value you
compute" ending): the finishing rule (`rlm_docs.engine.finishing`) ends such a run without the
confirmation turn. Input tokens per root turn measure the prompt itself (system prompt,
per-turn messages): compare a run of this script before and after a prompt change.

    python benchmarks/bench_root_turns.py [--store STORE ...] [--questions FILE] [--limit N]

Default: the bundled demo corpus and its questions (e.g. FinanceBench dev: --store
/tmp/stores/fb --questions ../shared/datasets/financebench/questions.dev.jsonl; an OOLONG
store: `rlm-docs bench make oolong --tokens 2^15 --out /tmp/oolong`, then --store
/tmp/oolong/32768/corpus).
"""

import argparse
import statistics
import time

from rlm_docs.corpus import Corpus
from rlm_docs.engine import RLM
from rlm_docs.engine.prompts import corpus_summary, root_prompt
from rlm_docs.eval.dataset import load_questions
from rlm_docs.eval.scoring import score_prediction
from rlm_docs.governor import Ledger
from rlm_docs.models import ScriptedClient
from rlm_docs.tokens import count_tokens

# Read the top hit, answer with its page number and print only that answer.
ANSWER_ONLY = (
    "```repl\nhit = search(QUESTION, k=1)[0]\ntext = page(hit['file'], hit['page'])\n"
    "answer['values'] = [str(hit['page'])]\ncite(hit['file'], hit['page'])\n"
    "print('answer:', answer['values'])\nanswer['ready'] = True\n```"
)


def prompt_size(store: str) -> dict[str, float]:
    """Tokens of the rendered `docs` system prompt for `store`, and of its corpus summary."""
    corpus = Corpus.load(store)
    text = root_prompt("docs", "What is the answer?", corpus, max_steps=20)
    return {
        "documents": len(corpus.documents),
        "prompt tok": count_tokens(text),
        "summary tok": count_tokens(corpus_summary(corpus)),
    }


def run(store: str, questions: list, confirm: bool, scripted: bool = False) -> dict[str, float]:
    """Totals over `questions` for one setting of the confirmation turn (or the scripted root)."""
    ledger = Ledger()
    rlm = RLM(store, model="offline", ledger=ledger, confirm_final=confirm)
    steps, answered, correct = [], 0, 0
    t0 = time.perf_counter()
    for q in questions:
        if scripted:  # a fresh script per question: the cell, then a reply keeping the answer
            cell = ANSWER_ONLY.replace("QUESTION", repr(q.question))
            rlm.settings.client = ScriptedClient([cell, "Keep it."])
        pred = rlm.ask(q.question, question_id=q.id)
        steps.append(pred.steps)
        answered += bool(pred.answer)
        correct += bool(score_prediction(q, pred.to_madqa())["correct"])
    wall = time.perf_counter() - t0
    root = [e for e in ledger.entries if e.role == "root"]
    per_question = ledger.totals(role=None)
    first: dict[str, int] = {}
    for e in root:  # the ledger is in call order
        first.setdefault(e.question_id, e.input_tokens)
    n = len(questions)
    return {
        "questions": n,
        "answered": answered,
        "correct": correct,
        "steps/q": statistics.mean(steps),
        "root turns": len(root),
        "input tok/root turn": statistics.mean(e.input_tokens for e in root),
        "first-turn input tok": statistics.mean(first.values()),
        "root input tok/q": sum(e.input_tokens for e in root) / n,
        "input tok/q": per_question["input_tokens"] / n,
        "output tok/q": per_question["output_tokens"] / n,
        "wall s/q": wall / n,
    }


def table(rows: dict[str, dict[str, float]], first: str) -> None:
    keys = list(next(iter(rows.values())))
    width = max(len(first), *(len(name) for name in rows)) + 2
    print(f"{first:{width}}" + "".join(f"{k:>21}" for k in keys))
    for name, row in rows.items():
        print(f"{name:{width}}" + "".join(f"{row[k]:>21,.1f}" for k in keys))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", action="append", help="corpus store (default: the demo)")
    parser.add_argument("--questions", help="MADQA-schema questions (default: demo questions)")
    parser.add_argument("--limit", type=int, help="only the first N questions")
    args = parser.parse_args()
    from rlm_docs.ingest.demo import demo_corpus_path, demo_questions_path

    stores = args.store or [str(demo_corpus_path())]
    table({store: prompt_size(store) for store in stores}, "rendered docs prompt")
    print()
    questions = load_questions(args.questions or demo_questions_path(), args.limit)
    rows = {
        "confirm_final=True (default)": run(stores[0], questions, True),
        "confirm_final=False": run(stores[0], questions, False),
        "scripted, prints only answer": run(stores[0], questions, True, scripted=True),
    }
    table(rows, "setting")
    on, off, _ = rows.values()
    print(
        f"confirmation cost: +{on['steps/q'] - off['steps/q']:.2f} steps/q, "
        f"+{on['input tok/q'] - off['input tok/q']:.0f} input tok/q, "
        f"+{on['output tok/q'] - off['output tok/q']:.0f} output tok/q"
    )


if __name__ == "__main__":
    main()
