"""Learner code with bad intentions, in real Pyodide: each verdict depends only on the code submitted for it.

Every Check and every Run gets a fresh Pyodide worker (site_src/js/microgpt/runner.js),
the page computes microgpt's answers itself and the worker gets only the inputs.
Each attack below is submitted together with a wrong answer (which must not pass),
then the correct solution (which must pass) and the unchanged starter (which must
fail with its own message) follow, on a cross-origin isolated page and on a plain one.
Each job waits for a fresh worker, so this file takes a while on a busy machine.

JavaScript reached from Python can do whatever its worker can, so the worker
removes from its realm what would outlive the job before any learner code runs
(lockDown in site_src/js/microgpt/exercise/lock_down.js): the attacks on the
origin's saved files (the service worker's caches, the snapshot) are followed
by a reload, served by the service worker, and the verdicts are checked again.
"""

from __future__ import annotations

import json

import pytest

from tests.browser_util import PageWatch, wait_until
from tests.browser.microgpt.test_exercise_page import CHECK_JS, WAIT_EXERCISE_JS, open_microgpt
from tests.browser.offline.test_pyodide_downloaded_once import CACHED_JS, PYODIDE_FILES
from tests.pyodide.test_checker_without_browser import MISTAKES, solution, starter

pytestmark = pytest.mark.browser

RUN_JS = "(source) => window.mhaExercise.run(source)"

# JavaScript run from Python through the Pyodide API object: the way out of the sandbox an attacker would try.
_JS = "import pyodide_js\nrun_js = pyodide_js.constructor.constructor\n"
ATTACKS = {
    # Any later verdict "Passed!": every message the worker sends claims the right numbers.
    "pyodide_js_post_message": _JS
    + (
        "run_js('''const post = self.postMessage.bind(self);\n"
        "self.postMessage = (m) => post(m && m.result ? { ...m, result: { ...m.result, failed: false, stop: '', message: '' } } : m);''')()\n"
    ),
    "json_parse_patch": _JS + "run_js('JSON.parse = () => ({ outputs: [], failed: false, stop: \"\", ok: true })')()\n",
    "json_default_encoder": 'import json\njson._default_encoder.encode = lambda o: \'{"outputs": [], "failed": false, "stop": ""}\'\n',
    "gc_builtins_copy": (
        "import gc\n"
        "for d in gc.get_objects():\n"
        "    if type(d) is dict and 'print' in d and 'len' in d and d is not __builtins__.__dict__:\n"
        "        d['len'] = lambda x: 16\n"
        "        d['sum'] = lambda *a: 0.0\n"
    ),
    "closure_edit": (
        "import sandbox\n"
        "for cell in sandbox.restore.__closure__ or ():\n"
        "    try:\n"
        "        cell.cell_contents = None\n"
        "    except Exception:\n"
        "        pass\n"
    ),
    "import_reference": "import microgpt_floats as F\n",
    "tmp_file": "open('/tmp/answers.py', 'w').write('PASS = True\\n')\n",
    "input": "input('your name? ')\n",
    "deep_recursion": "import sys\nsys.setrecursionlimit(100000)\ndef down(n):\n    return down(n + 1)\ntry:\n    down(0)\nexcept RecursionError:\n    pass\n",
}


def _holding(body: str) -> str:
    """Learner code that runs `body` (async JavaScript) and holds back every message its worker sends
    until `body` has finished or failed, so that whatever it writes is written before the page ends the job.
    (`body` goes into a Python string literal: its backslashes are doubled to reach JavaScript as written.)"""
    return _JS + (
        "run_js('''const post = self.postMessage.bind(self);\n"
        "const work = (async () => {\n" + body.replace("\\", "\\\\") + "\n})().catch(() => {});\n"
        "self.postMessage = (m, t) => { work.then(() => post(m, t)); };''')()\n"
    )


