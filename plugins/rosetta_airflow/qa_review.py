"""The "Rosetta QA" plugin: review a batch's QA sample in the Airflow UI.

A FastAPI app mounted by the API server at /rosetta-qa, a navigation entry (the batches)
and an external view on each DAG run (its batch: the run id is the batch id). Plugin
FastAPI apps are not protected by Airflow: every route here resolves the user from
Airflow's own JWT (the UI's ``_token`` cookie or an ``Authorization: Bearer`` token,
airflow.api_fastapi.core_api.security.get_user; none: 401, invalid: 403) and asks the
configured auth manager whether the user may read DAG runs (viewing) or edit them
(deciding); refused: 403. The decisions go through pipeline.batch.review, the same code
as `rosetta qa reject`, with the Airflow user name in the audit trail.
"""

from __future__ import annotations

import html
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Form, HTTPException
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from airflow.api_fastapi.app import get_auth_manager
from airflow.api_fastapi.auth.managers.models.base_user import BaseUser
from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity, DagDetails
from airflow.api_fastapi.core_api.security import get_user
from airflow.plugins_manager import AirflowPlugin
from pipeline.batch import review, review_view
from pipeline.config import get_settings

PREFIX = "/rosetta-qa"
app = FastAPI(title="Rosetta QA", docs_url=None, redoc_url=None, openapi_url=None)


def _authorised(method: str):
    """A dependency: the Airflow user, allowed to read ("GET") or edit ("PUT") DAG runs."""

    async def check(user: Annotated[BaseUser, Depends(get_user)]) -> BaseUser:
        allowed = get_auth_manager().is_authorized_dag(method=method, access_entity=DagAccessEntity.RUN,
                                                       details=DagDetails(id=None), user=user)
        if not allowed:
            raise HTTPException(status_code=403, detail=f"{user.get_name()} may not {'review' if method != 'GET' else 'view'} batches")
        return user

    return check


Viewer = Annotated[BaseUser, Depends(_authorised("GET"))]
Reviewer = Annotated[BaseUser, Depends(_authorised("PUT"))]

STYLE = """body{font-family:sans-serif;margin:1.2em;max-width:70em}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
.chunk{border:1px solid #bbb;border-radius:4px;padding:.6em;margin:.6em 0}
.fail{color:#b00020;font-weight:bold}.ok{color:#1b5e20}.banner{padding:.6em;margin:.6em 0;border-radius:4px}
.rolled{background:#fde0e0;border:1px solid #b00020}.passed{background:#e3f4e3;border:1px solid #1b5e20}
.pruned{background:#eee;border:1px solid #777}
pre{white-space:pre-wrap;background:#f6f6f6;padding:.4em;max-height:16em;overflow:auto}img.crop{max-width:100%;border:1px solid #999}"""


def _page(title: str, body: str, user: BaseUser) -> HTMLResponse:
    return HTMLResponse(f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
                        f"<style>{STYLE}</style></head><body><p style='float:right'>signed in as "
                        f"<b id='user'>{html.escape(user.get_name())}</b></p><h1>{html.escape(title)}</h1>{body}</body></html>")


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


@app.get("/", response_class=HTMLResponse)
def batches_page(user: Viewer) -> HTMLResponse:
    rows = "".join(
        f"<tr><td><a href='{PREFIX}/batches/{_e(b['batch_id'])}'>{_e(b['batch_id'])}</a></td><td>{_e(b['kind'])}</td>"
        f"<td class='status'>{_e(b['status'])}</td><td>{_e(b['qa'])}</td><td>{b['sample_size']} of {b['total_chunks']}</td>"
        f"<td>{b['reviewed']}</td><td>{_e(b['started_at'])}</td></tr>"
        for b in review_view.batches(get_settings()))
    table = ("<table id='batches'><tr><th>batch</th><th>kind</th><th>status</th><th>QA gate</th><th>sampled</th>"
             f"<th>reviewed</th><th>started</th></tr>{rows}</table>") if rows else "<p>No batches yet.</p>"
    return _page("Rosetta QA: batches", table, user)


def _chunk_html(batch_id: str, c: dict[str, Any]) -> str:
    checks = "".join(f"<li class='{'ok' if v['passed'] else 'fail'}'>{_e(name)}: {'ok' if v['passed'] else 'FAILED'}"
                     f" ({_e(v['detail'])})</li>" for name, v in c["checks"].items())
    human = c["human"]
    decided = (f"<p class='human {'fail' if human['verdict'] == 'rejected' else 'ok'}'>{_e(human['verdict'])} by "
               f"{_e(human.get('by'))} at {_e(human['at'])}: {_e(human['reason'])}</p>") if human else ""
    lineage = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in c["lineage"].items())
    crop = (f"<p>Source page {c['pages'][0]}:<br><img class='crop' alt='source crop' "
            f"src='{PREFIX}/batches/{_e(batch_id)}/crop/{_e(c['chunk_id'])}'></p>") if c["ocr"] else ""
    return (f"<div class='chunk' id='chunk-{_e(c['chunk_id'])}'><label><input type='checkbox' name='chunk_ids' "
            f"value='{_e(c['chunk_id'])}'> <b>{_e(c['chunk_id'])}</b></label> [{_e(c['lang'])}] pages "
            f"{_e(c['pages'][0])}-{_e(c['pages'][1])} — automatic checks: "
            f"<span class='{'ok' if c['passed'] else 'fail'}'>{'passed' if c['passed'] else 'FAILED'}</span>"
            f"{decided}<pre>{_e(c['text'])}</pre>{crop}<details><summary>checks</summary><ul>{checks}</ul></details>"
            f"<details><summary>lineage</summary><table>{lineage}</table></details></div>")


