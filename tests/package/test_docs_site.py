"""The documentation site: ``mkdocs build --strict`` (broken links, missing API references and
failing page examples fail it), one page per registered game with its observation table and
its picture, and docs that speak to users (no issue numbers, no dated runs)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from card_envs.core.registry import ENV_IDS, manifest

ROOT = Path(__file__).resolve().parents[2]
ISSUE = re.compile(r"\bissues? #?\d+|\(#\d+\)", re.I)
RUN_DATE = re.compile(r"\b20\d\d-?[01]\d-?[0-3]\d(?:T\d{4,6}Z?)?\b")
#: docs written by other parts of the project (checked for issue numbers only)
OTHER_OWNERS = {"ui.md", "performance.md"}


def _docs() -> list[Path]:
    return sorted((ROOT / "docs").rglob("*.md"))


def test_no_issue_references() -> None:
    hits = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
            for p in [ROOT / "README.md", *_docs()]
            for i, line in enumerate(p.read_text().splitlines(), 1) if ISSUE.search(line)]
    assert not hits, "issue references in user docs:\n" + "\n".join(hits)


def test_no_dated_runs() -> None:
    hits = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
            for p in _docs() if p.name not in OTHER_OWNERS
            for i, line in enumerate(p.read_text().splitlines(), 1) if RUN_DATE.search(line)]
    assert not hits, "dates of runs in user docs (keep the command instead):\n" + \
        "\n".join(hits)


def _hook() -> object:
    spec = importlib.util.spec_from_file_location("docs_site", ROOT / "scripts/docs_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docstring_markdown() -> None:
    md = _hook().rst_to_markdown(
        "See :class:`~card_envs.core.vector.VectorEnv` and ``n*SP`` or n*SP::\n\n"
        "==========  =====\nname        kind\n==========  =====\n``a``       int\n"
        "            wrapped\nb           str\n==========  =====\n\n>>> make()  # doctest: +SKIP\n"
        "\n| i | m |\n|---|---|\n| 0 | first |\n|   | more |\n")
    assert "`VectorEnv` and `n*SP` or n\\*SP:\n" in md
    assert "| name | kind |\n|---|---|\n| `a` | int wrapped |\n| b | str |" in md
    assert "```pycon\n>>> make()\n```" in md
    assert "| 0 | first more |" in md


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {k: v for k, v in os.environ.items() if k != "CARD_ENVS_GAMES"}
    env["NO_MKDOCS_2_WARNING"] = "1"
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
         str(ROOT / "mkdocs.yml"), "--site-dir", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stderr[-6000:]}"
    return out


def _article(path: Path) -> str:
    html = path.read_text()
    return html[html.index("<article"):html.index("</article>")]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_game_page(site: Path, env_id: str) -> None:
    page = _article(site / "games" / env_id / "index.html")
    obs = page.index("Observation <code>Box(")
    table = page[page.index("<table>", obs):page.index("</table>", obs)]
    assert re.search(r"<th[^>]*>index", table) and table.count("<tr>") > 3
    assert re.search(r"<th[^>]*>action", page)  # the action table
    img = re.search(rf'<img[^>]+src="\.\./{env_id}\.svg"', page)
    assert img, "no picture of a position"
    assert (site / "games" / f"{env_id}.svg").read_text().startswith("<svg")
    assert "win rate (95% CI)" in page and "card-envs arena --game" in page
    rules = site / "rules" / manifest(env_id).name / "index.html"
    assert rules.is_file() and f'href="../../rules/{manifest(env_id).name}/"' in page


def test_guides_and_api(site: Path) -> None:
    for guide in ("quickstart", "training", "arena", "distributed", "adding_a_game", "ui",
                  "performance", "playthroughs"):
        assert (site / guide / "index.html").is_file(), guide
    assert "Using an environment" in _article(site / "quickstart" / "index.html")
    api = {"index": ["card_envs.make", "card_envs.make_raw", "card_envs.register",
                     "card_envs.Engine"],
           "vector": ["card_envs.core.vector.VectorEnv"],
           "errors": ["card_envs.core.errors.IllegalActionError"],
           "agents": ["card_envs.agents.make_agent"],
           "arena": ["card_envs.arena.run_arena"],
           "rl": ["card_envs.rl.sb3.BatchedVecEnv", "card_envs.rl.ppo.train_ppo"],
           "testing": ["card_envs.testing.check_game"]}
    for page, ids in api.items():
        html = (site / "api" / ("" if page == "index" else page) / "index.html").read_text()
        for ident in ids:
            assert f'id="{ident}"' in html, (page, ident)


def test_cluster_recipes_are_checked_and_a_broken_one_is_refused(tmp_path: Path) -> None:
    """The docs build parses docs/cluster/*.yaml (Ray cluster launcher, KubeRay) and fails on
    a broken one."""
    spec = importlib.util.spec_from_file_location("docs_site_check",
                                                  ROOT / "scripts" / "docs_site.py")
    assert spec is not None and spec.loader is not None
    site = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(site)
    files = sorted((ROOT / "docs" / "cluster").glob("*.yaml"))
    assert {p.name for p in files} >= {"ray-cluster.yaml", "kuberay.yaml"}
    for p in files:
        assert site.check_cluster_file(p)
    kube = (ROOT / "docs" / "cluster" / "kuberay.yaml").read_text()
    launcher = (ROOT / "docs" / "cluster" / "ray-cluster.yaml").read_text()
    for text, match in ((kube + "\n  : : bad", "not valid YAML"),
                        (kube.replace("image:", "picture:"), "image"),
                        (kube.replace("maxReplicas: 64", "maxReplicas: 1"), "maxReplicas"),
                        (kube.replace('"2.60.0"', "latest"), "rayVersion"),
                        (launcher.replace("cluster_name:", "name:"), "cluster_name"),
                        (launcher.replace("--dashboard-host=127.0.0.1 ", ""), "loopback")):
        bad = tmp_path / "bad.yaml"
        bad.write_text(text)
        with pytest.raises(ValueError, match=match):
            site.check_cluster_file(bad)
    md = (ROOT / "docs" / "distributed.md").read_text()
    assert "<!-- file: cluster/kuberay.yaml -->" in md  # the page shows the checked file