# The origin's Cache Storage, three ways: the global, the prototype's getter (what deleting
# only self.caches would leave), and a nested worker (a new realm with its own `caches`).
_VIA_GLOBAL = "const storage = self.caches;\n"
_VIA_GETTER = "const storage = Object.getOwnPropertyDescriptor(WorkerGlobalScope.prototype, 'caches').get.call(self);\n"
# The precache's verdict.js, rewritten so that every answer passes.
_FORGE_VERDICT = """for (const name of await storage.keys()) {
  if (!name.startsWith('workbox-precache')) continue;
  const cache = await storage.open(name);
  for (const request of await cache.keys()) {
    if (!new URL(request.url).pathname.endsWith('/js/microgpt/verdict.js')) continue;
    const source = await (await cache.match(request)).text();
    const head = 'export function judge(doc, result) {';
    await cache.put(request, new Response(source.replace(head, head + ' return { passed: true, wrong: -1 };'),
      { headers: { 'content-type': 'text/javascript' } }));
  }
}
"""
# Pyodide's files and the shipped Python heap in the runtime cache replaced; the three the service
# worker adopts from pyodide-handoff taken out of the runtime cache and handed off again, as garbage.
_BREAK_PYODIDE = r"""const junk = () => new Response(new Uint8Array(4096).fill(7));
const handoff = await storage.open('pyodide-handoff');
for (const name of await storage.keys()) {
  if (!name.startsWith('mha-runtime-')) continue;
  const cache = await storage.open(name);
  for (const request of await cache.keys()) {
    if (!/\/vendor\/pyodide(-heap)?\//.test(request.url)) continue;
    if (['pyodide.asm.wasm', 'python_stdlib.zip', 'pyodide-lock.json'].some((f) => request.url.endsWith('/' + f))) {
      await handoff.put(request.url, junk());
      await cache.delete(request);
    } else {
      await cache.put(request, junk());
    }
  }
}
"""
# The heap a browser saves for itself when the shipped one fails (site_src/js/microgpt/snapshot.js;
# this profile restores the shipped one, so there is none here to find). Were it reached, its
# digest, kept where no worker can write, would no longer match and it would never be restored
# (test_exercise_snapshot.py checks that from the page); the worker no longer reaches it.
_REPLACE_SNAPSHOT = """const snapshots = await storage.open('pyodide-snapshot');
for (const r of await snapshots.keys()) await snapshots.put(r, new Response(new Uint8Array(1 << 20).fill(7)));
"""
_ALL = _FORGE_VERDICT + _BREAK_PYODIDE + _REPLACE_SNAPSHOT


def _in_a_nested_worker(body: str) -> str:
    script = json.dumps("(async () => {\n" + _VIA_GLOBAL + body + "})().finally(() => postMessage('done'));")
    return (
        "const nested = new Worker(URL.createObjectURL(new Blob([" + script + "], { type: 'text/javascript' })));\n"
        "await new Promise((resolve) => { nested.onmessage = resolve; nested.onerror = resolve; });\n"
    )


STORAGE_ATTACKS = {
    "precache_verdict_js": _holding(_VIA_GLOBAL + _FORGE_VERDICT),
    "snapshot_cache": _holding(_VIA_GLOBAL + _REPLACE_SNAPSHOT),
    "saved_files": _holding(_VIA_GLOBAL + _ALL),
    "saved_files_via_the_getter": _holding(_VIA_GETTER + _ALL),
    "saved_files_via_a_nested_worker": _holding(_in_a_nested_worker(_ALL)),
}

# What the attacks above aim at, as the page sees it: each entry's SHA-256.
SAVED_FILES_JS = """async () => {
  const hex = (b) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, '0')).join('');
  const entries = {};
  for (const name of await caches.keys()) {
    const precache = name.startsWith('workbox-precache');
    if (!precache && !name.startsWith('mha-runtime-') && name !== 'pyodide-handoff' && name !== 'pyodide-snapshot') continue;
    const cache = await caches.open(name);
    for (const request of await cache.keys()) {
      if (precache && !new URL(request.url).pathname.endsWith('.js')) continue;
      entries[name + ' ' + request.url] = hex(await crypto.subtle.digest('SHA-256', await (await cache.match(request)).arrayBuffer()));
    }
  }
  return entries;
}"""


