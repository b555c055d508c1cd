"""The documentation site's build-time pages (an MkDocs hook, ``mkdocs.yml``: ``hooks``).

* One page per registered game, ``games/<env_id>.md``: the env class docstring (options,
  action and observation tables, state dict, version), a seeded mid-game position drawn by
  the game's own view (``games/<env_id>.svg``), a code example that is run to draw it, the
  pretrained baseline's arena results (read from ``agents/data/ppo/<env_id>.json``) and links
  to the rules. ``games/index.md`` lists the games; the nav's ``Games`` and ``Rules``
  sections are filled from the registry, so a registered game gets its pages with no edit.
* ``<!-- readme: Title | Title -->`` in a page is replaced by those sections of README.md,
  ``<!-- games-table -->`` by the table of games and ``<!-- leaderboard -->`` by the
  benchmark leaderboard made from the reports shipped in ``card_envs/benchmark/data/``.
* :class:`ApiDocs`, a griffe extension (``mkdocs.yml``: mkdocstrings ``extensions``), turns
  the docstrings' reStructuredText habits (``literal``, roles, ``>>>`` examples, simple
  tables) into Markdown for the API reference and finds ``card_envs.agents`` in ``agents/``.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

from griffe import Extension

from card_envs.core.registry import manifests

ROOT = Path(__file__).resolve().parents[1]
README_MARK = re.compile(r"<!-- readme: (.+?) -->")
LEADERBOARD_MARK = "<!-- leaderboard -->"
GAMES_MARK = "<!-- games-table -->"
FILE_MARK = re.compile(r"<!-- file: (cluster/[\w.-]+\.yaml) -->")
CLUSTER_DIR = ROOT / "docs" / "cluster"
SEED = 7

# --- reStructuredText habits -> Markdown -------------------------------------------------

_ROLE = re.compile(r":(?:py:)?\w+:`(~?)([^`<]+?)(?:\s*<[^`>]+>)?`")
_LITERAL = re.compile(r"``((?:[^`\n]|\n(?!\n))+?)``")
_RULE = re.compile(r"^ *=+(?: +=+)+ *$")


def _role(m: re.Match[str]) -> str:
    target = m.group(2).strip()
    return f"`{target.rsplit('.', 1)[-1] if m.group(1) else target}`"


def _table(lines: list[str]) -> list[str]:
    """An RST simple table (rule, header, rule, rows, rule) as a Markdown table; rows whose
    first column is empty continue the row above."""
    spans = [m.span() for m in re.finditer(r"=+", lines[0])]

    def cells(line: str) -> list[str]:
        out = []
        for i, (a, _) in enumerate(spans):
            b = spans[i + 1][0] if i + 1 < len(spans) else len(line)
            out.append(line[a:b].strip())
        return out

    rows: list[list[str]] = []
    for line in lines[1:]:
        if _RULE.match(line) or not line.strip():
            continue
        c = cells(line)
        if rows and not c[0] and len(rows) > 1:
            rows[-1] = [f"{p} {q}".strip() for p, q in zip(rows[-1], c)]
        else:
            rows.append(c)
    md = [f"| {' | '.join(c.replace('|', '&#124;') for c in row)} |" for row in rows]
    return [md[0], "|" + "---|" * len(spans), *md[1:]]


def rst_to_markdown(text: str) -> str:
    """Docstring prose with ``literals``, Sphinx roles, doctest lines, ``::`` and RST simple
    tables, as Markdown."""
    lines, out, i = text.splitlines(), [], 0
    while i < len(lines):
        line = lines[i]
        if _RULE.match(line):
            j, rules = i + 1, 1
            while j < len(lines) and rules < 3:
                rules += bool(_RULE.match(lines[j]))
                j += 1
            out += ["", *_table(lines[i:j]), ""]
            i = j
            continue
        if line.lstrip().startswith(">>>"):
            j = i
            while j < len(lines) and lines[j].strip():
                j += 1
            out += ["```pycon", *(re.sub(r"\s*# doctest:.*$", "", x.strip())
                                  for x in lines[i:j]), "```"]
            i = j
            continue
        if line.rstrip().endswith("::") and not line.strip().startswith(".."):
            line = line.rstrip()[:-1]
        out.append(line)
        i += 1
    md = "\n".join(_merge_rows(out))
    md = _ROLE.sub(_role, md)
    parts = re.split(r"(```.*?```)", md, flags=re.S)  # leave code blocks alone
    return "".join(p if p.startswith("```") else _prose(p) for p in parts)


def _prose(text: str) -> str:
    """``literals`` as code spans; ``*`` between letters (``n*SP``) escaped outside them."""
    parts = re.split(r"(`[^`]*`)", _LITERAL.sub(r"`\1`", text))
    return "".join(p if p.startswith("`") else re.sub(r"(?<=\w)\*(?=\w)", r"\*", p)
                   for p in parts)


def _merge_rows(lines: list[str]) -> list[str]:
    """Pipe-table rows whose first cell is empty continue the row above (docstrings wrap long
    cells that way)."""
    out: list[str] = []
    for line in lines:
        cells = line.strip().split("|")[1:-1] if line.strip().startswith("|") else []
        prev = out[-1].strip().split("|")[1:-1] if out and out[-1].strip().startswith("|") \
            else []
        if cells and not cells[0].strip() and len(prev) == len(cells) and \
                not set(prev[0].strip()) <= set("-: "):
            merged = [f"{a.rstrip()} {b.strip()}".strip() for a, b in zip(prev, cells)]
            out[-1] = "| " + " | ".join(merged) + " |"
        else:
            out.append(line)
    return out


class ApiDocs(Extension):
    """Griffe extension of the API reference: every docstring through :func:`rst_to_markdown`;
    the sub-packages that live in other folders (``pyproject.toml``, ``package-dir``:
    ``card_envs.agents`` is ``agents/``) attached where they are imported from; and the
    package's ``__all__`` without its computed part (``*ENV_IDS``, the games' modules, made at
    import time), which static analysis cannot expand."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rst_to_markdown(obj.docstring.value)

    def on_module_members(self, *, mod: Any, **kwargs: Any) -> None:
        if mod.exports:
            mod.exports = [e for e in mod.exports if isinstance(e, str)]

    def on_package(self, *, pkg: Any, loader: Any, **kwargs: Any) -> None:
        for name, folder in package_dirs().items():
            parent, _, child = name.rpartition(".")
            if parent == pkg.path and child not in pkg.members:
                sub = loader.load(ROOT / folder, try_relative_path=False)
                if sub.name in loader.modules_collection.members:
                    loader.modules_collection.del_member(sub.name)
                pkg.set_member(child, sub)


