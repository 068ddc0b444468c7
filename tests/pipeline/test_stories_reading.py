"""Reading stories: formats, row ids, the cap message and every bad-input error."""

import hashlib
import json

import pytest

from export.data import DataError, download_from_hub, load_stories
from export.windows import SplitError, split_indices

from tests.pipeline.export_cli import cli


def write(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return p


def stories_txt(n):
    return "".join(f"Story number {i} is here.\nIt has two lines.\n<|endoftext|>\n" for i in range(n))


def test_txt_format_rows_and_checksum(tmp_path):
    p = write(tmp_path, "s.txt", stories_txt(5))
    src = load_stories(p, 3, log=lambda m: None)
    assert [s.row for s in src.stories] == [0, 1, 2]
    assert src.stories[1].text == "Story number 1 is here.\nIt has two lines."
    assert src.sha256 == hashlib.sha256(p.read_bytes()).hexdigest()
    assert src.file == "s.txt" and not src.capped


def test_jsonl_format(tmp_path):
    p = write(tmp_path, "s.jsonl", "\n".join(json.dumps({"text": f"tale {i}"}) for i in range(4)))
    src = load_stories(p, 10, log=lambda m: None)
    assert [s.text for s in src.stories] == ["tale 0", "tale 1", "tale 2", "tale 3"]


def test_fewer_stories_than_requested_says_so_once(tmp_path):
    p = write(tmp_path, "s.txt", stories_txt(4))
    messages = []
    src = load_stories(p, 6000, log=messages.append)
    assert len(src.stories) == 4 and src.capped
    assert len(messages) == 1 and "4" in messages[0] and "6000" in messages[0]
    assert src.describe()["capped"] is True


def test_env_variable_chooses_the_file(tmp_path, monkeypatch):
    p = write(tmp_path, "env.txt", stories_txt(3))
    monkeypatch.setenv("TINYSTORIES_PATH", str(p))
    assert load_stories(None, 3).file == "env.txt"


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("empty.txt", "", "empty"),
        ("blank.txt", "\n\n  \n", "empty"),
        ("nosep.txt", "Just one long text without separators.\n", "no story separator"),
        ("latin1.txt", "caf\xe9 story\n<|endoftext|>\n".encode("latin-1"), "not UTF-8"),
        ("bad.jsonl", '{"text": "ok"}\n{oops\n', "not valid JSON"),
        ("notext.jsonl", '{"story": "x"}\n', "no string field 'text'"),
        ("onlysep.txt", "<|endoftext|>\n<|endoftext|>\n", "no story text"),
    ],
)
def test_bad_files_give_clear_errors(tmp_path, name, content, message):
    with pytest.raises(DataError, match=message):
        load_stories(write(tmp_path, name, content), 10, log=lambda m: None)


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="not found.*--data"):
        load_stories(tmp_path / "nope.txt")


def test_too_few_stories_for_three_splits():
    with pytest.raises(SplitError, match="at least 3"):
        split_indices(2)
    parts = split_indices(3)
    assert all(len(v) == 1 for v in parts.values())


def test_split_is_whole_stories_and_fixed():
    a, b = split_indices(100), split_indices(100)
    assert a == b
    everything = a["train"] + a["validation"] + a["test"]
    assert sorted(everything) == list(range(100))
    assert (len(a["train"]), len(a["validation"]), len(a["test"])) == (80, 10, 10)


@pytest.fixture
def fake_hub(monkeypatch):
    """A local HTTP server standing in for the dataset hub; HUB_URL points at it.

    Yields a dict the test fills: ``status`` and ``body`` of the next answers.
    The test passes the same way with or without a network on the machine.
    """
    import http.server
    import threading

    import export.data as data

    answer = {"status": 200, "body": stories_txt(10).encode(), "commit": "abc123"}

    class Hub(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the stdlib's name)
            answer["path"] = self.path
            self.send_response(answer["status"])
            self.send_header("X-Repo-Commit", answer["commit"])
            self.send_header("Content-Length", str(len(answer["body"])))
            self.end_headers()
            self.wfile.write(answer["body"])

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setattr(
        data, "HUB_URL", f"http://127.0.0.1:{server.server_port}/{{repo}}/resolve/{{revision}}/{{file}}"
    )
    yield answer
    server.shutdown()
    server.server_close()


def test_hub_download_saves_the_first_n_stories(fake_hub, tmp_path):
    dest, commit = download_from_hub(tmp_path / "hub" / "x.txt", 4, revision="main", timeout=5)
    assert commit == "abc123"
    assert fake_hub["path"] == "/roneneldan/TinyStories/resolve/main/TinyStories-train.txt"
    assert dest.read_text() == stories_txt(4)
    assert sorted(p.name for p in dest.parent.iterdir()) == ["x.txt"]  # no partial file left
    assert [s.row for s in load_stories(dest, 10, log=lambda m: None).stories] == [0, 1, 2, 3]


def test_hub_http_error_fails_with_advice(fake_hub, tmp_path):
    fake_hub["status"], fake_hub["body"] = 404, b"not here"
    with pytest.raises(DataError, match="--data PATH") as err:
        download_from_hub(tmp_path / "x.txt", 5, timeout=5)
    assert "404" in str(err.value)
    assert not any(tmp_path.iterdir())


def test_hub_unreachable_host_fails_fast_with_advice(monkeypatch, tmp_path):
    import socket

    import export.data as data

    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(data, "HUB_URL", f"http://127.0.0.1:{port}/{{repo}}/{{revision}}/{{file}}")
    with pytest.raises(DataError, match="cannot reach the dataset hub.*--data PATH"):
        download_from_hub(tmp_path / "x.txt", 5, timeout=3)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("content", ["", "no separators at all\n"])
def test_cli_exits_nonzero_with_one_line_message(tmp_path, content):
    p = write(tmp_path, "bad.txt", content)
    run = cli("audit", "--data", p)
    assert run.returncode == 2
    assert run.stderr.startswith("error: ") and run.stderr.count("\n") == 1
    assert "Traceback" not in run.stderr


def test_first_n_of_a_larger_file_counts_and_hashes_it_all(tmp_path):
    p = write(tmp_path, "big.txt", stories_txt(50))
    src = load_stories(p, 5, log=lambda m: None)
    assert [s.row for s in src.stories] == [0, 1, 2, 3, 4]
    assert src.stories_in_file == 50 and not src.capped
    assert src.sha256 == hashlib.sha256(p.read_bytes()).hexdigest()


def test_windows_line_endings_blank_stories_and_a_cut_last_story(tmp_path):
    text = "\ufeffFirst story.\r\n<|endoftext|>\r\n\r\n<|endoftext|>\r\nThird one,\r\ntwo lines.\r\n<|endoftext|>\r\nCut of"
    src = load_stories(write(tmp_path, "crlf.txt", text), 10, log=lambda m: None)
    assert [(s.row, s.text) for s in src.stories] == [(0, "First story."), (2, "Third one,\ntwo lines."), (3, "Cut of")]
