"""The rule catalog: every rule known from its module's name, without importing any."""

from __future__ import annotations

import subprocess
import sys

from torchlint.registry import RuleMetas, all_rules, catalog, module_name_for


def test_catalog_agrees_with_the_rule_classes() -> None:
    assert catalog() == {rule.CODE: rule.NAME for rule in all_rules()}
    for rule in all_rules():
        assert rule.__module__.rsplit(".", 1)[-1] == module_name_for(rule.CODE, rule.NAME)


def test_selection_and_configuration_do_not_import_rules() -> None:
    script = (
        "import sys\n"
        "from torchlint.config import Config\n"
        "Config().with_overrides(select=('TL001', 'unsynchronized-timing'), ignore=('TL00',))\n"
        "from torchlint.registry import RuleMetas\n"
        "metas = RuleMetas()\n"
        "print(sorted(m for m in sys.modules if m.startswith(('libcst', 'torchlint.rules'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_rule_metas_load_on_first_use() -> None:
    metas = RuleMetas()
    assert [m.code for m in metas] == [rule.CODE for rule in all_rules()]
    assert len(metas) == len(all_rules()) and metas[0].code == all_rules()[0].CODE