def package_dirs() -> dict[str, str]:
    """``[tool.setuptools.package-dir]`` of pyproject.toml: sub-packages kept in other
    folders (``{"card_envs.agents": "agents"}``)."""
    import tomllib

    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())
    dirs = conf.get("tool", {}).get("setuptools", {}).get("package-dir", {})
    return {k: v for k, v in dirs.items() if "." in k}


# --- game pages --------------------------------------------------------------------------

def game_title(cls: type) -> tuple[str, str]:
    """(title, tagline) from the env docstring's first paragraph, ``Slide (``slide_v0``):
    end with the lowest total...``."""
    first = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())
    m = re.match(r"(?P<title>.+?) \(``\w+``\):? ?(?P<tag>.*)", first)
    if not m:
        return cls.__name__.removesuffix("Env"), first
    return m["title"], m["tag"][:1].upper() + m["tag"][1:]


def _run(code: str) -> tuple[dict[str, Any], str]:
    """Run an example as shown on the page; its namespace and what it printed."""
    ns: dict[str, Any] = {"__name__": "__docs_example__"}
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, "<docs example>", "exec"), ns)  # the snippet shown on the page
    return ns, buf.getvalue()


def example_code(env_id: str, steps: int) -> str:
    """The page's example: a seeded game, ``steps`` random legal moves, its picture."""
    return f'''import random
import card_envs

env = card_envs.make("{env_id}", render_mode="svg")
env.reset(seed={SEED})
rng = random.Random({SEED})
for _ in range({steps}):  # half of this game: random legal moves
    obs, reward, terminated, truncated, info = env.last()
    env.step(rng.choice(obs["action_mask"].nonzero()[0].tolist()))
svg = env.render()  # the picture above; in Jupyter, env.picture() shows it inline
print(env.agent_selection, "to move; legal:",
      [env.action_to_str(a) for a in env.last()[0]["action_mask"].nonzero()[0][:4]], "...")
'''


