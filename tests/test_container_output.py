"""What a stage container prints reaches Airflow as one stream: the XCom is read from it."""

from __future__ import annotations

from rosetta_airflow.containers import last_json_line


def test_the_result_is_read_when_a_progress_line_lands_on_the_same_line():
    """As a real docker-mode run printed it: the stage worker's progress line right after the JSON."""
    stream = ['enrich scans-zh-scan-3c68fda1: ok',
              '{"batch_id": "b", "doc_id": "scans-zh-scan-3c68fda1", "stage": "enrich", "status": "ok"}'
              '2026-12-01 08:11:42,928 INFO pipeline.progress: enrich    scans-zh-scan-3c68fda1   ok']
    assert last_json_line(stream) == {"batch_id": "b", "doc_id": "scans-zh-scan-3c68fda1", "stage": "enrich",
                                      "status": "ok"}
    assert last_json_line(['{"a": 1}', "a log line"]) == {"a": 1}