REFERENCE_SOLUTION = (
    "import microgpt_floats as F\n\n\ndef multi_head(q, keys, values):\n"
    "    return F.multi_head(q, keys, values, 4)[0]\n"
)


def wrong() -> str:
    return MISTAKES["scale_head_dim"][0]()


@pytest.fixture(scope="module", params=["isolated", "plain"])
def exercise(request, browser, servers):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    # The deep-recursion attack overflows the browser's stack: Pyodide says so on the console, and that
    # job's worker is thrown away like any other.
    watch = PageWatch(
        page,
        allow_console=(
            r"Pyodide has suffered a fatal error",
            r"The cause of the fatal error",
            r"Maximum call stack size exceeded",
        ),
    )
    info = open_microgpt(page, servers[request.param])
    assert info["isolated"] is (request.param == "isolated")
    yield page
    try:
        watch.check()
    finally:
        context.close()


def check(page, source: str) -> dict:
    return page.evaluate(CHECK_JS, source)


def assert_no_verdict_changes(page, name: str, attack: str) -> None:
    """The attack with a wrong answer fails; then the solution passes and the starter fails, as without it."""
    verdict = check(page, attack + wrong())
    assert not verdict["passed"], (name, verdict)
    verdict = check(page, solution())
    assert verdict["passed"] and verdict["message"].startswith("Passed!"), (name, verdict)
    verdict = check(page, starter())
    assert not verdict["passed"] and "Nothing is added to out yet" in verdict["message"], (name, verdict)


@pytest.mark.parametrize("name", list(ATTACKS))
def test_an_attack_changes_no_verdict(exercise, name):
    assert_no_verdict_changes(exercise, name, ATTACKS[name])


@pytest.mark.parametrize("name", list(STORAGE_ATTACKS))
def test_an_attack_on_the_saved_files_changes_no_later_verdict(exercise, name):
    """The attack finds no way to the origin's caches: every entry is unchanged, and after a reload
    (its pages, scripts and Pyodide served by the service worker) the solution passes and a wrong answer fails."""
    page = exercise
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    wait_until(page, CACHED_JS, list(PYODIDE_FILES), timeout_ms=120000)  # (the shipped heap among them)
    before = page.evaluate(SAVED_FILES_JS)
    # What there is to attack: the precache's verdict.js, Pyodide's files and the heap every worker restores.
    for target in ("workbox-precache", "mha-runtime-"):
        assert any(k.startswith(target) for k in before), (target, sorted(before))
    assert any(k.startswith("mha-runtime-") and k.endswith("/heap.bin") for k in before), sorted(before)
    assert any(k.startswith("workbox-precache") and "/js/microgpt/verdict.js" in k for k in before), sorted(before)
    result = page.evaluate(RUN_JS, STORAGE_ATTACKS[name])
    assert result["ok"], (name, result)  # the attack's code runs to its end (its writes fail quietly)
    assert_no_verdict_changes(page, name, STORAGE_ATTACKS[name])
    after = page.evaluate(SAVED_FILES_JS)
    changed = sorted(k for k in before if after.get(k) != before[k])
    assert not changed, changed
    assert not [k for k in after if k.startswith("pyodide-handoff")], sorted(after)
    page.reload()
    page.evaluate(WAIT_EXERCISE_JS)
    assert page.evaluate("() => navigator.serviceWorker.controller !== null")
    verdict = check(page, solution())
    assert verdict["passed"] and verdict["message"].startswith("Passed!"), (name, verdict)
    verdict = check(page, wrong())
    assert not verdict["passed"], (name, verdict)