def game_length(env_id: str) -> int:
    """Moves in the seeded random game of the example (played to its end)."""
    import random

    import card_envs

    env = card_envs.make_raw(env_id)
    env.reset(seed=SEED)
    rng, n = random.Random(SEED), 0
    while not any(env.terminations.values()) and not any(env.truncations.values()):
        obs = env.last()[0]
        env.step(rng.choice(obs["action_mask"].nonzero()[0].tolist()))
        n += 1
    return n


def agent_example(env_id: str) -> str:
    """A whole game between the heuristic and random agents, each seat's result printed."""
    return f'''import card_envs
from card_envs.agents import make_agent

env = card_envs.make("{env_id}")
env.reset(seed={SEED})
players = dict(zip(env.possible_agents, (make_agent("heuristic", "{env_id}", seed=0),
                                         make_agent("random", "{env_id}", seed=1))))
for agent in env.agent_iter():
    obs, reward, terminated, truncated, info = env.last()
    env.step(None if terminated or truncated else players[agent].act(obs))
points, winners = env.game.outcome(env.state_array)   # per seat, in seat order
for seat, agent in enumerate(env.possible_agents):
    print(agent, type(players[agent]).__name__, "points", points[seat],
          "winner", bool(winners[seat]))
'''


def _facts(cls: type, m: Any) -> list[str]:
    env = cls()
    env.reset(seed=SEED)
    a = env.possible_agents[0]
    space = env.observation_space(a)["observation"]
    g = env.game
    return [
        f"| env id | `{m.env_id}` (short name `{m.name}`) |", "|---|---|",
        f"| version | `{g.version}` |",
        f"| players | {g.min_players}-{g.max_players} (default {g.default_players}) |",
        f"| actions (default options) | `Discrete({env.action_space(a).n})` |",
        f"| observation (default options) | `Box({space.dtype}, {space.shape})` + "
        f"`action_mask` |",
        f"| make | `card_envs.make(\"{m.env_id}\")`, `card_envs.{m.env_id}.env()` |",
        "",
    ]


def seats_strength(m: Any) -> list[str]:
    """The 3- and 4-seat baselines' win shares against ``n - 1`` heuristics, with
    ``mcts:ms=200`` in the same seat beside them."""
    rows = []
    for n in (3, 4):
        path = ROOT / "agents" / "data" / "ppo" / f"{m.env_id}_{n}p.json"
        if not path.is_file():
            continue
        arena = json.loads(path.read_text()).get("arena") or {}
        for key, who in (("heuristic", "ppo"), ("mcts:ms=200 vs heuristic", "mcts:ms=200")):
            r = arena.get(key)
            if r is None:
                continue
            cmd = (f"card-envs arena --game {m.name} --agents {who}" + ",heuristic" * (n - 1)
                   + f" --players {n} --games {r['games']} --seed {r['seed']}")
            rows.append(f"| {n} | `{who}` | **{r['win_rate']:.3f}** [{r['ci_low']:.3f}, "
                        f"{r['ci_high']:.3f}] | {1 / n:.3f} | {r['games']} | `{cmd}` |")
    if not rows:
        return []
    return ["At 3 and 4 seats `ppo` loads the network trained at that seat count "
            f"(`{m.env_id}_<n>p.safetensors`). Win share against `n - 1` heuristics:", "",
            "| seats | agent | win share (95% CI) | fair share | games | reproduce |",
            "|---|---|---|---|---|---|", *rows, ""]


