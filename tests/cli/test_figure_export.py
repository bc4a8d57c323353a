"""``python -m dpviz figure``: the page's figure, exported headlessly through kaleido + chromium;
``--out x.csv|x.json``: the bytes of the page's download buttons; nonsense sizes and paths are
refused with one line naming the flag; one export browser per process, one render at a time."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from dpviz import export
from dpviz.cli import figure as cli_figure
from dpviz.cli import main
from tests.export.cases import values, view

ROOT = Path(__file__).resolve().parents[2]
needs_chromium = pytest.mark.skipif(shutil.which("chromium") is None,
                                    reason="Debian's chromium is installed by scripts/test.sh")


def dpviz(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dpviz", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """``python -m dpviz`` in this process (the export browser stays warm between tests)."""
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse's own errors
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def svg_title(svg: str) -> str:
    """The figure title as one line (a long title is wrapped into several tspans)."""
    root = ET.fromstring(svg)
    for el in root.iter("{http://www.w3.org/2000/svg}text"):
        if "gtitle" in el.get("class", ""):
            return " ".join(t.text or "" for t in el) if len(el) else el.text or ""
    raise AssertionError("no title")


@needs_chromium
def test_svg_export_is_the_page_figure(tmp_path):
    out = tmp_path / "regions.svg"
    r = dpviz("figure", "regions", "--eps0", "0.2", "--k", "12", "--which", "methods", "--out", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert text.lstrip().startswith("<svg")
    # the same title the page shows for these parameters (dpviz.views.regions)
    assert svg_title(text) == "Regions proved for k = 12 mechanisms, each (0.2, 0.001)-DP"
    shown = {"eps0": 0.2, "delta0": 0.001, "k": 12, "ks": [1, 3, 10, 30, 100]}
    assert json.loads(r.stdout)["parameters"] == shown
    # the app's template, not Plotly's default (Open Sans)
    assert "font-family: Arial" in text and "Open Sans" not in text


@needs_chromium
@pytest.mark.parametrize("fmt,magic", [("png", b"\x89PNG"), ("pdf", b"%PDF")])
def test_png_and_pdf_exports(tmp_path, capsys, fmt, magic):
    out = tmp_path / f"curves.{fmt}"
    code, _, err = cli(capsys, "figure", "curves", "--k-max", "50", "--out", str(out))
    assert code == 0, err
    assert out.read_bytes()[:4] == magic


def test_list_figures(capsys):
    code, out, _ = cli(capsys, "figure", "curves", "--list-figures")
    assert code == 0
    assert json.loads(out)["figures"] == ["epsilon_vs_k", "delta_vs_epsilon"]


def test_list_tables(capsys):
    code, out, _ = cli(capsys, "figure", "priors", "--list-tables")
    assert code == 0
    assert json.loads(out)["tables"] == list(view("priors", (("preset", "hospitals"),)).csv)


@pytest.mark.parametrize("case,table", [
    (("priors", (("preset", "hospitals"),)), None),
    (("priors", (("preset", "hospitals"),)), "epsilon_vs_k"),
    (("regions", ()), None),
])
def test_csv_is_the_download_buttons_bytes(tmp_path, capsys, case, table):
    out = tmp_path / "x.csv"
    name, over = case
    args = ["figure", name, *(a for k, v in over for a in (f"--{k}", v)), "--out", str(out)]
    if table:
        args += ["--table", table]
    assert main(args) == 0
    v = view(*case)
    chosen = table or next(iter(v.csv))
    assert out.read_bytes() == export.columns_csv(v.csv[chosen])  # what ui.download_csv hands over
    report = json.loads(capsys.readouterr().out)
    assert report["table"] == chosen and report["tables"] == list(v.csv)


@pytest.mark.parametrize("case", [("regions", ()), ("curves", ()), ("priors", (("preset", "subsidiaries"),))])
def test_json_is_the_download_buttons_bytes(tmp_path, case):
    out = tmp_path / "x.json"
    name, over = case
    assert main(["figure", name, *(a for k, v in over for a in (f"--{k}", v)), "--out", str(out)]) == 0
    assert out.read_bytes() == export.payload_json(view(*case).payload).encode("utf-8")


def test_mechanism_json_is_the_payload(tmp_path):
    """Same payload but for the timings, which differ between two runs."""
    out = tmp_path / "m.json"
    assert main(["figure", "mechanisms", "--mechanism", "laplace", "--out", str(out)]) == 0

    def untimed(obj):
        if isinstance(obj, dict):
            return {k: untimed(v) for k, v in obj.items() if k != "seconds"}
        return [untimed(v) for v in obj] if isinstance(obj, list) else obj

    want = json.loads(export.payload_json(view("mechanisms", (("mechanism", "laplace"),)).payload))
    assert untimed(json.loads(out.read_text())) == untimed(want)


def test_a_directory_gets_the_pages_file_name(tmp_path):
    assert main(["figure", "regions", "--k", "12", "--out", str(tmp_path), "--format", "csv"]) == 0
    stem = export.file_stem("regions", {**values("regions"), "k": 12})
    assert [p.name for p in tmp_path.iterdir()] == [f"{stem}_regions.csv"]  # as pages/1_Privacy_regions.py


@pytest.mark.parametrize("args,field", [
    (["figure", "regions", "--out", "x.gif"], "out"),
    (["figure", "regions", "--eps0", "-3", "--out", "x.svg"], "eps0"),  # the flag typed, not the label
    (["figure", "regions", "--which", "nope", "--out", "x.svg"], "which"),
    (["figure", "regions"], "out"),
    (["figure", "regions", "--height", "-5", "--out", "x.svg"], "height"),
    (["figure", "regions", "--height", "0", "--out", "x.svg"], "height"),
    (["figure", "regions", "--height", "100000", "--out", "x.png"], "height"),
    (["figure", "regions", "--width", "50", "--out", "x.svg"], "width"),
    (["figure", "regions", "--width", "12.5", "--out", "x.svg"], "width"),
    (["figure", "regions", "--width", "abc", "--out", "x.svg"], "width"),
    (["figure", "regions", "--png-scale", "nan", "--out", "x.png"], "png-scale"),
    (["figure", "regions", "--width", "8000", "--height", "8000", "--png-scale", "10", "--out", "x.png"],
     "png-scale"),
    (["figure", "regions", "--out", "/dev/null/x.svg"], "out"),
    (["figure", "priors", "--table", "nope", "--out", "x.csv"], "table"),
    (["figure", "priors", "--out", ".", "--format", "gif"], "format"),
])
def test_bad_arguments_exit_2_with_one_line(tmp_path, monkeypatch, capsys, args, field):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, *args)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"{field} must be" in lines[0], err
    assert out == "" and list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("args,field", [
    (["--height", "-5", "--out", "x.svg"], "height"),
    (["--out", "/dev/null/x.svg"], "out"),
])
def test_bad_arguments_from_the_shell(args, field):
    r = dpviz("figure", "regions", *args)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{field} must be" in lines[0], r.stderr
    assert r.stdout == ""


def test_unwritable_directory_is_named(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):  # root ignores permissions
            pytest.skip("running as root: every directory is writable")
        assert main(["figure", "regions", "--out", str(locked / "x.csv")]) == 2
        assert "out must be a path in a writable directory" in capsys.readouterr().err
    finally:
        locked.chmod(0o700)


def test_a_render_that_comes_back_empty_is_an_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli_figure.RENDERER, "render", lambda fig, opts: b"\x89PN")
    out = tmp_path / "x.png"
    assert main(["figure", "regions", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "out must be" in err[0] and "3 bytes" in err[0]
    assert not out.exists()


@needs_chromium
def test_priors_figure_uses_the_scenario_defaults(tmp_path, capsys):
    out = tmp_path / "subsidiaries.svg"
    code, stdout, err = cli(capsys, "figure", "priors", "--preset", "subsidiaries", "--k", "40",
                            "--out", str(out))
    assert code == 0, err
    params = json.loads(stdout)["parameters"]
    assert params["kind"] == "cap" and params["cap"] == 1  # the preset's own cap, not the 365 default
    assert "at most 1 database(s) per person" in svg_title(out.read_text())


def test_priors_bad_preset_names_the_field(capsys):
    code, _, err = cli(capsys, "figure", "priors", "--preset", "nope", "--out", "x.svg")
    assert code == 2 and "preset must be one of" in err


class _Blocking(cli_figure.Renderer):
    """A renderer whose renders wait for ``release`` (no browser): counts how many run at once."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.release = threading.Event()
        self.running = 0
        self.most = 0
        self.entered = threading.Semaphore(0)
        self._lock = threading.Lock()

    def _render(self, fig_dict, opts):
        with self._lock:
            self.running += 1
            self.most = max(self.most, self.running)
        self.entered.release()
        self.release.wait()
        with self._lock:
            self.running -= 1
        return b"x" * 200


