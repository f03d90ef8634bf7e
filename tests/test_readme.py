"""The README documents every rule and the commands it promises exist."""

from __future__ import annotations

from pathlib import Path

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