def strength(m: Any) -> list[str]:
    """The shipped PPO baseline's measured arena results, as recorded beside its weights."""
    path = ROOT / "agents" / "data" / "ppo" / f"{m.env_id}.json"
    out = ["## Baselines' strength", ""]
    if path.is_file():
        meta = json.loads(path.read_text())
        info, arena = meta.get("info") or {}, meta.get("arena") or {}
        out += [f"The pretrained policy `ppo` (2 players, shipped in "
                f"`card_envs/agents/data/ppo/{m.env_id}.safetensors`) was trained from scratch "
                f"by `{info.get('command')}` (seed {info.get('seed')}, "
                f"{info.get('env_steps', 0) / 1e6:.1f} M env steps in "
                f"{info.get('wall_seconds', 0) / 60:.0f} minutes on 2 CPU cores). Its win rate "
                "over duplicate arena deals not used in training (2 players, Wilson 95% "
                "interval):", "",
                "| `ppo` against | win rate (95% CI) | games | reproduce |", "|---|---|---|---|"]
        for opp, r in arena.items():
            cmd = (f"card-envs arena --game {m.name} --agents ppo,{opp} --players 2 "
                   f"--games {r['games']} --seed {r['seed']}")
            out.append(f"| `{opp}` | **{r['win_rate']:.3f}** [{r['ci_low']:.3f}, "
                       f"{r['ci_high']:.3f}] | {r['games']} | `{cmd}` |")
        out += ["", f"Source: `agents/data/ppo/{m.env_id}.json` (`arena`), written by "
                "`python benchmarks/baselines.py`; all games side by side in "
                "[Training](../training.md#strength). Time-budgeted search "
                "(`mcts:ms=200`) depends on the machine's speed, so its rows vary between "
                "machines.", ""]
        curve = ROOT / "docs" / "images" / "training" / f"{m.env_id}.png"
        if curve.is_file():
            out += [f"![learning curve of the {m.env_id} baseline]"
                    f"(../images/training/{m.env_id}.png)", ""]
    else:
        out += ["No pretrained baseline is shipped for this game.", ""]
    out += seats_strength(m)
    out += [f"The search agent against the heuristic: `python benchmarks/ladder.py` plays "
            f"`{m.bench.ladder_budget}` against `heuristic` (target: "
            f"{m.bench.ladder_target}) and prints the table.", ""]
    return out


def doc_links(md: str, base: str) -> str:
    """`` `docs/rules/slide.md` `` as a link to that page (``base``: the way to the docs root
    from the page)."""
    def link(match: re.Match[str]) -> str:
        path = match.group(1)
        return f"[`{path}`]({base}{path})" if (ROOT / "docs" / path).is_file() else match[0]

    return re.sub(r"`docs/([\w/.-]+\.md)`", link, md)


def _docstring_body(cls: type) -> str:
    body = (cls.__doc__ or "").strip().split("\n\n", 1)
    return doc_links(rst_to_markdown(body[1] if len(body) > 1 else ""), "../")


def game_page(m: Any) -> tuple[str, str]:
    """(markdown, svg) of one game's page."""
    cls = m.env_class()
    title, tagline = game_title(cls)
    steps = game_length(m.env_id) // 2
    code = example_code(m.env_id, steps)
    ns, printed = _run(code)
    svg = ns["svg"]
    agents = agent_example(m.env_id)
    _, result = _run(agents)
    rules = ROOT / "docs" / "rules" / f"{m.name}.md"
    lines = [f"# {title}", "", f"*{tagline}*" if tagline else "", "", *_facts(cls, m)]
    if rules.is_file():
        lines += [f"The rules, exactly as the engine implements them: "
                  f"[{title} rules](../rules/{m.name}.md).", ""]
    lines += ["## A position", "",
              f"![{title}, move {steps} of a seeded random game]({m.env_id}.svg)", "",
              "Drawn by this code (run when the site is built):", "",
              "```python", code.rstrip(), "```", "", "```text", printed.rstrip(), "```", "",
              "## Playing with the agents", "",
              "```python", agents.rstrip(), "```", "", "```text", result.rstrip(), "```", "",
              "`card_envs.agents.make_agent(spec, env_id)` gives `random`, `heuristic`, "
              "`mcts` (search, `mcts:ms=200` or `mcts:iterations=2000`) and `ppo` (the "
              "pretrained policy, needs torch); see [the arena](../arena.md).", "",
              "## Environment", "", _docstring_body(cls), "", *strength(m)]
    return "\n".join(lines) + "\n", svg


