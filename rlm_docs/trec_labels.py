"""The six coarse TREC question classes (OOLONG-TREC's labels), in OOLONG's canonical order.

The workload generator (`rlm_docs.bench`) samples and scores with them and the offline model's
classifier (`rlm_docs.offline.trec`) answers with them; they live here, below both, so that a
model never imports the benchmark code.
"""

ABBREVIATION = "abbreviation"
ENTITY = "entity"
DESCRIPTION = "description and abstract concept"
HUMAN = "human being"
LOCATION = "location"
NUMERIC = "numeric value"
LABELS = (ABBREVIATION, ENTITY, DESCRIPTION, HUMAN, LOCATION, NUMERIC)
