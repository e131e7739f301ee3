"""A document's date (its file's last modification, else its creation) on every chunk, shown
by search and asked by `rosetta search --since / --until`: the rule, then three versions of a
retention policy loaded through the real corpus_refresh DAG into the real Weaviate."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from conftest import text_pdf
from pdf_signing import save_dates
from pipeline.contracts import DocumentInfo
from pipeline.stages.enrich import file_date


@pytest.mark.parametrize("info, expected", [
    (DocumentInfo(created="2023-03-01T09:00:00+01:00", modified="2024-05-02T10:00:00Z"), "2024-05-02T10:00:00Z"),
    (DocumentInfo(created="2023-03-01T09:00:00+01:00"), "2023-03-01T09:00:00+01:00"),  # never modified
    (DocumentInfo(modified="2016-07-28T14:14:06"), "2016-07-28T14:14:06Z"),  # no offset: read as UTC
    (DocumentInfo(modified="2024-02-31T00:00:00"), None),  # the PDF date syntax takes a 31 February
    (DocumentInfo(), None),
])
def test_a_files_date_is_its_last_modification_else_its_creation(info, expected):
    assert file_date(info) == expected


@pytest.mark.parametrize("stamp, held", [
    (datetime(2025, 3, 1, 8, 30, tzinfo=timezone(timedelta(hours=9))), True),  # 28 February in UTC
    (datetime(2025, 2, 28, 21, 0, tzinfo=timezone(timedelta(hours=-5))), False),  # 1 March in UTC
    ("2025-03-31T23:30:00-12:00", True),  # a shown chunk's JSON: 1 April in UTC
    ("2025-04-01T00:30:00+14:00", False),
    (None, False),  # undated: in no period
])
def test_a_period_holds_the_files_of_its_days_on_their_own_clock(stamp, held):
    from pipeline.retrieval.scope import ScopeFilter

    assert ScopeFilter(None, None, since=date(2025, 3, 1), until=date(2025, 3, 31)).holds({"file_date": stamp}) is held


POLICY = """Richtlinie zur Aufbewahrung von Geschäftsunterlagen
§ 1 Geltungsbereich
Diese Richtlinie gilt für alle Rechnungen, Verträge und Buchungsbelege der Gesellschaft und ihrer Niederlassungen.
§ 2 Aufbewahrungsfristen
Rechnungen und Buchungsbelege werden {years} Jahre aufbewahrt, gerechnet ab dem Ende des Kalenderjahres ihrer Ausstellung.
"""
QUESTION = "Wie lange werden Rechnungen aufbewahrt?"
VERSIONS = {"policy-2023.pdf": ("zehn", datetime(2023, 3, 1, 9, 0, tzinfo=timezone.utc)),
            "policy-2025.pdf": ("acht", datetime(2025, 6, 30, 10, 0, tzinfo=timezone.utc)),
            "policy-undated.pdf": ("sieben", None)}
# saved in Tokyo at 08:30 on 30 June 2025: still 29 June in UTC, of 30 June on the file's own clock
TOKYO_MORNING = {"created": "D:20250531100000Z", "modified": "D:20250630083000+09'00'"}


@pytest.fixture(scope="module")
def policies(settings, weaviate_server):
    from rosetta_airflow.runner import run_dag

    settings.source_dir.mkdir(parents=True, exist_ok=True)
    for name, (years, when) in VERSIONS.items():
        # matplotlib stamps a CreationDate of its own unless told None
        text_pdf(POLICY.format(years=years), settings.source_dir / name,
                 metadata={"CreationDate": when - timedelta(days=30) if when else None, "ModDate": when})
    save_dates(settings.source_dir / "policy-2025.pdf", **TOKYO_MORNING)  # matplotlib writes no offset east of UTC
    run_id, state = run_dag("corpus_refresh", {"paths": [], "force": False}, settings)
    assert state == "success", run_id


def files(result) -> set[str]:
    return {c.properties["source_path"].rsplit("/", 1)[-1] for g in result.groups for c in g.members}


def test_a_period_finds_the_version_dated_in_it_both_ends_inclusive(policies, settings):
    from pipeline.retrieval import Scope, search

    everything = search(QUESTION, settings)
    assert everything.answered and files(everything) == set(VERSIONS)  # undated ones too, with no period
    # of two dated versions the later is shown, the older listed under it with the word it differs
    # in (the undated one is shown where it ranks first: its date is unknown)
    shown = everything.as_dict()["hits"][0]
    words = {"2025-06-30": "acht", "2023-03-01": "zehn", None: "sieben"}
    assert shown["date"] != "2023-03-01" and f"{words[shown['date']]} Jahre" in shown["text"], shown
    assert {(c["date"], tuple(map(tuple, c["differs"]))) for c in shown["copies"]} == {
        (day, ((words[shown["date"]], word),)) for day, word in words.items() if day != shown["date"]}
    latest = search(QUESTION, settings, scope=Scope(since=date(2025, 1, 1)))
    assert latest.answered and files(latest) == {"policy-2025.pdf"}
    hit = latest.as_dict()["hits"][0]
    assert hit["date"] == "2025-06-30" and "acht Jahre" in hit["text"]
    older = search(QUESTION, settings, scope=Scope(until=date(2024, 12, 31)))
    assert files(older) == {"policy-2023.pdf"}
    # the day on the file's own clock, as search shows it, not the UTC day (29 June)
    one_day = search(QUESTION, settings, scope=Scope(since=date(2025, 6, 30), until=date(2025, 6, 30)))
    assert files(one_day) == {"policy-2025.pdf"}
    assert files(search(QUESTION, settings, scope=Scope(until=date(2025, 6, 29)))) == {"policy-2023.pdf"}
    later = search(QUESTION, settings, scope=Scope(since=date(2025, 7, 1)))
    assert not later.answered and later.groups == []  # dated nothing, and the undated one is in no period
    with pytest.raises(ValueError, match="--since 2025-07-01 is after --until 2025-06-30"):
        search(QUESTION, settings, scope=Scope(since=date(2025, 7, 1), until=date(2025, 6, 30)))


def test_the_search_command_takes_days_and_shows_the_date(policies, settings, capsys):
    from pipeline.cli.main import main

    assert main(["search", QUESTION, "--since", "2025-01-01"]) == 0
    out = capsys.readouterr().out
    assert "policy-2025.pdf (2025-06-30) p.1" in out and "policy-2023" not in out, out
    assert main(["search", QUESTION]) == 0  # the other versions listed under a hit, each with its date
    listed = [line for line in capsys.readouterr().out.splitlines() if line.lstrip().startswith(("≈", "="))]
    dated = [line for line in listed if "policy-2023.pdf" in line or "policy-2025.pdf" in line]
    assert dated and all("policy-2023.pdf (2023-03-01) p.1" in line or "policy-2025.pdf (2025-06-30) p.1" in line
                         for line in dated), listed
    # a version is no "same text": the words it differs in are shown (here, how many years)
    versions = [line for line in listed if "another version" in line]
    assert versions and all(f"→ «{VERSIONS[name][0]}»" in line for line in versions for name in VERSIONS
                            if name in line), listed
    assert main(["search", QUESTION, "--until", "2020-12-31"]) == 0
    assert "no passage found" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["search", QUESTION, "--since", "2025-13-01"])
    assert "2025-13-01: not a day (YYYY-MM-DD)" in capsys.readouterr().err


def test_a_dated_documents_chunks_come_back_with_their_date_when_a_batch_is_rolled_back(policies, settings):
    """A forced re-ingestion replaces the policy's chunks and keeps them in replaced_chunks.json;
    rolling the batch back puts them back, date and all (a datetime written as JSON text by
    str() was no date Weaviate would take back)."""
    from pipeline.publish.promote import rollback_promoted
    from pipeline.retrieval import Scope, search
    from rosetta_airflow.runner import run_dag

    path = settings.source_dir / "policy-2025.pdf"
    before = search(QUESTION, settings, scope=Scope(since=date(2025, 1, 1))).as_dict()["hits"][0]
    run_id, state = run_dag("corpus_refresh", {"paths": [str(path)], "force": True}, settings)
    assert state == "success", run_id
    journal = rollback_promoted(run_id, settings)
    assert journal["state"] == "rolled_back" and journal["restored"] >= 1, journal
    after = search(QUESTION, settings, scope=Scope(since=date(2025, 1, 1))).as_dict()["hits"][0]
    assert after["chunk_id"] == before["chunk_id"] and after["date"] == "2025-06-30"


def test_rosetta_extract_prints_the_dates_the_file_states(policies, settings, capsys):
    from pipeline.cli.main import main

    assert main(["extract", str(settings.source_dir / "policy-2025.pdf")]) == 0
    out = capsys.readouterr().out
    assert "  created: 2025-05-31T10:00:00Z" in out and "  modified: 2025-06-30T08:30:00+09:00" in out, out
    assert main(["extract", str(settings.source_dir / "policy-undated.pdf")]) == 0
    assert "created:" not in capsys.readouterr().out