def games_table(base: str = "") -> str:
    """The games, linked to their pages and rules (``base``: the page's way to the docs root)."""
    rows = ["| game | env id | players | actions | rules |", "|---|---|---|---|---|"]
    for m in manifests():
        cls = m.env_class()
        g = cls.game_class
        env = cls()
        env.reset(seed=SEED)
        n = env.action_space(env.possible_agents[0]).n
        title, _ = game_title(cls)
        rules = (f"[rules]({base}rules/{m.name}.md)" if (ROOT / "docs" / "rules" /
                                                   f"{m.name}.md").is_file() else "")
        rows.append(f"| [{title}]({base}games/{m.env_id}.md) | `{m.env_id}` | "
                    f"{g.min_players}-{g.max_players} | {n} | {rules} |")
    return "\n".join(rows)


def readme_sections(titles: list[str]) -> str:
    """Those ``## `` sections of README.md, links made relative to the docs folder."""
    text = (ROOT / "README.md").read_text()
    found = {s.split("\n", 1)[0].strip(): s for s in re.split(r"^## ", text, flags=re.M)[1:]}
    out = []
    for t in titles:
        if t not in found:
            raise KeyError(f"README.md has no section {t!r}")
        out.append("## " + found[t].rstrip())
    return doc_links(re.sub(r"\]\(docs/", "](", "\n\n".join(out)), "")


# --- cluster recipes (docs/cluster/*.yaml): parsed and checked by every docs build ----------

def _need(doc: Any, path: str, kind: type | tuple[type, ...], where: str) -> Any:
    """``doc[a][b]...`` for ``path`` "a.b..." of type ``kind``, else ValueError naming it."""
    cur = doc
    for key in path.split("."):
        if not isinstance(cur, dict) or key not in cur:
            raise ValueError(f"{where}: missing {path!r}")
        cur = cur[key]
    if not isinstance(cur, kind):
        raise ValueError(f"{where}: {path!r} must be {kind}, got {type(cur).__name__}")
    return cur