@app.get("/batches/{batch_id}", response_class=HTMLResponse)
def batch_page(batch_id: str, user: Viewer) -> HTMLResponse:
    sample = review_view.batch_sample(get_settings(), batch_id)
    if sample is None:
        raise HTTPException(status_code=404, detail=f"batch {batch_id} has no QA report")
    r = sample["report"]
    review_state = r.get("review", {})
    if sample["pruned"]:
        banner = (f"<div class='banner pruned' id='pruned'>Past its review window: the workspace was pruned at "
                  f"{_e(sample['pruned']['at'])}, so the batch can no longer be rolled back; reprocess a document "
                  "to change it.</div>")
    elif review_state.get("rolled_back"):
        rb = review_state.get("rollback") or {}
        banner = (f"<div class='banner rolled' id='rollback'>Batch rolled back: {review_state['failures']} failing "
                  f"sampled chunk(s), more than the plan's {r['acceptance_number']}. {_e(rb.get('removed', 0))} chunk(s) "
                  f"removed from the live collection, {_e(rb.get('restored', 0))} replaced chunk(s) restored.</div>")
    else:
        banner = (f"<div class='banner passed'>Gate {'passed' if r['passed'] else 'FAILED'}: {r['failures']} of "
                  f"{r.get('sample_size', 0)} sampled chunk(s) failed automatic checks; the plan passes at most "
                  f"{r['acceptance_number']}. Rejecting more rolls the batch back.</div>")
    audit = "".join(f"<tr><td>{_e(a['at'])}</td><td>{_e(a['by'])}</td><td>{_e(a['verdict'])}</td>"
                    f"<td>{_e(', '.join(a['chunk_ids']))}</td><td>{_e(a['reason'])}</td>"
                    f"<td>{'rolled back' if a['rolled_back'] else ''}</td></tr>" for a in sample["audit"])
    reject = "" if sample["pruned"] else "<button name='verdict' value='rejected' id='reject'>Reject selected</button> "
    body = (f"<p><a href='{PREFIX}/'>all batches</a> · status: <b id='status'>{_e(sample['status'])}</b> · "
            f"{r.get('sample_size', 0)} of {r['total_chunks']} chunk(s) sampled</p>{banner}"
            f"<form method='post' action='{PREFIX}/batches/{_e(batch_id)}/decisions'>"
            f"<p>Reason: <input name='reason' id='reason' size='60'> {reject}"
            f"<button name='verdict' value='accepted' id='accept'>Accept selected</button></p>"
            + "".join(_chunk_html(batch_id, c) for c in sample["chunks"]) + "</form>"
            f"<h2>Audit trail</h2><table id='audit'><tr><th>when</th><th>who</th><th>verdict</th><th>chunks</th>"
            f"<th>reason</th><th></th></tr>{audit}</table>")
    return _page(f"Rosetta QA: batch {batch_id}", body, user)


@app.get("/batches/{batch_id}/crop/{chunk_id}")
def crop(batch_id: str, chunk_id: str, user: Viewer) -> Response:
    png = review_view.source_crop(get_settings(), batch_id, chunk_id)
    if png is None:
        raise HTTPException(status_code=404, detail=f"no source page for {chunk_id} in batch {batch_id}")
    return Response(png, media_type="image/png")


@app.post("/batches/{batch_id}/decisions")
def decide(batch_id: str, user: Reviewer, verdict: Annotated[str, Form()], reason: Annotated[str, Form()] = "",
           chunk_ids: Annotated[list[str], Form()] = ()) -> Response:
    if not chunk_ids:
        raise HTTPException(status_code=400, detail="select at least one chunk")
    try:
        review.review(batch_id, list(chunk_ids), reason, get_settings(), verdict=verdict, reviewer=user.get_name())
    except (ValueError, FileNotFoundError) as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from exc
    return RedirectResponse(f"{PREFIX}/batches/{batch_id}", status_code=303)


class RosettaQaPlugin(AirflowPlugin):
    name = "rosetta_qa"
    fastapi_apps = [{"app": app, "url_prefix": PREFIX, "name": "Rosetta QA"}]
    external_views = [
        {"name": "Rosetta QA", "href": f"{PREFIX}/", "destination": "nav", "url_route": "rosetta-qa",
         "category": "browse"},
        {"name": "QA review", "href": f"{PREFIX}/batches/{{RUN_ID}}", "destination": "dag_run",
         "url_route": "rosetta-qa-run"},
    ]
