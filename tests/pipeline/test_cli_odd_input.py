"""Options of ``python -m export`` that used to crash, allocate gigabytes or be
ignored: each now exits 2 with one line naming the option or file and
what to do, and leaves nothing behind. Run in temporary folders on copies."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from export.defaults import MIN_TEMPERATURE
from export.generate import check_temperature

from tests.pipeline.export_cli import ROOT, assert_refused, cli
from tests.pipeline.test_cli_bad_input import SHIPPED
from tests.pipeline.test_registry_and_checkpoints import tiny_stories


def _listing(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.fixture
def work(tmp_path):
    data = tiny_stories(tmp_path / "tiny.txt")
    return tmp_path, data


def _refused_and_clean(work_dir: Path, args, *words):
    before = _listing(work_dir)
    proc = cli(*args, cwd=work_dir)
    assert_refused(proc, *words)
    assert _listing(work_dir) == before, "a refused command left files behind"
    return proc


def test_threads_beyond_the_machine(work):
    folder, data = work
    too_many = (os.cpu_count() or 1) + 1
    _refused_and_clean(
        folder,
        ["train", "--data", data, "--threads", too_many, "--runs", folder / "runs"],
        "--threads",
        f"at most {os.cpu_count()}",
    )


def test_data_that_is_a_folder_or_a_named_pipe(work):
    folder, _ = work
    (folder / "stories").mkdir()
    _refused_and_clean(folder, ["audit", "--data", folder / "stories"], "--data", "is a folder")
    os.mkfifo(folder / "pipe")
    _refused_and_clean(folder, ["audit", "--data", folder / "pipe"], "--data", "not a regular file")


def test_from_hub_with_data(work):
    folder, data = work
    _refused_and_clean(folder, ["audit", "--from-hub", "--data", data], "--from-hub", "--data")


def test_seed_beyond_64_bits_before_any_run_folder(work):
    folder, data = work
    _refused_and_clean(
        folder, ["train", "--data", data, "--seeds", 2**64 + 5, "--runs", folder / "runs"], "--seeds", "64 bits"
    )


def test_context_too_large(work):
    folder, data = work
    _refused_and_clean(folder, ["audit", "--data", data, "--context", 100000], "--context", "at most")


def test_out_folder_that_cannot_be_written(work):
    folder, data = work
    # /sys refuses new entries even to root (chmod would not stop root).
    _refused_and_clean(folder, ["vocab", "--data", data, "--out", "/sys/mha-lesson-out"], "--out", "cannot be written")


def test_truncated_evidence_is_named(work):
    folder, _ = work
    assets = folder / "assets"
    shutil.copytree(ROOT / "wasm_assets", assets, ignore=shutil.ignore_patterns("models"))
    text = (assets / "evidence.json").read_text()
    (assets / "evidence.json").write_text(text[:10])
    proc = _refused_and_clean(folder, ["walkthrough", "--out", assets], "evidence.json", "not valid JSON")
    assert str(assets / "evidence.json") in proc.stderr


def test_junk_checkpoint_for_generate(work):
    folder, _ = work
    junk = folder / "junk.pt"
    junk.write_bytes(b"this is no checkpoint\n" * 10)
    _refused_and_clean(
        folder,
        ["generate", junk, "once", "--vocab", ROOT / "wasm_assets/vocab.json"],
        "junk.pt",
        "not a PyTorch checkpoint",
    )


@pytest.mark.parametrize("temperature", ["1e-320", "5e-324", str(MIN_TEMPERATURE / 2)])
def test_tiny_temperatures_are_refused_like_in_the_browser(work, temperature):
    folder, _ = work
    if not SHIPPED.is_file():
        pytest.skip("no shipped checkpoint")
    _refused_and_clean(
        folder,
        ["generate", SHIPPED, "once", "--temperature", temperature, "--vocab", ROOT / "wasm_assets/vocab.json"],
        "--temperature",
        str(MIN_TEMPERATURE),
    )
    with pytest.raises(ValueError, match=str(MIN_TEMPERATURE)):
        check_temperature(float(temperature))
    check_temperature(0.0)
    check_temperature(MIN_TEMPERATURE)
