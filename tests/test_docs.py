"""Rule documentation pages are generated from the rules and cannot drift from them."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from torchlint import docs
from torchlint.cli import main
from torchlint.registry import all_rules
from torchlint.rule import RULE_DOC_URL


def test_committed_rule_docs_are_up_to_date(repo: Path) -> None:
    stale = docs.stale(repo / "docs" / "rules", all_rules())
    assert not stale, f"out of date: {stale}; run `torchlint docs` and commit docs/rules"


def test_every_rule_has_a_page_at_its_help_url(repo: Path) -> None:
    for rule in all_rules():
        url = RULE_DOC_URL.format(code=rule.CODE)
        relative = url.split("/blob/main/", 1)[1]
        assert (repo / relative).is_file()


def test_page_content_comes_from_the_rule() -> None:
    for rule in all_rules():
        page = docs.rule_page(rule)
        assert page.startswith(f"# {rule.CODE} {rule.NAME}\n")
        assert rule.SUMMARY in page and rule.doc() in page
        assert "# expect:" not in page
        for example in rule.examples("invalid") + rule.examples("valid"):
            assert docs.strip_markers(example.code).rstrip("\n") in page
    index = docs.index_page(all_rules())
    assert all(f"[{rule.CODE}]({rule.CODE}.md)" in index for rule in all_rules())


def test_strip_markers() -> None:
    code = "x = 1\nopt.step()  # expect: TL001\ny()  # expect: TL001, TL003 also this\n"
    assert docs.strip_markers(code) == "x = 1\nopt.step()\ny()  # also this\n"


def test_docs_command_writes_checks_and_prunes(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "rules"
    assert runner.invoke(main, ["docs", "--check", "-o", str(out)]).exit_code == 1
    assert runner.invoke(main, ["docs", "-o", str(out)]).exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == sorted([f"{r.CODE}.md" for r in all_rules()] + ["README.md"])
    assert runner.invoke(main, ["docs", "--check", "-o", str(out)]).exit_code == 0
    # A page of a rule that no longer exists is removed; a hand-written page is kept.
    (out / "TL998.md").write_text(docs.GENERATED + "\n")
    (out / "TL997.md").write_text("hand-written\n")
    (out / "TL001.md").write_text("edited\n")
    check = runner.invoke(main, ["docs", "--check", "-o", str(out)])
    assert check.exit_code == 1 and "TL998.md" in check.output and "TL001.md" in check.output
    runner.invoke(main, ["docs", "-o", str(out)])
    assert not (out / "TL998.md").exists() and (out / "TL997.md").exists()
    assert (out / "TL001.md").read_text() == docs.rule_page(all_rules()[0])
