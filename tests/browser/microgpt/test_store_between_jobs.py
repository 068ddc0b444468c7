"""A new Python heap is stored between jobs, never beside one, whatever the moment the first job is asked for.

The first Python that starts the normal way hands the page its heap just before it says
"ready" (snapshot.js); the page hashes and stores it only while no worker is taken for a job
(spare_workers.js betweenJobs), and a job waits for a store under way (takeSpare). Each side
must see the other in the same step it starts: a learner's first Check asked for right as the
first Python was ready once found no store yet, and the store then found no job yet, so they ran
together and a correct solution was stopped at 5 s in WebKit (CI, stop 40).

Here the runner is real (on a page that starts no exercise) and its workers are stand-ins that answer at once: each says it made a
heap, then "ready", and answers a job after JOB_MS. The job is asked for after 0 to 12 further
microtask turns once "ready" is known, which puts it at every point of the race; Cache Storage's
put is held for PUT_MS so that a store and a job that overlap cannot miss each other.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

TURNS = 13
RACE_JS = """async ({ turns, jobMs, putMs }) => {
  const at = (path) => new URL('../' + path, document.baseURI).href;   // (the page is credits/)
  const log = [];
  const put = Cache.prototype.put;
  Cache.prototype.put = async function (request, response) {
    const record = { kind: 'store', start: performance.now(), end: null };
    log.push(record);
    try {
      await put.call(this, request, response);
      await new Promise((resolve) => setTimeout(resolve, putMs));
    } finally {
      record.end = performance.now();
    }
  };
  let made = 0;
  class StandIn {
    constructor() {
      this.onmessage = null;
      this.onerror = null;
      const first = made++ === 0; // a later one restores the stored heap: it makes none
      setTimeout(() => {
        if (first) this.say({ type: 'snapshot-made', key: 'stand-in', packed: new Uint8Array(4096) });
        this.say({ type: 'ready', pyodide: 'stand-in', python: '3', ms: 1, stages: {}, start: 'normal' });
      });
    }
    say(data) { if (this.onmessage) this.onmessage({ data }); }
    postMessage(message) {
      if (message.type !== 'check') return;
      const record = { kind: 'job', start: performance.now(), end: null };
      log.push(record);
      setTimeout(() => {
        record.end = performance.now();
        this.say({ type: 'collected', token: message.token, result: { outputs: [], failed: false, stop: '' } });
        this.say({ type: 'done', token: message.token, result: { message: 'checked' } });
      }, jobMs);
    }
    terminate() {}
  }
  const Native = window.Worker;
  window.Worker = StandIn;
  try {
    const { PythonRunner } = await import(at('js/microgpt/runner.js'));
    const results = [];
    for (let turn = 0; turn < turns; turn++) {
      localStorage.clear();
      await caches.delete('pyodide-snapshot');
      log.length = 0;
      made = 0;
      const runner = new PythonRunner();
      await runner.ready;
      for (let i = 0; i < turn; i++) await null;
      const verdict = await runner.check('pass', undefined, () => false);
      for (let i = 0; i < 1000 && !log.some((r) => r.kind === 'store' && r.end !== null); i++) await new Promise((r) => setTimeout(r, 10));
      const stores = log.filter((r) => r.kind === 'store'), jobs = log.filter((r) => r.kind === 'job');
      const overlaps = jobs.filter((j) => stores.some((s) => s.start < j.end && s.end > j.start)).length;
      results.push({ turn, stores: stores.length, jobs: jobs.length, overlaps, timedOut: verdict.timedOut });
      runner.dispose();
    }
    return results;
  } finally {
    window.Worker = Native;
  }
}"""


def test_a_heap_is_stored_between_jobs_whenever_the_first_job_comes(make_page, base_url):
    page, _ = make_page()
    page.goto(base_url + "credits/")  # a page that starts no Python of its own
    results = page.evaluate(RACE_JS, {"turns": TURNS, "jobMs": 400, "putMs": 400})
    assert [r["turn"] for r in results] == list(range(TURNS)), results
    assert all(r["stores"] == 1 and r["jobs"] == 1 for r in results), results
    overlapping = [r["turn"] for r in results if r["overlaps"]]
    assert overlapping == [], f"a job ran beside a store when asked for {overlapping} turns after ready: {results}"
