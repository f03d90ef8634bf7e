"""TL004's messages name the object, where its eval mode comes from, and the fix."""

from __future__ import annotations

import textwrap

from torchlint import api


def messages(source: str) -> list[str]:
    return [f.message for f in api.check_source(textwrap.dedent(source), "evaluate.py") if f.code == "TL004"]


def test_volatile_inputs_say_that_volatile_has_no_effect() -> None:
    [message] = messages(
        """
        from torch.autograd import Variable
        def score(net, x):
            return net(Variable(x, volatile=True)).max(1)
        """
    )
    assert message.startswith("`net(...)` runs on a `Variable(..., volatile=True)` input with gradients enabled")
    assert "`volatile=True` has no effect since PyTorch 0.4: wrap the call in `with torch.no_grad():`" in message


def test_a_serving_hook_names_the_setup_that_put_the_model_in_eval_mode() -> None:
    [message] = messages(
        """
        class Handler:
            def initialize(self, context):
                self.model.eval()
            def handle(self, data, context):
                return self.model(data)
        """
    )
    assert message.startswith("`self.model(...)` runs after `self.model.eval()` in `initialize()`, per request,")
    assert message.endswith("wrap the call in `with torch.no_grad():` (or `torch.inference_mode()`)")