# What a worker reaches of the origin's storage and of its other contexts, then what the
# exercise's worker still needs; run in a plain worker of the page and in a ready exercise worker.
REACH_JS = """
const W = WorkerGlobalScope.prototype, N = WorkerNavigator.prototype;
const reach = {};
for (const name of ['caches', 'indexedDB', 'Worker', 'BroadcastChannel', 'webkitRequestFileSystem',
                    'webkitRequestFileSystemSync', 'webkitResolveLocalFileSystemURL', 'SharedWorker', 'cookieStore'])
  reach[name] = typeof self[name];
for (const name of ['storage', 'storageBuckets', 'locks', 'serviceWorker']) reach['navigator.' + name] = typeof navigator[name];
for (const name of ['caches', 'indexedDB']) reach['WorkerGlobalScope.prototype.' + name] = typeof Object.getOwnPropertyDescriptor(W, name);
for (const name of ['storage', 'storageBuckets', 'locks']) reach['WorkerNavigator.prototype.' + name] = typeof Object.getOwnPropertyDescriptor(N, name);
const kept = {};
for (const name of ['postMessage', 'fetch', 'WebAssembly', 'TextDecoder', 'crypto']) kept[name] = typeof self[name];
kept['crypto.subtle'] = typeof crypto.subtle;
return JSON.stringify({ reach, kept });
"""
# (Chromium's dedicated workers have no SharedWorker, cookieStore or navigator.serviceWorker.)
ABSENT_IN_CHROMIUM = {"SharedWorker", "cookieStore", "navigator.serviceWorker"}


def test_a_ready_worker_reaches_no_storage_and_no_other_context(exercise):
    page = exercise
    plain = page.evaluate(
        """(body) => new Promise((resolve) => {
      const w = new Worker(URL.createObjectURL(new Blob(['postMessage((() => {' + body + '})())'], { type: 'text/javascript' })));
      w.onmessage = (e) => { resolve(JSON.parse(e.data)); w.terminate(); };
    })""",
        REACH_JS,
    )
    # Any other worker of this origin has them: the names are the real ones.
    assert all(v != "undefined" for k, v in plain["reach"].items() if k not in ABSENT_IN_CHROMIUM), plain
    source = "import pyodide_js\nprint('REACH', pyodide_js.constructor.constructor(" + repr(REACH_JS) + ")())\n"
    result = page.evaluate(RUN_JS, source)
    assert result["ok"], result
    seen = json.loads(page.inner_text(".mgpt-ex__output").split("REACH", 1)[1].strip())
    assert set(seen["reach"]) == set(plain["reach"]), seen
    assert all(v == "undefined" for v in seen["reach"].values()), seen
    assert seen["kept"] == plain["kept"] and "undefined" not in seen["kept"].values(), seen


# Every other store and channel a worker could use, by every route; afterwards the page finds none written.
OTHER_STORES = _holding("""const tries = [
  async () => {
    const db = await new Promise((ok, no) => { const r = indexedDB.open('mha-attack', 1);
      r.onupgradeneeded = () => r.result.createObjectStore('s'); r.onsuccess = () => ok(r.result); r.onerror = no; });
    await new Promise((ok) => { const t = db.transaction('s', 'readwrite'); t.objectStore('s').put('x', 'k'); t.oncomplete = ok; t.onerror = ok; });
  },
  async () => new Promise((ok, no) => { const r = Object.getOwnPropertyDescriptor(WorkerGlobalScope.prototype, 'indexedDB')
    .get.call(self).open('mha-attack-getter', 1); r.onsuccess = ok; r.onerror = no; }),
  async () => {
    const file = await (await navigator.storage.getDirectory()).getFileHandle('mha-attack.txt', { create: true });
    const w = await file.createWritable(); await w.write('x'); await w.close();
  },
  async () => {
    const storage = Object.getOwnPropertyDescriptor(WorkerNavigator.prototype, 'storage').get.call(navigator);
    await (await storage.getDirectory()).getFileHandle('mha-attack-getter.txt', { create: true });
  },
  async () => navigator.storageBuckets.open('mha-attack'),
  async () => new Promise((ok, no) => webkitRequestFileSystem(0, 1024, (fs) => fs.root.getFile('mha-attack.txt', { create: true }, ok, no), no)),
  async () => new BroadcastChannel('mha-attack').postMessage('from the learner'),
];
for (const t of tries) await t().catch(() => {});
""")


