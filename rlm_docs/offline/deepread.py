"""The `offline` model in `deepread`'s seat: locate, then read, then answer.

First round: `RETRIEVE` the question's content words. Once paragraphs came back: read the best
one's section around it (`READ_SECTION` from two paragraphs before to two after), once; then
answer from the best line of every paragraph seen (the extractive reader, as for the other
baselines), citing its page. A retrieval that found nothing is retried with narrower queries
(as `bm25-agent` does); on the forced last round it answers with what it has.
"""

import re

from rlm_docs.offline.baselines import MAX_SEARCHES, _answer_json, _best_reading, _queries

# A paragraph block as `rlm_docs.systems.deepread.paragraph_block` writes it.
PARAGRAPH = re.compile(
    r"^\[FILE: (.+?) \| SECTION: (\S+) \| PARAGRAPH: (\d+) \| PAGE: (\d+)([^\]\n]*)\]\n"
    r"(.*?)\n\[END PARAGRAPH\]$",
    re.M | re.S,
)
READ_AROUND = 2


def paragraph_blocks(text: str) -> list[tuple[str, str, int, str, str, str]]:
    """(document, section, paragraph, page, label rest, text) of every paragraph block."""
    return [(d, s, int(n), p, rest, body) for d, s, n, p, rest, body in PARAGRAPH.findall(text)]


def deepread_reply(messages: list[dict]) -> str:
    question = str(messages[1].get("content", "")) if len(messages) > 1 else ""
    results = [str(m.get("content")) for m in messages[2:] if m.get("role") == "user"]
    forced = "last round" in str(messages[-1].get("content", ""))
    retrievals = [r for r in results if r.startswith("Retrieved")]
    read = any(r.startswith("Section ") for r in results)
    seen = [b for r in results for b in paragraph_blocks(r)]
    if seen and (read or forced):
        _, line, cite = _best_reading(
            question, "", [(d, p, body) for d, _, _, p, _, body in seen], prefer_amounts=True
        )
        return _answer_json(question, line, cite)
    if seen:  # read the best retrieved paragraph's section around it
        best = _best_reading(
            question, "", [(d, p, body) for d, _, _, p, _, body in seen], prefer_amounts=True
        )
        cite = best[2]
        hit = next(
            (b for b in seen if cite and b[0] == cite["file"] and int(b[3]) == cite["page"]),
            seen[0],
        )
        doc, sid, number = hit[0], hit[1], hit[2]
        return f"READ_SECTION: {doc} | {sid} | {max(number - READ_AROUND, 0)} | " + str(
            number + READ_AROUND + 1
        )
    if forced or len(retrievals) >= MAX_SEARCHES:
        return '{"values": [], "citations": []}'
    return "RETRIEVE: " + _queries(question)[min(len(retrievals), MAX_SEARCHES - 1)]