def test_renders_queue_one_at_a_time_and_a_full_queue_is_refused():
    r = _Blocking(queue_limit=3, wait_seconds=300)
    results: list[object] = []

    def one():
        try:
            results.append(r.render({}, {}))
        except cli_figure.RenderBusyError as exc:
            results.append(exc)

    first = threading.Thread(target=one)
    first.start()
    r.entered.acquire()  # the first render is running
    waiting = [threading.Thread(target=one) for _ in range(3)]
    for t in waiting:
        t.start()
    while r._waiting < 3:  # the three wait for the slot
        threading.Event().wait(0.01)
    with pytest.raises(cli_figure.RenderBusyError, match="already waiting"):
        r.render({}, {})  # a fifth is refused at once, no browser started for it
    r.release.set()
    for t in [first, *waiting]:
        t.join()
    assert r.most == 1 and results == [b"x" * 200] * 4


def test_a_render_waiting_past_the_limit_is_refused():
    r = _Blocking(queue_limit=5, wait_seconds=0.05)
    holder = threading.Thread(target=r.render, args=({}, {}))
    holder.start()
    r.entered.acquire()
    with pytest.raises(cli_figure.RenderBusyError, match="try again"):
        r.render({}, {})
    r.release.set()
    holder.join()


@needs_chromium
def test_concurrent_exports_share_one_browser():
    spec_view = view("regions")
    figs = list(spec_view.figures.values()) * 3
    before = cli_figure.RENDERER.browsers_started
    out: list[bytes] = []
    threads = [threading.Thread(target=lambda f=f: out.append(cli_figure.render(f, fmt="svg"))) for f in figs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == len(figs) and all(b.lstrip().startswith(b"<svg") for b in out)
    assert cli_figure.RENDERER.browsers_started - before <= 1
    # one Chromium child of this process (its helpers are its own children)
    me = os.getpid()
    kids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[1]) == me and b"chrom" in cmd:
            kids.append(pid)
    assert len(kids) == 1, kids