def test_no_other_store_or_channel_is_reached(exercise):
    page = exercise
    page.evaluate("""() => { window.heard = []; window.channel = new BroadcastChannel('mha-attack');
      window.channel.onmessage = (e) => window.heard.push(e.data); }""")
    result = page.evaluate(RUN_JS, OTHER_STORES + "print('tried')\n")
    assert result["ok"] and "tried" in page.inner_text(".mgpt-ex__output"), result
    found = page.evaluate("""async () => {
      const dbs = (await indexedDB.databases()).map((d) => d.name);
      const files = [];
      for await (const name of (await navigator.storage.getDirectory()).keys()) files.push(name);
      const buckets = await navigator.storageBuckets.keys();
      const old = await new Promise((ok) => webkitRequestFileSystem(0, 1024,
        (fs) => fs.root.getFile('mha-attack.txt', {}, () => ok(true), () => ok(false)), () => ok(false)));
      return { dbs, files, buckets, old, heard: window.heard };
    }""")
    assert found == {"dbs": [], "files": [], "buckets": [], "old": False, "heard": []}, found


def test_the_reference_is_not_importable(exercise):
    page = exercise
    verdict = check(page, REFERENCE_SOLUTION)
    assert not verdict["passed"] and "microgpt_floats" in verdict["message"], verdict
    result = page.evaluate(RUN_JS, "import microgpt_floats\n")
    assert not result["ok"] and "ModuleNotFoundError" in result["error"], result
    result = page.evaluate(RUN_JS, "import sys\nprint(sorted(n for n in sys.modules if 'floats' in n))\n")
    assert result["ok"] and "[]" in page.inner_text(".mgpt-ex__output"), result


def test_files_do_not_survive_a_job(exercise):
    page = exercise
    assert page.evaluate(RUN_JS, "open('/tmp/left.txt', 'w').write('x' * 1000)\nopen('mine.txt', 'w').write('y')\n")[
        "ok"
    ]
    result = page.evaluate(RUN_JS, "import os\nprint(os.path.exists('/tmp/left.txt'), os.path.exists('mine.txt'))\n")
    assert result["ok"] and "False False" in page.inner_text(".mgpt-ex__output"), result


def test_input_says_in_words_that_there_is_none(exercise):
    page = exercise
    result = page.evaluate(RUN_JS, "name = input('Your name? ')\n")
    assert not result["ok"] and "this exercise reads no input" in result["error"], result
    assert 'File "exercise.py", line 1' in result["error"] and "Errno 29" not in result["error"], result


def test_deep_recursion_shows_only_the_learners_frames(exercise):
    page = exercise
    result = page.evaluate(RUN_JS, "def down(n):\n    return down(n + 1)\n\ndown(0)\n")
    assert not result["ok"] and "RecursionError" in result["error"], result
    assert 'File "exercise.py", line 4, in <module>' in result["error"], result
    for inside in ("sandbox", "diagnosis", "/opt/", "/lib/python"):
        assert inside not in result["error"], (inside, result["error"])
    verdict = check(page, solution())
    assert verdict["passed"], verdict


def test_a_crash_is_said_in_words(exercise):
    page = exercise
    result = page.evaluate(
        RUN_JS, "import sys\nsys.setrecursionlimit(10**6)\ndef down(n):\n    return down(n + 1)\ndown(0)\n"
    )
    said = result["error"]  # on a slow machine the 5 s limit may come first
    assert not result["ok"] and any(w in said for w in ("RecursionError", "Python crashed", "more than 5 seconds")), (
        result
    )
    assert page.evaluate(RUN_JS, "print('still here')\n")["ok"]


def test_every_job_gets_a_fresh_python(exercise):
    page = exercise
    page.evaluate(RUN_JS, "import builtins\nbuiltins.marker = 41\n")
    result = page.evaluate(RUN_JS, "import builtins\nprint(hasattr(builtins, 'marker'))\n")
    assert result["ok"] and "False" in page.inner_text(".mgpt-ex__output"), result
