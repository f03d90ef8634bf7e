"""The README documents every rule and the commands it promises exist."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from torchlint.registry import all_rules

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def test_rule_table_lists_every_rule_with_its_doc_page() -> None:
    for rule in all_rules():
        assert f"| [{rule.CODE}](docs/rules/{rule.CODE}.md) | {rule.NAME} |" in README, rule.CODE


def test_the_two_commands_exist() -> None:
    root = Path(__file__).resolve().parent.parent
    for script in ("scripts/check-fixtures.sh", "scripts/test.sh"):
        assert f"bash {script}" in README
        assert (root / script).is_file()
    assert "scripts/test.sh" in (root / ".ci" / "run").read_text()


def pre_commit_snippet(text: str) -> tuple[dict, str]:
    """The `.pre-commit-config.yaml` block that installs torchlint, and the text after it."""
    for block in re.finditer(r"```yaml\n(?P<body>.*?)```(?P<after>.*?)(?=\n#|\Z)", text, re.S):
        if "repo: https://github.com/torchlint/torchlint" in block["body"]:
            return yaml.safe_load(block["body"]), block["after"]
    raise LookupError("no pre-commit snippet")


@pytest.mark.parametrize("doc", ["README.md", "docs/integration.md"])
def test_pre_commit_snippet_pins_a_rev_that_exists(doc: str) -> None:
    import cfgv
    from pre_commit.clientlib import CONFIG_SCHEMA

    root = Path(__file__).resolve().parent.parent
    config, after = pre_commit_snippet((root / doc).read_text(encoding="utf-8"))
    cfgv.validate(config, CONFIG_SCHEMA)
    [repo] = config["repos"]
    assert [hook["id"] for hook in repo["hooks"]] == ["torchlint"]
    rev = str(repo["rev"])
    if re.fullmatch(r"v?\d+(\.\d+)+", rev):
        tags = subprocess.run(["git", "tag", "--list", rev], cwd=root, capture_output=True, text=True).stdout.split()
        assert tags == [rev], f"{doc} pins {rev}, a tag that this repository does not have"
    assert "release tag" in after and "commit" in after and "autoupdate" in after