class _FakeKaleido:
    def __init__(self, fail: bool = False):
        self.fail = fail
        self.closed = False

    async def calc_fig(self, fig, opts):
        if self.fail:
            raise OSError("the browser went away")
        return b"<svg>" + b" " * 200

    async def close(self):
        self.closed = True


class _FakeBrowserRenderer(cli_figure.Renderer):
    """The real renderer's life cycle (event loop, restart, idle close) with a fake browser."""

    def __init__(self, *, fail_first: bool = False, **kw):
        super().__init__(**kw)
        self.opened: list[_FakeKaleido] = []
        self.fail_first = fail_first

    async def _open(self):
        k = _FakeKaleido(fail=self.fail_first and not self.opened)
        self.opened.append(k)
        self.browsers_started += 1
        return k


def test_a_failed_browser_is_replaced_on_the_next_render():
    r = _FakeBrowserRenderer(fail_first=True)
    with pytest.raises(cli_figure.RenderError, match="went away"):
        r.render({}, {})
    assert r.opened[0].closed
    assert r.render({}, {}).startswith(b"<svg>") and r.browsers_started == 2
    r.close()


def test_an_idle_browser_is_closed_and_reopened_when_needed():
    r = _FakeBrowserRenderer(idle_seconds=0.05)
    r.render({}, {})
    r.render({}, {})
    assert r.browsers_started == 1  # reused
    closed = threading.Event()
    for _ in range(1000):  # the idle timer fires in the background
        if r.opened[0].closed:
            closed.set()
            break
        threading.Event().wait(0.01)
    assert closed.is_set()
    r.render({}, {})
    assert r.browsers_started == 2
    r.close()


