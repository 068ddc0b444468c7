"""Publishing without a browser: the site URL, the Pages workflow, the service
worker's lists and the local server's gzip."""

from __future__ import annotations

import gzip
import re
import subprocess
import urllib.request
from pathlib import Path

import yaml

from export.serve import built_for, serve_in_thread
from tests.site_paths import url_path

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"
LOCAL = re.compile(rb"127\.0\.0\.1|localhost")


def test_a_build_without_url_names_no_local_address(built_site):
    """The session's build is made without SITE_URL: no page, sitemap or script of ours holds one."""
    offenders = []
    for path in built_site.rglob("*"):
        rel = path.relative_to(built_site).as_posix()
        # vendor/ holds third-party runtimes as npm ships them; .map files are Material's sources.
        if not path.is_file() or rel.startswith("vendor/") or rel.endswith(".map"):
            continue
        if LOCAL.search(path.read_bytes()):
            offenders.append(rel)
    assert not offenders, offenders
    assert built_for(built_site) is None
    assert "<loc>" not in (built_site / "sitemap.xml").read_text()


def test_make_serve_builds_for_the_url_it_serves():
    out = subprocess.run(
        ["make", "-n", "serve", "PORT=8655", "PREFIX=/some/sub/path/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    build = next(line for line in out.splitlines() if "mkdocs build" in line)
    serve = next(line for line in out.splitlines() if "export.serve" in line)
    assert "SITE_URL='http://127.0.0.1:8655/some/sub/path/'" in build, build
    assert "--port 8655" in serve and "--prefix '/some/sub/path/'" in serve, serve
    plain = subprocess.run(
        ["make", "-n", "build"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
    ).stdout
    assert "SITE_URL" not in next(line for line in plain.splitlines() if "mkdocs build" in line)


def _readme_publish_command() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Publishing", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^make build SITE_URL=\S+$", section, re.M)
    assert len(commands) == 1, commands
    return commands[0]


def test_pages_workflow_runs_the_readme_build_and_deploys_site():
    flow = yaml.safe_load(WORKFLOW.read_text())
    triggers = flow.get("on", flow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert "main" in triggers["push"]["branches"] and "workflow_dispatch" in triggers
    assert flow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    build, deploy = flow["jobs"]["build"], flow["jobs"]["deploy"]
    uses = [step.get("uses", "") for step in build["steps"]]
    for action in (
        "actions/checkout@",
        "actions/setup-python@",
        "actions/setup-node@",
        "actions/configure-pages@",
        "actions/upload-pages-artifact@",
    ):
        assert any(u.startswith(action) for u in uses), (action, uses)
    upload = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "site"
    runs = [step for step in build["steps"] if "run" in step]
    # First the linters and the site-build tests, in the site's own environment (no torch), then the build.
    assert [step["run"] for step in runs[:-1]] == ["make site-check"]
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^site-check: site-setup ", makefile, re.M) and "[site,site-check]" in makefile
    runs = runs[-1:]
    readme_target = _readme_publish_command().split(" SITE_URL=")[0]
    assert runs[0]["run"].startswith(readme_target + ' SITE_URL="$SITE_URL"'), runs[0]["run"]
    assert runs[0]["env"]["SITE_URL"] == "${{ steps.pages.outputs.base_url }}/"
    assert deploy["needs"] == "build" and deploy["environment"]["name"] == "github-pages"
    assert [s["uses"].split("@")[0] for s in deploy["steps"]] == ["actions/deploy-pages"]
    # The target it calls exists and builds with that variable.
    assert re.search(r"^build: ", (ROOT / "Makefile").read_text(), re.M)


def test_service_worker_precaches_pages_but_not_runtime_files(built_site):
    sw = (built_site / "sw.js").read_text()
    urls = set(re.findall(r'\{"revision":(?:"[0-9a-f]+"|null),"url":"([^"]+)"\}', sw))
    assert len(urls) > 30
    for needed in (
        "index.html",
        "compare/index.html",
        "microgpt/index.html",
        "js/main.js",
        "js/runtime/ort.js",
        "css/site.css",
        "wasm_assets/vocab.json",
        "wasm_assets/models/manifest.json",
        "wasm_assets/microgpt-trained.json",
        "sitemap.xml",
        url_path(built_site, "vendor/codemirror/editor.js"),
    ):
        assert needed in urls, needed
    for url in urls:
        assert not url.startswith(("vendor/ort/", "vendor/pyodide/", "downloads/")) and not url.endswith(".onnx"), url
    assert re.search(r"mha-runtime-[0-9a-f]{16}", sw)


def test_gzip_serving_matches_the_files(built_site):
    server, url = serve_in_thread(built_site, compress=True)
    try:
        for rel, encoded in (
            ("js/main.js", True),
            (url_path(built_site, "vendor/ort/ort-wasm-simd-threaded.wasm"), True),
            ("wasm_assets/models/mlp.onnx", False),
        ):
            if not (built_site / rel).is_file():
                continue
            request = urllib.request.Request(url + rel, headers={"Accept-Encoding": "gzip"})
            with urllib.request.urlopen(request, timeout=30) as response:
                body = response.read()
                assert (response.headers.get("Content-Encoding") == "gzip") is encoded, rel
            assert (gzip.decompress(body) if encoded else body) == (built_site / rel).read_bytes()
    finally:
        server.shutdown()
        server.server_close()
