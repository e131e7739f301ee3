"""The "Rosetta QA" Airflow plugin against the real thing: Airflow's API server (with the
plugin, simple auth manager with real users) on 127.0.0.1, driven over HTTP and in
headless Chromium. A promoted batch is opened, chunks are rejected, the batch rolls back
and the live Weaviate collection is exactly as before it. Screenshots go to the test's
tmp dir (printed) and, with ROSETTA_UPDATE_DOCS_SCREENSHOT=1, to docs/qa-review.png.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid as uuidlib
from pathlib import Path

import httpx
import numpy as np
import pytest

from conftest import free_port
from pipeline.batch import discovery, lifecycle, runner
from pipeline.contracts import DocRef
from pipeline.stores import vector_store as store
from pipeline.stores.document_registry import DocumentRegistry

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
USERS = "reviewer:admin,viewer:viewer"


def publish(settings, batch_id: str, files: dict[str, Path]) -> dict:
    """A batch through the real stages and load -> qa -> promote -> finish."""
    docs = [discovery.source_document(path, settings, doc_id=doc_id) for doc_id, path in files.items()]
    discovery.write_manifest(settings, batch_id, "corpus_refresh", docs, [])
    DocumentRegistry(settings.document_registry_path).start_batch(batch_id, "corpus_refresh")
    results = [runner.process_document(DocRef(batch_id=batch_id, doc_id=d.doc_id), settings).model_dump()
               for d in docs]
    return lifecycle.publish_batch(batch_id, results, settings)


def live_snapshot(client, settings) -> dict:
    return {u: (p, v) for u, p, v in store.iterate_objects(client.collections.get(settings.weaviate.collection))}


@pytest.fixture(scope="module")
def airflow_api(settings, weaviate_server, tmp_path_factory):
    """Airflow's API server with Rosetta's plugins folder, on a free loopback port."""
    home = tmp_path_factory.mktemp("airflow-home")
    port = free_port()
    env = {**os.environ, "AIRFLOW_HOME": str(home), "AIRFLOW_CONFIG": str(ROOT / "airflow.cfg"),
           "AIRFLOW__CORE__PLUGINS_FOLDER": str(ROOT / "plugins"), "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags"),
           "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
           "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
           "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": USERS,
           "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(home / "passwords.json"),
           "AIRFLOW__API_AUTH__JWT_SECRET": uuidlib.uuid4().hex, "AIRFLOW__API__BASE_URL": f"http://127.0.0.1:{port}",
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "plugins"), os.environ.get("PYTHONPATH", "")])}
    airflow = [sys.executable, "-m", "airflow"]
    subprocess.run([*airflow, "db", "migrate"], env=env, check=True, capture_output=True)
    log = (home / "api-server.log").open("w")
    server = subprocess.Popen([*airflow, "api-server", "--host", "127.0.0.1", "--port", str(port)], env=env,
                              stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                if httpx.get(f"{base}/api/v2/monitor/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None, (home / "api-server.log").read_text()[-3000:]
            time.sleep(0.5)
        passwords = json.loads((home / "passwords.json").read_text())
        yield {"base": base, "passwords": passwords, "log": home / "api-server.log"}
    finally:
        server.terminate()
        server.wait(30)


@pytest.fixture(scope="module")
def promoted(settings, weaviate_server):
    """Two promoted batches of the same document: rolling the second back restores the first."""
    doc = {"doc-en": FIXTURES / "en-born-digital.pdf", "doc-scan": FIXTURES / "image-only.pdf"}
    assert publish(settings, "ui-first", doc)["status"] == "promoted"
    before = live_snapshot(weaviate_server, settings)
    assert publish(settings, "ui-second", doc)["status"] == "promoted"
    return before


def token(base: str, user: str, password: str) -> str:
    response = httpx.post(f"{base}/auth/token", json={"username": user, "password": password})
    assert response.status_code in (200, 201), response.text
    return response.json()["access_token"]


def test_the_plugin_refuses_anonymous_and_unauthorised_requests(airflow_api, promoted):
    base, pw = airflow_api["base"], airflow_api["passwords"]
    page = f"{base}/rosetta-qa/batches/ui-second"
    assert httpx.get(f"{base}/rosetta-qa/").status_code == 401
    assert httpx.get(page).status_code == 401
    assert httpx.post(f"{page}/decisions", data={"verdict": "rejected", "reason": "x", "chunk_ids": ["a"]}).status_code == 401
    assert httpx.get(page, headers={"Authorization": "Bearer not-a-token"}).status_code in (401, 403)
    viewer = {"Authorization": f"Bearer {token(base, 'viewer', pw['viewer'])}"}
    assert httpx.get(page, headers=viewer).status_code == 200  # a viewer may read ...
    refused = httpx.post(f"{page}/decisions", headers=viewer, data={"verdict": "rejected", "reason": "x",
                                                                    "chunk_ids": ["a"]})
    assert refused.status_code == 403  # ... but not decide


def test_reviewer_rejects_in_the_browser_and_the_batch_rolls_back(airflow_api, promoted, settings,
                                                                   weaviate_server, tmp_path):
    from selenium import webdriver
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    base, pw = airflow_api["base"], airflow_api["passwords"]
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1400"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService("/usr/bin/chromedriver"))
    wait = WebDriverWait(driver, 60)
    shots = []

    def shot(name: str) -> None:
        path = tmp_path / f"{len(shots) + 1:02d}-{name}.png"
        driver.save_screenshot(str(path))
        shots.append(path)

    try:
        driver.get(f"{base}/auth/login")  # Airflow's own login page (simple auth manager)
        wait.until(ec.presence_of_element_located((By.NAME, "username"))).send_keys("reviewer")
        driver.find_element(By.NAME, "password").send_keys(pw["reviewer"])
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait.until(lambda d: any(c["name"] == "_token" for c in d.get_cookies()))
        shot("logged-in")

        driver.get(f"{base}/rosetta-qa/")
        wait.until(ec.presence_of_element_located((By.ID, "batches")))
        assert driver.find_element(By.ID, "user").text == "reviewer"
        shot("batches")
        driver.find_element(By.LINK_TEXT, "ui-second").click()
        wait.until(ec.presence_of_element_located((By.ID, "reject")))
        assert driver.find_element(By.ID, "status").text == "promoted"
        boxes = driver.find_elements(By.NAME, "chunk_ids")
        report = json.loads((settings.data_root / "batches" / "ui-second" / "qa_report.json").read_text())
        assert len(boxes) == report["sample_size"]
        assert driver.find_elements(By.CSS_SELECTOR, "img.crop"), "the OCR chunk shows its source page crop"
        shot("batch")
        for box in boxes[:report["acceptance_number"] + 1]:
            box.click()
        driver.find_element(By.ID, "reason").send_keys("OCR garbage from a dusty scan")
        driver.find_element(By.ID, "reject").click()
        wait.until(ec.presence_of_element_located((By.ID, "rollback")))
        assert driver.find_element(By.ID, "status").text == "rolled_back"
        audit = driver.find_element(By.ID, "audit").text
        assert "reviewer" in audit and "OCR garbage from a dusty scan" in audit and "rolled back" in audit
        shot("rolled-back")
        natural = driver.execute_script("return [...document.querySelectorAll('img.crop')].map(i => i.naturalWidth)")
        assert all(w > 50 for w in natural), natural  # the crop is a real image
    finally:
        driver.quit()
        print("\nscreenshots:", *shots, sep="\n  ")

    after = live_snapshot(weaviate_server, settings)
    assert after.keys() == promoted.keys()  # Weaviate holds the first batch again, exactly
    for uuid, (props, vector) in promoted.items():
        assert after[uuid][0] == props
        np.testing.assert_allclose(after[uuid][1], vector, rtol=0, atol=1e-6)
    assert DocumentRegistry(settings.document_registry_path).batch("ui-second").status == "rolled_back"
    if os.environ.get("ROSETTA_UPDATE_DOCS_SCREENSHOT"):
        from PIL import Image

        Image.open(shots[-1]).convert("P", palette=Image.Palette.ADAPTIVE).save(ROOT / "docs" / "qa-review.png",
                                                                                 optimize=True)


def test_a_batch_past_its_review_window_says_so_and_refuses_a_rejection(airflow_api, promoted, settings, monkeypatch):
    from pipeline.batch import retention

    monkeypatch.setattr(settings.retention, "keep_days", 0)
    monkeypatch.setattr(settings.retention, "keep_batches", 0)
    retention.prune(settings)
    base, pw = airflow_api["base"], airflow_api["passwords"]
    reviewer = {"Authorization": f"Bearer {token(base, 'reviewer', pw['reviewer'])}"}
    page = httpx.get(f"{base}/rosetta-qa/batches/ui-first", headers=reviewer)
    assert page.status_code == 200 and "id='pruned'" in page.text and "can no longer be rolled back" in page.text
    assert "id='reject'" not in page.text
    report = json.loads((settings.data_root / "batches" / "ui-first" / "qa_report.json").read_text())
    refused = httpx.post(f"{base}/rosetta-qa/batches/ui-first/decisions", headers=reviewer, follow_redirects=False,
                         data={"verdict": "rejected", "reason": "too late", "chunk_ids": [report["sample"][0]["chunk_id"]]})
    assert refused.status_code == 400 and "past its review window" in refused.text
    assert DocumentRegistry(settings.document_registry_path).batch("ui-first").status == "promoted"