def test_regions_json_round_trip(tmp_path):
    """``figure regions … --out x.json`` (issue 12): per method the region's lower-boundary vertices,
    equal to the page's payload; read back, the slack methods' regions are the theorems' own within
    1e-4 and contain the optimal region."""
    import numpy as np

    from dpviz.composition.levels import homogeneous
    from dpviz.regions import method_region
    from dpviz.regions.methods import region_methods, slack_module
    from dpviz.views.regions import SPEC
    from tests.regions.test_slack_regions import XS, oracle, theorem

    out = tmp_path / "x.json"
    args = ["figure", "regions", "--eps0", "0.1", "--delta0", "0.001", "--k", "30"]
    assert main([*args, "--out", str(out)]) == 0
    back = json.loads(out.read_text())
    page = json.loads(export.payload_json(SPEC.build(eps0=0.1, delta0=0.001, k=30).payload))
    assert back == page
    vertices = back["lower_boundary_vertices"]
    assert list(vertices) == list(region_methods())
    assert set(vertices) >= {"basic", "advanced", "kov", "optimal"}
    levels = homogeneous(k=30, eps0=0.1, delta0=0.001)
    optimal = method_region("optimal", levels)(XS)

    def drawn(m: str) -> np.ndarray:
        return np.interp(XS, vertices[m]["P_FA"], vertices[m]["P_MD"])
    for m in vertices:
        assert np.all(drawn(m) <= optimal + 1e-12), m  # every method's region contains the optimal one
        if slack_module(m) is not None:
            assert back["region_error_bound"][m] <= back["region_error_bound"]["tolerance"] == 1e-4
    for m in ("advanced", "kov"):  # the theorems typed in again, supremum over 10^5 slacks
        gap = oracle(*theorem(m, levels), XS) - drawn(m)
        assert gap.min() >= -1e-9 and gap.max() <= 1e-4, m


def _log_a_decoding_error(message: str) -> None:
    """Log the way choreographer's pipe reader does when a message off the pipe is not JSON."""
    from choreographer.channels import _wire
    from choreographer.channels._errors import JSONError
    try:
        _wire.deserialize(message)
    except JSONError:
        logging.getLogger("choreographer.channels.pipe").exception("JSONError decoding message. Ignoring")


def test_only_choreographers_own_closing_marker_is_kept_out_of_the_log(caplog):
    """The CI log of a README export once showed this traceback: choreographer's ``{bye}`` marker,
    read together with the browser's last message at close. Any other bad message still shows."""
    cli_figure._quiet_closing_bye()
    cli_figure._quiet_closing_bye()  # a second browser start adds no second filter
    _log_a_decoding_error("{bye}\n")
    assert not caplog.records
    _log_a_decoding_error('{"id": 1, "result": ')
    assert [r.getMessage() for r in caplog.records] == ["JSONError decoding message. Ignoring"]
    assert len(logging.getLogger("choreographer.channels.pipe").filters) == 1
