"""First and repeat visits, served the way a static host serves them.

    .venv/bin/python bench/site_visits.py [--site DIR] [--repeats 3] [--markdown]
    .venv/bin/python bench/site_visits.py --repeat-visits 3 --rounds 4 --sites BEFORE AFTER

Builds the site (``mkdocs build --strict`` into a temporary folder) unless
``--site`` names a built one, serves it with ``export.serve --gzip`` (text, JSON,
SVG and WebAssembly gzip-compressed; ``.onnx`` and ``.zip`` as they are) on
127.0.0.1, and drives Debian's headless Chromium (WebGPU hidden, so Auto picks
WebAssembly, as on a machine without a GPU). For each page:

* **first visit**, in a fresh browser profile: time from navigation start until
  the page is ready (compare: the three models started and "Ready";
  exercise: Python ready in Pyodide), and the bytes the server sent until then
  (response bodies as sent, i.e. compressed);
* what the service worker adds after that on a first visit (its precache and
  the runtime files it stores), in bytes sent;
* **repeat visit**, a new tab in the same profile, served by the service worker:
  the ready time and the bytes the server still sent.

Each visit opens its tab, then waits until the machine is idle before it navigates
(``settle()``): Chromium 156 loads its own omnibox popup (a WebUI page, ~0.7 s of
CPU) in every new tab, and a page navigated at once would share the two cores with
it. ``--no-settle`` navigates at once, as this script did before 2026-12-02.

It also measures what cross-origin isolation buys: the same first visits
without COOP/COEP, and how long the exercise takes to stop a loop that never
ends and be ready again, isolated (interrupt through SharedArrayBuffer) and not
(the worker is replaced and Python restarts).

``--repeat-visits N --rounds R --sites A B`` measures only the exercise's repeat
visits (isolated): per round and build a fresh profile, one first visit, then N
new tabs, the builds interleaved round by round so that a host whose speed
drifts touches them alike; it prints the median ready time and where it goes.
It also prints, per build, the CPU time the browser's processes spent from
navigation to ready (Linux: /proc), and every visit's ready time, so that a
host whose speed drifted during the run shows as such.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from export.serve import serve_in_thread
from export.models import shipped_models
from export.device import cpu_name
from tests.browser_util import CHROMIUM, CHROMIUM_ARGS, WAIT_READY_JS, wait_until

NO_WEBGPU = "Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined, configurable: true });"
# Whether each visit waits, after opening its tab, until the browser's own work for a new tab is
# done (settle(); --no-settle: navigate at once, as this script did before 2026-12-02).
SETTLE = True
CLOCK_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100  # /proc's unit of CPU time, per second
GOALS = {"compare": (1.2, 0.5), "exercise": (2.5, 1.0)}  # seconds: first visit, repeat visit
CHECK_GOAL_MS = 300  # a Check with the spare worker already booted
MODELS = tuple(s.name for s in shipped_models())  # the registry's, never typed
SOLUTION = ROOT / "site_src" / "pyodide" / "solution.py"


def runaway_source() -> str:
    """The solution with a loop that never ends as the first line of multi_head."""
    lines = SOLUTION.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def multi_head("))
    end = next(i for i in range(start, len(lines)) if lines[i].rstrip().endswith(":"))
    indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())] + "    "
    return "\n".join(lines[: end + 1] + [f"{indent}while True:", f"{indent}    pass"] + lines[end + 1 :]) + "\n"


EXERCISE_READY_JS = """async () => {
  for (let i = 0; i < 2400 && !window.mhaExercise; i++) await new Promise((r) => setTimeout(r, 25));
  if (!window.mhaExercise) throw new Error("window.mhaExercise never appeared");
  const info = await window.mhaExercise.ready;
  const readyMs = performance.now();
  // The worker's stages (exercise/worker.js) on this page's clock: ms after navigation.
  const s = info.stages || {};
  const at = {};
  if (s.origin) {
    const base = s.origin - performance.timeOrigin + s.t0;
    at.worker = base;
    for (const [k, v] of Object.entries(s)) if (k !== "origin" && k !== "t0") at[k] = base + v;
  }
  return { readyMs, isolated: info.isolated, start: info.start || "", spawn: info.startedAt, at };
}"""
# Where an exercise start's time goes: [label, from stage, to stage] (stages as EXERCISE_READY_JS gives them).
SEGMENTS = [
    ("page scripts until the worker is created", None, "spawn"),
    ("worker script loaded and running", "spawn", "worker"),
    ("pyodide.mjs imported, exercise files read (HEAD checks)", "worker", "imported"),
    ("heap read (this browser's) or downloaded (shipped) and checked: waited for", "imported", "read"),
    ("WebAssembly instantiated (compiled, or shared)", "read|imported", "instantiated"),
    ("Python started or heap restored (loadPyodide rest)", "instantiated", "loaded"),
    ("files, streams, sandbox.start()", "loaded", "setUp"),
    ("until the page sees ready", "setUp", "ready"),
]


def breakdown(ready: dict) -> dict:
    """Milliseconds per SEGMENTS entry of one exercise start (0 where a stage is absent)."""
    at = {**ready.get("at", {}), "spawn": ready.get("spawn", 0), "ready": ready["readyMs"]}
    out = {}
    for label, start, end in SEGMENTS:
        begin = 0.0
        if start:
            begin = next((at[k] for k in start.split("|") if k in at), None)
        out[label] = max(0.0, at[end] - begin) if begin is not None and end in at else 0.0
    return out


RUNTIME_CACHED_JS = r"""async (files) => {
  const have = new Set();
  for (const name of (await caches.keys()).filter((n) => n.startsWith('mha-runtime-')))
    for (const r of await (await caches.open(name)).keys()) have.add(new URL(r.url).pathname.replace(/\/[0-9a-f]{12}\//, '/').split('/').slice(-2).join('/'));
  return files.every((f) => have.has(f));
}"""
SNAPSHOT_RECORD = "mha-pyodide-snapshot"  # site_src/js/microgpt/snapshot.js RECORD
PAGES = {
    "compare": (
        "compare/",
        lambda page: page.evaluate(WAIT_READY_JS)["readyMs"],
        [f"models/{m}.onnx" for m in MODELS] + ["ort/ort.wasm.min.mjs", "ort/ort-wasm-simd-threaded.wasm"],
    ),
    "exercise": (
        "microgpt/",
        lambda page: page.evaluate(EXERCISE_READY_JS),
        ["pyodide/pyodide.asm.wasm", "pyodide/python_stdlib.zip", "pyodide/pyodide.mjs", "pyodide-heap/heap.bin"],
    ),
}


class SentBytes:
    """Counts response body bytes the server sends (Content-Length of each answer)."""

    def __init__(self, server):
        self.lock = threading.Lock()
        self.sent: list[tuple[str, int]] = []
        handler = server.RequestHandlerClass.func  # make_server wraps the class in functools.partial
        counter = self
        original = handler.send_header

        def send_header(self_, keyword, value):
            if keyword.lower() == "content-length" and self_.command != "HEAD":  # a HEAD sends no body
                # The service worker's own requests (precache, copies) carry it as referrer.
                by_worker = self_.headers.get("Referer", "").split("?")[0].endswith("/sw.js")
                with counter.lock:
                    counter.sent.append((self_.path, int(value), by_worker))
            original(self_, keyword, value)

        handler.send_header = send_header

    def take(self) -> dict:
        """Bytes and requests since the last take(): the page's own, and the service worker's."""
        with self.lock:
            sent, self.sent = self.sent, []
        page = [(p, n) for p, n, by_worker in sent if not by_worker]
        kinds = {"models": "/wasm_assets/models/", "onnxruntime": "/vendor/ort/", "pyodide": "/vendor/pyodide/"}
        by_kind = {k: sum(n for p, n in page if prefix in p) for k, prefix in kinds.items()}
        by_kind["pages, scripts, data"] = sum(n for _, n in page) - sum(by_kind.values())
        bodies: dict = {}
        for p, n, _ in sent:
            if ("/vendor/pyodide/" in p or "/vendor/pyodide-heap/" in p) and n > 0:
                bodies[p.split("?")[0]] = bodies.get(p.split("?")[0], 0) + 1
        return {
            "bytes": sum(n for _, n in page),
            "requests": len(page),
            "by_kind": by_kind,
            "worker_bytes": sum(n for _, n, by_worker in sent if by_worker),
            "pyodide_bodies": bodies,
        }


def build_site() -> Path:
    out = Path(tempfile.mkdtemp(prefix="mha-visits-")) / "site"
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "--site-dir", str(out)],
        cwd=ROOT,
        check=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    return out


def split_ready(ready) -> tuple[float, dict]:
    """(ms after navigation, the exercise's breakdown) from a page's ready value."""
    if isinstance(ready, dict):
        start = ready.get("start")
        return ready["readyMs"], {
            **breakdown(ready),
            "snapshot used": float(start in ("snapshot", "shipped")),
            "shipped heap used": float(start == "shipped"),
        }
    return ready, {}


def wait_stored(page, first_ready, runtime: list[str]) -> None:
    """After a first visit: until the service worker controls the page and holds what a repeat visit needs."""
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    wait_until(page, RUNTIME_CACHED_JS, runtime, timeout_ms=180000)  # (an async check: not wait_for_function)
    if isinstance(first_ready, dict) and first_ready.get("start") == "normal":
        # The exercise's first worker started normally and made a snapshot: the repeat visit should find it stored.
        page.wait_for_function(f"() => !!localStorage.getItem({SNAPSHOT_RECORD!r})", polling=200)


def new_tab(context):
    """A new tab, once the browser's own work for it is done (settle(); not with --no-settle)."""
    page = context.new_page()
    page.set_default_timeout(180000)
    if SETTLE:
        settle()
    return page


def repeat_visit(
    context, url: str, wait_ready, wait_until_event: str = "load", cpu: list | None = None
) -> tuple[float, dict]:
    """A new tab of the same profile: (ms until ready, the exercise's breakdown).
    `cpu`: a list that gets the CPU milliseconds the browser spent from navigation to ready."""
    page = new_tab(context)
    try:
        before = browser_cpu_s() if cpu is not None else None
        page.goto(url, wait_until=wait_until_event)
        found = split_ready(wait_ready(page))
        if before is not None:
            cpu.append(cpu_since(before))
        return found
    finally:
        page.close()


def visit(browser, url: str, counter: SentBytes, page_name: str) -> dict:
    path, wait_ready, runtime = PAGES[page_name]
    context = browser.new_context(service_workers="allow")
    context.add_init_script(NO_WEBGPU)
    try:
        page = new_tab(context)
        counter.take()
        page.goto(url + path)
        first_ready = wait_ready(page)
        first_ms, first_detail = split_ready(first_ready)
        first = counter.take()
        wait_stored(page, first_ready, runtime)
        after = counter.take()
        page.close()
        repeat_ms, repeat_detail = repeat_visit(context, url + path, wait_ready)
        repeat = counter.take()
        detail = {f"first: {k}": v for k, v in first_detail.items()}
        detail.update({f"repeat: {k}": v for k, v in repeat_detail.items()})
        return {
            **detail,
            "first_s": first_ms / 1000,
            "first_bytes": first["bytes"],
            "first_requests": first["requests"],
            **{f"first_{k}": v for k, v in first["by_kind"].items()},
            "sw_bytes": first["worker_bytes"] + after["worker_bytes"],
            "after_page_bytes": after["bytes"],
            "repeat_s": repeat_ms / 1000,
            "repeat_bytes": repeat["bytes"] + repeat["worker_bytes"],
            "repeat_requests": repeat["requests"],
            # The most times one Pyodide file's body was sent during the first visit (page + service worker).
            "pyodide_max_fetches": max(
                [
                    first["pyodide_bodies"].get(k, 0) + after["pyodide_bodies"].get(k, 0)
                    for k in set(first["pyodide_bodies"]) | set(after["pyodide_bodies"])
                ]
                or [0]
            ),
        }
    finally:
        context.close()


def runaway(browser, url: str) -> dict:
    """Seconds from starting a never-ending loop until the checker answers, and until Python is ready again."""
    context = browser.new_context(service_workers="block")
    try:
        page = context.new_page()
        page.set_default_timeout(180000)
        page.goto(url + "microgpt/")
        isolated = page.evaluate(EXERCISE_READY_JS)["isolated"]
        result = page.evaluate(
            """async ([loop, solution]) => {
          const t0 = performance.now();
          const stop = await window.mhaExercise.check(loop);
          const stopped = performance.now() - t0;
          const t1 = performance.now();
          const next = await window.mhaExercise.check(solution);
          if (!stop.timedOut || !next.passed) throw new Error(JSON.stringify([stop, next]));
          return { stopped_s: stopped / 1000, next_answer_s: (performance.now() - t1) / 1000 };
        }""",
            [runaway_source(), SOLUTION.read_text()],
        )
        return {**result, "isolated": isolated}
    finally:
        context.close()


def check_speed(browser, url: str, runs: int = 9) -> dict:
    """Milliseconds of a Check of the solution, each with the spare worker already booted."""
    context = browser.new_context(service_workers="block")
    try:
        page = context.new_page()
        page.set_default_timeout(180000)
        page.goto(url + "microgpt/")
        page.evaluate(EXERCISE_READY_JS)
        times = page.evaluate(
            """async ([solution, runs]) => {
          const times = [];
          for (let i = 0; i < runs; i++) {
            await window.mhaExercise.ready;               // the spare is booted
            const t0 = performance.now();
            const verdict = await window.mhaExercise.check(solution);
            times.push(performance.now() - t0);
            if (!verdict.passed) throw new Error(JSON.stringify(verdict));
          }
          return times;
        }""",
            [SOLUTION.read_text(), runs],
        )
        return {"check_ms": statistics.median(times), "check_fastest_ms": min(times)}
    finally:
        context.close()


def exercise_only(args) -> int:
    """The exercise's first and repeat visits (isolated and not), where each start's time goes, and Check."""
    site = args.site or build_site()
    from playwright.sync_api import sync_playwright

    lines = [
        f"machine: {cpu_name()}, {os.cpu_count()} cores, load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}",
        f"site: {site}",
    ]
    results = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for isolation in (True, False):
            server, url = serve_in_thread(site, isolation=isolation, compress=True)
            counter = SentBytes(server)
            try:
                runs = [visit(browser, url, counter, "exercise") for _ in range(args.repeats)]
                results[isolation] = (runs, check_speed(browser, url))
            finally:
                server.shutdown()
                server.server_close()
        lines[0] += (
            f"; Chromium {browser.version} headless; load average after {', '.join(f'{x:.1f}' for x in os.getloadavg())}"
        )
        browser.close()
    for isolation, (runs, check) in results.items():
        m = median_of(runs)
        name = "COOP/COEP" if isolation else "none"
        firsts = ", ".join(f"{r['first_s']:.2f}" for r in runs)
        repeats = ", ".join(f"{r['repeat_s']:.2f}" for r in runs)
        lines.append(
            f"[{name}] first visit ready {m['first_s']:.2f} s (runs: {firsts}), repeat visit ready "
            f"{m['repeat_s']:.2f} s (runs: {repeats}); check median {check['check_ms']:.0f} ms, fastest "
            f"{check['check_fastest_ms']:.0f} ms; Pyodide file bodies sent at most "
            f"{m['pyodide_max_fetches']:.0f}x"
        )
        for visit_kind in ("first", "repeat"):
            parts = [
                f"{label} {m[f'{visit_kind}: {label}']:.0f}"
                for label, _, _ in SEGMENTS
                if f"{visit_kind}: {label}" in m
            ]
            if parts:
                lines.append(
                    f"  {visit_kind} visit, median ms: "
                    + "; ".join(parts)
                    + f" (a heap restored in {sum(r.get(f'{visit_kind}: snapshot used', 0) for r in runs):.0f}"
                    f" of {len(runs)}, the shipped one in "
                    f"{sum(r.get(f'{visit_kind}: shipped heap used', 0) for r in runs):.0f})"
                )
    first_goal, repeat_goal = GOALS["exercise"]
    m = median_of(results[True][0])
    lines.append(
        f"exercise: first visit {m['first_s']:.2f} s (goal <= {first_goal} s: "
        f"{'met' if m['first_s'] <= first_goal else 'NOT met'}), repeat {m['repeat_s']:.2f} s "
        f"(goal <= {repeat_goal} s: {'met' if m['repeat_s'] <= repeat_goal else 'NOT met'})"
    )
    print("\n".join(lines))
    return 0


def browser_cpu_s() -> dict[int, float]:
    """CPU seconds (user + system) so far of each running Chromium process (Linux /proc; {} elsewhere)."""
    found: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # gone meanwhile
        name, _, rest = text.rpartition(")")
        if not name.split("(", 1)[-1].startswith("chromium"):
            continue
        fields = rest.split()
        found[int(stat.parent.name)] = (int(fields[11]) + int(fields[12])) / CLOCK_TICK  # utime, stime
    return found


def machine_busy_s() -> float | None:
    """CPU seconds the whole machine has spent busy so far (Linux /proc/stat), or None elsewhere."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    return (sum(fields) - fields[3] - fields[4]) / CLOCK_TICK  # all but idle and iowait


def settle(quiet_s: float = 0.3, share: float = 0.1, limit_s: float = 10.0) -> float:
    """Wait until the machine has been nearly idle (under `share` of one core) for `quiet_s`; seconds waited.

    A new tab makes Chromium 156 load its own omnibox popup (a WebUI page, ~0.7 s of CPU) just
    then; a page navigated at once shares the two cores with it, which a reader who opens a
    tab and then types an address does not. Gives up after `limit_s`.
    """
    start = time.monotonic()
    last, recent = machine_busy_s(), []
    if last is None:
        return 0.0
    step = 0.1
    while time.monotonic() - start < limit_s:
        time.sleep(step)
        now = machine_busy_s()
        recent = (recent + [now - last])[-round(quiet_s / step) :]
        last = now
        if len(recent) * step >= quiet_s and sum(recent) <= share * quiet_s + 1 / CLOCK_TICK:  # (one tick of slack)
            break
    return time.monotonic() - start


def cpu_since(before: dict[int, float]) -> float:
    """CPU milliseconds Chromium's processes spent since `before` (processes that ended meanwhile are not counted)."""
    return sum(now - before.get(pid, 0.0) for pid, now in browser_cpu_s().items()) * 1000


def repeat_visits(sites: list[Path], rounds: int, visits: int) -> int:
    """Repeat visits of the exercise only: per round a fresh profile, one first visit, then
    `visits` new tabs, for each site in turn (rounds interleave the builds, so the host's
    drift touches them alike). Cross-origin isolated, gzip, WebGPU hidden."""
    from playwright.sync_api import sync_playwright

    path, wait_ready, runtime = PAGES["exercise"]
    found: dict = {site: [] for site in sites}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for _ in range(rounds):
            for site in sites:
                server, url = serve_in_thread(site, isolation=True, compress=True)
                context = browser.new_context(service_workers="allow")
                context.add_init_script(NO_WEBGPU)
                try:
                    page = context.new_page()
                    page.set_default_timeout(180000)
                    page.goto(url + path)
                    wait_stored(page, wait_ready(page), runtime)
                    page.close()
                    for n in range(visits):
                        cpu: list = []
                        # Timed from navigation, so the tab need not reach "load" first.
                        ms, detail = repeat_visit(context, url + path, wait_ready, "commit", cpu)
                        found[site].append({"visit": n + 2, "ready_ms": ms, "cpu_ms": cpu[0], **detail})
                finally:
                    context.close()
                    server.shutdown()
                    server.server_close()
        version = browser.version
        browser.close()
    print(
        f"machine: {cpu_name()}, {os.cpu_count()} cores; Chromium {version} headless; load average after "
        f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}; {rounds} rounds x {visits} repeat visits"
    )
    for site, found_visits in found.items():
        second = [v["ready_ms"] for v in found_visits if v["visit"] == 2]
        cpu = [v["cpu_ms"] for v in found_visits if v["cpu_ms"] > 0]
        print(
            f"{site}: repeat visits ready, median {statistics.median(v['ready_ms'] for v in found_visits):.0f} ms "
            f"of {len(found_visits)} (the 2nd visit alone {statistics.median(second):.0f} ms); "
            f"browser CPU until ready, median {statistics.median(cpu) if cpu else float('nan'):.0f} ms; median ms: "
            + "; ".join(f"{label} {statistics.median(v[label] for v in found_visits):.0f}" for label, _, _ in SEGMENTS)
        )
        print("  each visit in order, ms: " + " ".join(f"{v['ready_ms']:.0f}" for v in found_visits))
    return 0


def median_of(runs: list[dict]) -> dict:
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


def mb(n: float) -> str:
    return f"{n / 1e6:.2f} MB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a built site (default: build one now)")
    parser.add_argument(
        "--sites", type=Path, nargs="+", help="with --repeat-visits: built sites to compare, interleaved"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--markdown", action="store_true", help="print the RESULTS.md block")
    parser.add_argument(
        "--compare-only",
        action="store_true",
        help="only the compare page, cross-origin isolated (a quick before/after check)",
    )
    parser.add_argument(
        "--exercise-only",
        action="store_true",
        help="only the exercise: first and repeat visits with the breakdown of each start, and Check",
    )
    parser.add_argument(
        "--repeat-visits",
        type=int,
        default=0,
        metavar="N",
        help="only the exercise's repeat visits: N new tabs after each first visit, per round and --site",
    )
    parser.add_argument("--rounds", type=int, default=4, help="with --repeat-visits: fresh profiles per build")
    parser.add_argument(
        "--no-settle",
        action="store_true",
        help="navigate each new tab at once, while the browser still sets up its own UI for it",
    )
    args = parser.parse_args()
    global SETTLE
    SETTLE = not args.no_settle
    if args.repeat_visits:
        return repeat_visits(args.sites or [args.site or build_site()], args.rounds, args.repeat_visits)
    if args.exercise_only:
        return exercise_only(args)
    site = args.site or build_site()
    from playwright.sync_api import sync_playwright

    results: dict = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for isolation in (True,) if args.compare_only else (True, False):
            server, url = serve_in_thread(site, isolation=isolation, compress=True)
            counter = SentBytes(server)
            try:
                for page_name in ("compare",) if args.compare_only else PAGES:
                    runs = [visit(browser, url, counter, page_name) for _ in range(args.repeats)]
                    results[(page_name, isolation)] = median_of(runs)
                if args.compare_only:
                    continue
                results[("runaway", isolation)] = median_of([runaway(browser, url) for _ in range(args.repeats)])
                results[("check", isolation)] = check_speed(browser, url)
            finally:
                server.shutdown()
                server.server_close()
        version = browser.version
        browser.close()
    if args.compare_only:
        r = results[("compare", True)]
        print(
            f"compare (COOP/COEP, median of {args.repeats}): first visit {r['first_s']:.2f} s, "
            f"repeat visit {r['repeat_s']:.2f} s, sent on repeat {r['repeat_bytes'] / 1e3:.1f} kB"
        )
        print(json.dumps({k[0]: v for k, v in results.items()}), file=sys.stderr)
        return 0

    lines = [
        f"machine: {cpu_name()}, {os.cpu_count()} cores, {platform.system()}; Chromium {version} headless",
        f"served by export.serve --gzip on 127.0.0.1; median of {args.repeats} fresh profiles per row",
        "",
        "| page | isolation | first visit: ready | page sent until ready | service worker fetched | "
        "repeat visit: ready | sent on repeat |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for page_name in PAGES:
        for isolation in (True, False):
            r = results[(page_name, isolation)]
            lines.append(
                f"| {page_name} | {'COOP/COEP' if isolation else 'none'} | {r['first_s']:.2f} s | "
                f"{mb(r['first_bytes'])} ({r['first_requests']:.0f} requests) | {mb(r['sw_bytes'])} | "
                f"{r['repeat_s']:.2f} s | {r['repeat_bytes'] / 1e3:.1f} kB ({r['repeat_requests']:.0f} requests) |"
            )
    c = results[("compare", True)]
    lines += [
        "",
        "compare, first visit, sent until ready: "
        + ", ".join(f"{kind} {mb(c['first_' + kind])}" for kind in ("models", "onnxruntime", "pages, scripts, data")),
    ]
    lines += [
        "",
        "| runaway loop in the exercise | stopped after | correct answer checked after that |",
        "| --- | ---: | ---: |",
    ]
    for isolation in (True, False):
        r = results[("runaway", isolation)]
        lines.append(
            f"| {'isolated (interrupt buffer)' if isolation else 'not isolated (worker restarted)'} | "
            f"{r['stopped_s']:.2f} s | {r['next_answer_s']:.2f} s |"
        )
    lines += ["", "| Check of the solution, spare worker booted (9 runs) | median | fastest |", "| --- | ---: | ---: |"]
    for isolation in (True, False):
        r = results[("check", isolation)]
        lines.append(
            f"| {'COOP/COEP' if isolation else 'none'} | {r['check_ms']:.0f} ms | {r['check_fastest_ms']:.0f} ms |"
        )
    lines.append("")
    e = results[("exercise", True)]
    lines.append(
        f"exercise, first visit: each Pyodide file's body sent at most {e['pyodide_max_fetches']:.0f} time(s) "
        "(page and service worker together)"
    )
    c = results[("check", True)]
    lines.append(
        f"check: median {c['check_ms']:.0f} ms (goal <= {CHECK_GOAL_MS} ms: "
        f"{'met' if c['check_ms'] <= CHECK_GOAL_MS else 'NOT met'})"
    )
    for page_name, (first_goal, repeat_goal) in GOALS.items():
        r = results[(page_name, True)]
        lines.append(
            f"{page_name}: first visit {r['first_s']:.2f} s (goal <= {first_goal} s: "
            f"{'met' if r['first_s'] <= first_goal else 'NOT met'}), repeat {r['repeat_s']:.2f} s "
            f"(goal <= {repeat_goal} s: {'met' if r['repeat_s'] <= repeat_goal else 'NOT met'})"
        )
    text = "\n".join(lines)
    print(f"```\n{text}\n```" if args.markdown else text)
    print(json.dumps({f"{k[0]}/{'isolated' if k[1] else 'plain'}": v for k, v in results.items()}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