def check_cluster_file(path: Path) -> list[Any]:
    """Parse a cluster recipe (YAML, one or more documents) and check what Ray's cluster
    launcher or the KubeRay operator needs; returns the documents (ValueError if wrong)."""
    import yaml

    where = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    try:
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    except yaml.YAMLError as e:
        raise ValueError(f"{where}: not valid YAML: {e}") from None
    if not docs:
        raise ValueError(f"{where}: empty")
    for doc in docs:
        if not isinstance(doc, dict):
            raise ValueError(f"{where}: a document must be a mapping")
        if "apiVersion" in doc:  # a KubeRay resource
            if doc["apiVersion"] != "ray.io/v1" or doc.get("kind") not in ("RayCluster",
                                                                           "RayJob"):
                raise ValueError(f"{where}: expected apiVersion ray.io/v1, kind RayCluster or "
                                 "RayJob")
            _need(doc, "metadata.name", str, where)
            spec = doc["spec"].get("rayClusterSpec", doc["spec"]) if doc["kind"] == "RayJob" \
                else _need(doc, "spec", dict, where)
            if not re.fullmatch(r"\d+\.\d+\.\d+", str(spec.get("rayVersion", ""))):
                raise ValueError(f"{where}: spec.rayVersion must be a version like 2.60.0")
            groups = [_need(spec, "headGroupSpec", dict, where)] + list(
                _need(spec, "workerGroupSpecs", list, where))
            for g in groups:
                cs = _need(g, "template.spec.containers", list, where)
                if not cs or not all(isinstance(c, dict) and c.get("image") and c.get("name")
                                     for c in cs):
                    raise ValueError(f"{where}: every pod needs containers with a name and an "
                                     "image")
            for g in groups[1:]:
                _need(g, "groupName", str, where)
                lo, n, hi = (int(g.get(k, 0)) for k in ("minReplicas", "replicas",
                                                         "maxReplicas"))
                if not 0 <= lo <= n <= hi:
                    raise ValueError(f"{where}: minReplicas <= replicas <= maxReplicas")
        else:  # Ray's cluster launcher
            _need(doc, "cluster_name", str, where)
            provider = _need(doc, "provider", dict, where)
            _need(provider, "type", str, where)
            if provider["type"] == "local":
                _need(provider, "head_ip", str, where)
                _need(provider, "worker_ips", list, where)
            for key in ("head_start_ray_commands", "worker_start_ray_commands"):
                cmds = _need(doc, key, list, where)
                if not any("ray start" in str(c) for c in cmds):
                    raise ValueError(f"{where}: {key} must run `ray start`")
            if not any("--dashboard-host=127.0.0.1" in str(c)
                       for c in doc["head_start_ray_commands"]):
                raise ValueError(f"{where}: keep the dashboard on loopback "
                                 "(--dashboard-host=127.0.0.1)")
    return docs


def on_pre_build(config: Any) -> None:
    """Check every cluster recipe the guides show (a broken one fails the build)."""
    for path in sorted(CLUSTER_DIR.glob("*.yaml")):
        check_cluster_file(path)


# --- MkDocs events -----------------------------------------------------------------------

def on_config(config: Any) -> Any:
    """Fill the nav's ``Games`` and ``Rules`` sections from the registry."""
    for item in config.nav or []:
        if not isinstance(item, dict):
            continue
        if "Games" in item:
            item["Games"] = [{"Overview": "games/index.md"}] + [
                {game_title(m.env_class())[0]: f"games/{m.env_id}.md"} for m in manifests()]
        if "Rules" in item:
            item["Rules"] = [{game_title(m.env_class())[0]: f"rules/{m.name}.md"}
                             for m in manifests()
                             if (ROOT / "docs" / "rules" / f"{m.name}.md").is_file()]
    return config


def on_files(files: Any, config: Any) -> Any:
    """Add the generated game pages and pictures."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, "games/index.md", content=(
        "# Games\n\nEvery game is a PettingZoo AEC environment (`card_envs.make(env_id)`), a "
        "batched engine (`card_envs.vector.make`) and a Gymnasium single-seat view; each page "
        "below has its observation and action tables, a position and the baselines' "
        f"measured strength.\n\n{GAMES_MARK}\n")))
    for m in manifests():
        page, svg = game_page(m)
        files.append(File.generated(config, f"games/{m.env_id}.md", content=page))
        files.append(File.generated(config, f"games/{m.env_id}.svg", content=svg))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Expand the README, games-table and file markers (a file marker shows a checked
    cluster recipe as a YAML block)."""
    markdown = FILE_MARK.sub(
        lambda m: "```yaml\n" + (ROOT / "docs" / m.group(1)).read_text().rstrip() + "\n```",
        markdown)
    markdown = README_MARK.sub(
        lambda m: readme_sections([t.strip() for t in m.group(1).split("|")]), markdown)
    if LEADERBOARD_MARK in markdown:
        from card_envs.benchmark import markdown as leaderboard

        markdown = markdown.replace(LEADERBOARD_MARK, leaderboard())
    if GAMES_MARK in markdown:
        base = "../" * page.file.src_uri.count("/")
        markdown = markdown.replace(GAMES_MARK, games_table(base))
    return markdown
