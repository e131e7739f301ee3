"""The no-answer decision: does the best hit answer the question, or is the passage missing?

A bar on the best hit's vector similarity refuses off-topic questions but not on-topic ones
whose passage is missing: a look-alike section (booting from CD when the question is about
booting from USB) scores as high as the right one. So the decision reads more than one
number (docs/retrieval.md, step 7), all from what search already has:

* ``similarity``: the best hit's vector similarity to the query (its closest member);
* ``nearest_similarity``: the vector leg's nearest chunk's similarity, whatever its rank after
  fusion: where the lexical leg puts a weak match first (a question in its own words sharing
  common words with it), a close passage further down says the question has an answer;
* ``margin``: the best hit's fused score minus the second's;
* ``nearest_spread``: the spread (standard deviation) of the ten nearest chunks'
  similarities: a question whose passage is there finds it (and its translations) standing
  above the rest, one whose passage is missing meets a flat crowd of look-alikes (the
  score-spread predictors of query-performance prediction); on the golden set's dev phrases
  it tells a missing heading from a paraphrased one better than any single feature above;
* ``coverage``: the share of the query's terms found in the best hit's passage in the query
  language (its heading path and its text, as a reader sees a later chunk of a section under
  its heading and as the lexical leg searches it), each term weighted by how rare it is among
  the candidates in that language, so
  that "the", "der" or "安装" count little and "USB", "Festplatte" count much; 1.0 (no
  evidence against the hit) when the hit has no passage in the query language, so a German
  question answered by an English-only passage is judged on similarity and margin alone;
* ``heading_similarity``: the query's similarity to the best hit's heading (the passage in
  the query's language, else the one shown; the closest of its heading path, each heading
  embedded as a query is), or to its text's opening where it has none: a heading or a sentence whose
  section is there names what that section's heading names, while a look-alike's heading
  names a neighbour ("Installing an alternative init system" for "package.init and
  package.default"). Read for statements only (``STATEMENT_FEATURES``): a question asks
  about a detail its section's heading need not name ("Wer ist der ursprüngliche Autor eines
  Programms?" under "Soziale Dynamik von Debian"). Read by the phrases' and sentences'
  models, it raised the dev split's traps refused plus answers served, held out, by 0.020 to
  0.034, and by 0.043 to 0.063 across languages, over four ways of drawing the folds: as
  much as read by every form (docs/benchmarks.md, "The best hit's heading");
* ``length``: log(1 + the query's words; a CJK word is about two characters, hence two
  bigrams), and ``coverage_x_length``: a question long enough to carry its own wording
  shares its content words with the passage that answers it, while a two-word heading
  need not (its passage says it in other words).

With a concatenated embedder (USE 0.1 + e5 0.9), the similarity is mostly e5's, whose cosines
sit high for any text: it answered "How do I file my tax return?" from a packaging guide at
0.84. USE's cosines keep an off-topic question low, so such an embedder's models also read its
**first part's** cosines alone (``PART_FEATURES``: the best hit's and the nearest chunk's).

When the best hit has **no passage in the query's language** (a German question against
English regulations), coverage has nothing to read, and models fitted where it reads
something gave it 1.0 and answered anything: on the golden set's dev split with the query
language's passages taken out, they refused none of the traps (docs/benchmarks.md, "Across
languages"). Such a question is judged by models of its own (``across_languages``), fitted on
exactly that setting over the features that do not read the query's words in a passage
(``ACROSS_FEATURES``).

A query has one of three **forms** (``query_form``): a **question** (a question mark at its
end, or ¿ at its start, or the particle that ends a Japanese (か) or Chinese (吗, 呢) question
written without one), else a **sentence** (ended by a full stop, or of ``sentence_words``
words or more) or a **phrase** (a heading, a title, key words). Each form has its own
logistic model over these features, fitted per embedder on the golden set's dev split
(benchmarks/tune_retrieval.py); it gives the probability that the best hit answers, and search answers "no passage found"
below that model's bar, ``retrieval.embedders.<embedder>.no_answer.<form>.below``: of the
bars that cost each query type of the form at most five points of its answers (so that a
heading a user words in their own way does not pay for the headings that copy a section's),
the one with the most traps refused less answers lost. The forms differ in what tells a
missing passage: a heading or a sentence copies its section's words, while a question asks
in words of its own; with one model for both, the questions paid for the
statements' bar (dev: 0.53 of the answerable questions served, 0.69 with a model per form).
And a sentence carries enough words of its own to tell a missing passage by them, while two
or three words tell little: with one model and one bar for every statement, the phrases
held the sentences' bar down (dev: 59.4 % of the traps refused; 66.2 % with phrases and
sentences apart, at the same cost; docs/benchmarks.md, "Phrases and sentences apart").

Coverage read the text alone until 2026-12-05, because read over the heading path it refused
a paraphrased heading that the sample corpus answers ("Debian パッケージ作成の典型的な作業の流れ"
for "Debian パッケージビルドのワークフロー"). With a sentence told by its full stop rather than
by its word count alone (a heading seldom ends in one, a first sentence nearly always does)
and each bar chosen for the most traps refused less answers lost, the heading path lifted
the test split's traps refused from 73 % to 81 % and the answers served from 90.3 % to 92.2 %
(docs/benchmarks.md, "Coverage over the headings, and a sentence by its full stop").
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pipeline.retrieval.fusion import Candidate, Group, term_weights
from pipeline.retrieval.terms import coverage, held_terms, terms, word_count
from pipeline.stores.lexical import searched_text

FEATURES = ("similarity", "nearest_similarity", "margin", "nearest_spread", "heading_similarity", "coverage", "length",
            "coverage_x_length")
ACROSS_FEATURES = ("similarity", "nearest_similarity", "margin", "nearest_spread", "heading_similarity", "length")
PART_FEATURES = ("first_part_similarity", "first_part_nearest")  # concatenated embedders only
STATEMENT_FEATURES = ("heading_similarity",)  # not read by the questions' models

SPREAD_OF = 10  # nearest chunks whose similarities' spread is read
LABEL_CHARS = 200  # of a chunk without headings, what names it (about a sentence)


def query_words(query: str, tokenization: str) -> float:
    """The query's length in words, as the ``length`` feature counts them (its distinct
    terms; a CJK word is about two characters, hence two bigrams)."""
    return word_count(terms(query, tokenization), tokenization)


def _in_language(group: Group, lang: str) -> Candidate | None:
    return next((c for c in group.members if c.lang == lang), None)


def read_passage(group: Group, query_lang: str) -> Candidate:
    """The best hit's passage the decision reads: the one in the query's language, else the
    one shown."""
    return _in_language(group, query_lang) or group.shown


def labels(passage: Candidate) -> list[str]:
    """What names a passage for ``heading_similarity``: its heading path, else the opening of
    its text (``LABEL_CHARS``: each label is embedded while the user waits, and a whole
    chunk of a scan without headings takes e5 some 100 ms)."""
    return ([h for h in passage.properties.get("heading_path") or [] if h.strip()]
            or [passage.properties.get("text", "")[:LABEL_CHARS]])


def features(query: str, query_lang: str, tokenization: str, groups: Sequence[Group],
             candidates: Sequence[Candidate], heading_similarity: float) -> dict[str, float]:
    """The decision's inputs for one question (``groups`` best first; ``candidates``: every
    chunk both legs returned, the sample the term weights come from; ``heading_similarity``,
    the query's to the ``labels`` of the ``read_passage``, embedded by the caller), and
    ``across_languages`` (1.0: the best hit has no passage in the query's language), which
    picks the models."""
    if not groups:
        return {**dict.fromkeys(FEATURES + PART_FEATURES, 0.0), "across_languages": 0.0}
    wanted = terms(query, tokenization)
    weights = term_weights(candidates, wanted, tokenization, query_lang)
    passage = _in_language(groups[0], query_lang)
    covered = coverage(weights, held_terms(searched_text(passage.properties), tokenization)) if passage else 1.0
    length = math.log1p(word_count(wanted, tokenization))
    nearest = sorted((c.similarity for c in candidates), reverse=True)[:SPREAD_OF]
    values = {"similarity": max(c.similarity for c in groups[0].members),
              "nearest_similarity": nearest[0],
              "margin": groups[0].score - (groups[1].score if len(groups) > 1 else 0.0),
              "nearest_spread": float(np.std(nearest)), "heading_similarity": heading_similarity,
              "coverage": covered, "length": length, "coverage_x_length": covered * length,
              "across_languages": float(passage is None)}
    if candidates[0].part_similarities:
        values["first_part_similarity"] = max(c.part_similarities[0] for c in groups[0].members)
        values["first_part_nearest"] = max(c.part_similarities[0] for c in candidates)
    return values


QUERY_FORMS = ("phrase", "sentence", "question")


def read_by(form: str, names: Sequence[str]) -> tuple[str, ...]:
    """Of the feature ``names``, those the ``form``'s models read."""
    return tuple(n for n in names if form != "question" or n not in STATEMENT_FEATURES)


# ? or ？ at the end (a closing quote or bracket may follow), ¿ at the start; Japanese か and
# Chinese 吗 嗎 呢 at the end, where such questions often set no question mark
_QUESTION = re.compile(r"^\W*¿|[?？][\"'”’）)」』]*\s*$|[か吗嗎呢][。．.]?\s*$")
# a full stop or an exclamation mark at the end (a closing quote or bracket may follow)
_SENTENCE_END = re.compile(r"[.!。！．][\"'”’）)」』]*\s*$")


def is_question(query: str) -> bool:
    return bool(_QUESTION.search(query))


def ends_a_sentence(query: str) -> bool:
    return bool(_SENTENCE_END.search(query))


def form_of(question: bool, sentence_end: bool, words: float, sentence_words: int) -> str:
    """``question``; else ``sentence`` (ended by a full stop, or of ``sentence_words`` words or
    more) or ``phrase``."""
    return "question" if question else "sentence" if sentence_end or words >= sentence_words else "phrase"


def query_form(query: str, tokenization: str, sentence_words: int) -> str:
    return form_of(is_question(query), ends_a_sentence(query), query_words(query, tokenization), sentence_words)


@dataclass(frozen=True)
class NoAnswerModel:
    """P(the best hit answers) = sigmoid(bias + sum(weight * feature)); refused below ``below``."""

    weights: dict[str, float]
    bias: float
    below: float

    def probability(self, values: dict[str, float]) -> float:
        z = self.bias + sum(w * values[name] for name, w in self.weights.items())
        return 1.0 / (1.0 + math.exp(-z))

    def answers(self, values: dict[str, float]) -> bool:
        return self.probability(values) >= self.below


@dataclass(frozen=True)
class NoAnswerDecision:
    """One model per query form (``QUERY_FORMS``), each with its own bar, and one per form for
    a best hit without a passage in the query's language (``across_languages``); a statement
    of fewer than ``sentence_words`` words is a phrase."""

    models: dict[str, NoAnswerModel]
    sentence_words: int
    across_languages: dict[str, NoAnswerModel]

    def model(self, query: str, tokenization: str, values: dict[str, float]) -> NoAnswerModel:
        models = self.across_languages if values["across_languages"] else self.models
        return models[query_form(query, tokenization, self.sentence_words)]

    def probability(self, query: str, tokenization: str, values: dict[str, float]) -> float:
        return self.model(query, tokenization, values).probability(values)

    def answers(self, query: str, tokenization: str, values: dict[str, float]) -> bool:
        return self.model(query, tokenization, values).answers(values)


def fit(rows: Sequence[dict[str, float]], answerable: Sequence[bool], l2: float = 1.0,
        names: Sequence[str] = FEATURES) -> tuple[dict[str, float], float]:
    """Logistic regression (Newton's method, classes weighted to equal total) of
    ``answerable`` on the named features; the weights and the bias, on the features' own
    scale. The features are standardised for the fit, so that the L2 penalty weighs each
    by its information rather than its units (a margin of 0.02 or a spread of 0.03 against a
    similarity of 0.8): unstandardised, the penalty kept the small-scale features out."""
    raw = np.array([[r[n] for n in names] for r in rows], dtype=float)
    mean, scale = raw.mean(axis=0), raw.std(axis=0)
    scale[scale == 0] = 1.0
    x = (raw - mean) / scale
    y = np.array(answerable, dtype=float)
    sample = np.where(y == 1, 0.5 / max(y.sum(), 1), 0.5 / max((1 - y).sum(), 1)) * len(y)
    design = np.hstack([x, np.ones((len(x), 1))])
    beta = np.zeros(design.shape[1])
    penalty = np.diag([l2] * len(names) + [0.0])
    for _ in range(50):
        p = 1 / (1 + np.exp(-design @ beta))
        gradient = design.T @ (sample * (p - y)) + penalty @ beta
        hessian = design.T @ (design * (sample * p * (1 - p))[:, None]) + penalty
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-9:
            break
    weights = beta[:-1] / scale
    bias = beta[-1] - float(weights @ mean)
    return {n: round(float(w), 4) for n, w in zip(names, weights)}, round(float(bias), 4)
